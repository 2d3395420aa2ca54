// The Cloudflare file limit: the build counts the files `wrangler deploy` would upload, as wrangler
// itself lists them, and refuses a release past the plan's limit, naming the limit, the count and
// the ways out, while the last good release stays served.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { assetLimitProblem, uploadedAssetFiles } from '../../src/build/hosts/cloudflare-assets.ts';
import { DEPLOY_REDIRECT } from '../../src/build/astro/wrangler-deploy-config.ts';
import { servedRelease } from '../../src/release/releases.ts';
import { buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT, copyFixture, fileTree } from '../support/helpers.ts';
import { WRANGLER_REDIRECT_LOCK, exclusively } from '../support/exclusive.ts';

const work = workDir('cloudflare-assets');
const dist = path.join(work, 'dist');
const redirect = path.join(ROOT, DEPLOY_REDIRECT);
let redirectBefore: Buffer | undefined;

beforeAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  // The build points the project's `wrangler deploy` at itself; the operator's redirect is put back after.
  redirectBefore = fs.existsSync(redirect) ? fs.readFileSync(redirect) : undefined;
  const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'cloudflare' });
  expect(built.status, built.stderr).toBe(0);
}, 120_000);

afterAll(() => {
  if (redirectBefore) fs.writeFileSync(redirect, redirectBefore);
  else fs.rmSync(redirect, { force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

/** The files wrangler's own asset manifest holds, from `wrangler deploy --dry-run`'s debug log: every path it read, less folders and those it ignores. */
function wranglersUpload(config: string): string[] {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'wrangler', 'wrangler-dist', 'cli.js'), 'deploy', '--dry-run', '--config', config], {
    cwd: ROOT, encoding: 'utf8',
    env: { ...process.env, WRANGLER_LOG: 'debug', WRANGLER_SEND_METRICS: 'false', WRANGLER_HIDE_BANNER: 'true', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
  });
  expect(run.status, run.stderr + run.stdout).toBe(0);
  const lines = (run.stdout + run.stderr).split('\n');
  const at = lines.findIndex((l) => /Read \d+ files? from the assets directory/.test(l));
  expect(at, 'wrangler lists the assets it read').toBeGreaterThan(-1);
  const dir = /from the assets directory (.+)$/.exec(lines[at]!)![1]!.trim();
  const read = lines.slice(at + 1).filter((l) => l.startsWith('/')).map((l) => l.slice(1));
  const ignored = new Set(lines.filter((l) => l.startsWith('Ignoring asset: ')).map((l) => l.slice('Ignoring asset: '.length)));
  return read.filter((f) => !ignored.has(f) && fs.statSync(path.join(dir, f)).isFile()).sort();
}

describe('the Cloudflare file limit', () => {
  test('the build counts exactly the files wrangler would upload', () => {
    const ours = uploadedAssetFiles(path.join(dist, 'client')).sort();
    expect(ours).toEqual(wranglersUpload(path.join(dist, 'server', 'wrangler.json')));
    // Not served, not uploaded: the asset server's own rules files.
    expect(ours).not.toContain('_headers');
    expect(ours).not.toContain('.assetsignore');
  }, 60_000);

  // The redirect is @cloudflare/vite-plugin's format (src/build/astro/README.md); its fallback is wrangler's own --config.
  test('the redirect points `wrangler deploy` at the served release; ASTRO_FALLBACK=wrangler-redirect names --config instead', () => exclusively(WRANGLER_REDIRECT_LOCK, () => {
    const config = path.join(dist, 'server', 'wrangler.json');
    // A build of its own: every Cloudflare build, of this file's other tests or another file's
    // (which the lock holds off meanwhile), points the project's redirect at its own release.
    const served = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'cloudflare' });
    expect(served.status, served.stderr).toBe(0);
    expect(path.resolve(path.dirname(redirect), (JSON.parse(fs.readFileSync(redirect, 'utf8')) as { configPath: string }).configPath)).toBe(config);
    const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'cloudflare', ASTRO_FALLBACK: 'wrangler-redirect' });
    expect(built.status, built.stderr).toBe(0);
    expect(built.stdout).toContain(`Deploy the served release with \`npx wrangler deploy --config ${path.relative(ROOT, config)}\`.`);
    expect(fs.existsSync(redirect)).toBe(false);
    // What that command deploys: this release's files, as wrangler lists them.
    expect(wranglersUpload(config)).toEqual(uploadedAssetFiles(path.join(dist, 'client')).sort());
  }), 120_000);

  test('past CLOUDFLARE_ASSET_LIMIT the build fails, names limit, count and ways out, and the last release stays served', () => {
    const count = uploadedAssetFiles(path.join(dist, 'client')).length;
    const served = servedRelease(dist);
    const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'cloudflare', CLOUDFLARE_ASSET_LIMIT: String(count - 1) });
    expect(built.status).toBe(1);
    expect(built.stderr).toContain(`build failed: this Cloudflare build has ${count} asset files for 7 profiles, over the ${count - 1} files a Worker version may upload`);
    expect(built.stderr).toContain('CLOUDFLARE_ASSET_LIMIT=100000');
    expect(built.stderr).toContain('Cloudflare\'s CDN in front');
    expect(built.stderr).not.toMatch(/\n\s+at /);
    expect(servedRelease(dist)).toBe(served);
  }, 120_000);

  test('an unreadable limit stops the build before it starts', () => {
    const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'cloudflare', CLOUDFLARE_ASSET_LIMIT: '20k' });
    expect(built.status).toBe(2);
    expect(built.stderr.trim()).toBe('build: CLOUDFLARE_ASSET_LIMIT must be a whole number of files (20000 on Workers Free, 100000 on Workers Paid), not `20k`');
  });
});

describe('Cloudflare builds and the render engine', () => {
  const whole = (name: string, env: Record<string, string>) => {
    const to = path.join(work, name, 'dist');
    const r = buildFixture(FIXTURE, to, { DEPLOY_TARGET: 'cloudflare', PROFILES_INCREMENTAL: '0', ...env });
    expect(r.status, `${r.stderr}${r.stdout}`).toBe(0);
    return { dist: to, stdout: r.stdout };
  };

  test('a Cloudflare build renders with the kept renderer, and writes the files `astro build` writes', () => {
    const engine = whole('engine', {});
    expect(engine.stdout).toMatch(/profile pages with (the renderer `astro build` compiled|Astro's kept renderer)/);
    const astro = whole('astro', { ASTRO_FALLBACK: 'kept-renderer' });
    expect(astro.stdout).toContain('profile pages with `astro build` (');
    const [a, b] = [fileTree(path.join(astro.dist, 'client')), fileTree(path.join(engine.dist, 'client'))];
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [file, bytes] of a) expect(b.get(file)!.equals(bytes), file).toBe(true);
    // The adapter's file beside the pages (keep-renderer.ts ADAPTER_CLIENT_FILES), and a profile page.
    expect(a.has('.assetsignore')).toBe(true);
    expect(a.has(path.join('p', 'kate.html'))).toBe(true);
    // The Worker and its deploy config, byte for byte; its source map names the sources from where it was built.
    const [sa, sb] = [fileTree(path.join(astro.dist, 'server')), fileTree(path.join(engine.dist, 'server'))];
    expect([...sb.keys()].sort()).toEqual([...sa.keys()].sort());
    for (const file of ['entry.mjs', 'wrangler.json']) expect(sb.get(file)!.equals(sa.get(file)!), file).toBe(true);
  }, 120_000);

  test('a first build of new code stopped by bad content, or killed in its compile, leaves `wrangler deploy` pointed at the served release', () => exclusively(WRANGLER_REDIRECT_LOCK, () => {
    const served = whole('served', {});
    const before = fs.readFileSync(redirect, 'utf8');
    expect(path.resolve(path.dirname(redirect), (JSON.parse(before) as { configPath: string }).configPath)).toBe(path.join(served.dist, 'server', 'wrangler.json'));
    const { parent, content } = copyFixture('cloudflare-bad');
    try {
      const bob = path.join(content, 'profiles', 'bob.yaml');
      fs.writeFileSync(bob, fs.readFileSync(bob, 'utf8').replace(/^createdAt: .*$/m, 'createdAt: yesterday'));
      // KEPT_RENDERER=0: the code is compiled anew, in a process of its own, as for new code; the
      // compile killed once it has written its files (by the OOM killer, say), which leaves it no
      // way to put the redirect back itself: the build does, however the compile ended.
      const bad = buildFixture(content, served.dist, { DEPLOY_TARGET: 'cloudflare', KEPT_RENDERER: '0', BUILD_FAULT: 'compiled' });
      expect(bad.status).toBe(1);
      expect(bad.stderr).toMatch(/bob\.yaml:\d+/);
      expect(bad.stderr).toMatch(/BUILD_FAULT: SIGKILL at compiled/);
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
    // The compile pointed it at its scratch folder, gone now: put back.
    expect(fs.readFileSync(redirect, 'utf8')).toBe(before);
    // A whole build killed during its compile left it naming the compile's scratch folder: the next
    // Cloudflare build, even one that stops at bad content, points it at the served release again.
    fs.writeFileSync(redirect, JSON.stringify({ configPath: '../../node_modules/.cache/profile-lookup/renderers/cloudflare-x.astro-out.1.tmp/server/wrangler.json', auxiliaryWorkers: [] }));
    const { parent: p2, content: c2 } = copyFixture('cloudflare-bad2');
    try {
      fs.writeFileSync(path.join(c2, 'profiles', 'bob.yaml'), 'displayName: [unclosed\n');
      expect(buildFixture(c2, served.dist, { DEPLOY_TARGET: 'cloudflare' }).status).toBe(1);
    } finally {
      fs.rmSync(p2, { recursive: true, force: true });
    }
    expect(path.resolve(path.dirname(redirect), (JSON.parse(fs.readFileSync(redirect, 'utf8')) as { configPath: string }).configPath)).toBe(path.join(served.dist, 'server', 'wrangler.json'));
  }), 120_000);
});

describe('assetLimitProblem', () => {
  test('nothing to say at or under the limit', () => {
    expect(assetLimitProblem(20_000, 20_000, 9_990)).toBeUndefined();
  });
  test('on Workers Paid\'s limit it offers no larger plan', () => {
    const text = assetLimitProblem(100_001, 100_000, 49_990)!;
    expect(text).toMatch(/^this Cloudflare build has 100,001 asset files for 49,990 profiles, over the 100,000 files/);
    expect(text).not.toContain('on Workers Paid');
  });
});
