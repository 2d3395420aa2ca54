// An edit build renders its few pages with the pre-render code a full build kept
// (src/build/astro/keep-renderer.ts, src/build/astro/page-renderer.ts) instead of running `astro build`: the
// files must be the very bytes `astro build` writes, for the content it was kept from and for
// edited content alike. This is also the test that fails when an Astro upgrade changes the
// internals the renderer relies on.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ADAPTER_CLIENT_FILES, KEPT_CLIENT_DIR, KEPT_FILE, KEPT_RENDERERS, KEPT_SERVER_DIR, keepRenderer, keepRendererIn, markRendererUsed, pruneStore, readKept, rendererDir } from '../../src/build/astro/keep-renderer.ts';
import { openRenderer, pool, RendererUnavailable } from '../../src/build/astro/page-renderer.ts';
import { renderFingerprint } from '../../src/build/reuse/page-reuse.ts';
import { releasePath, servedRelease } from '../../src/release/releases.ts';
import { BUILD_EPOCH, TEST_SITE_URL, sharedBuild, workDir } from '../support/built-server.ts';
import { buildSite } from '../../scripts/support/serve-build.ts';
import { FIXTURE, ROOT, fileTree, readServedFile } from '../support/helpers.ts';

const WORK = workDir('page-renderer');
const ENV = { ...process.env, SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(BUILD_EPOCH) };
function run(script: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...ENV, ...env } });
  expect(r.status, `${script}:\n${r.stderr}${r.stdout}`).toBe(0);
  return r.stdout;
}

/** `astro build` of `content` keeping its renderer: its client folder, the renderer's, and how many profile pages Astro rendered. */
function keepingBuild(name: string, content: string, env: Record<string, string> = {}) {
  const dist = path.join(WORK, name, 'dist');
  const renderer = path.join(WORK, name, 'renderer');
  const line = /^BUILT (.*)$/m.exec(run('test/support/keep-renderer-build.ts', [content, dist, renderer], env));
  const { profilePagesWritten } = JSON.parse(line![1]!) as { profilePagesWritten: number };
  return { client: path.join(dist, 'client'), renderer, profilePagesWritten };
}

/** The files the renderer in `renderer` writes for `content`, in a process of its own: relative path → bytes. */
function renderWith(renderer: string, content: string, name: string, mode: string[] = []): Map<string, Buffer> {
  const out = path.join(WORK, name);
  const line = /^RENDERED (.*)$/m.exec(run('test/support/render-with-kept.ts', [renderer, content, out, ...mode]));
  const written = (JSON.parse(line![1]!) as { files: string[] }).files;
  const files = fileTree(out);
  expect([...files.keys()].sort()).toEqual([...written].sort());
  return files;
}

/** The pages Astro rendered into a client folder: all but its bundled assets and the copies of public/. */
function astroPages(client: string): Map<string, Buffer> {
  const publicFiles = new Set(fileTree(path.join(ROOT, 'public')).keys());
  return new Map([...fileTree(client)].filter(([file]) => !file.startsWith('_astro/') && !publicFiles.has(file)));
}

/** `files` that are also in `expected` with the very same bytes, and no file more. */
function expectSameFiles(actual: Map<string, Buffer>, expected: Map<string, Buffer>) {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [file, bytes] of expected) expect(actual.get(file)!.equals(bytes), file).toBe(true);
}

const only = (files: Map<string, Buffer>, keep: (file: string) => boolean) => new Map([...files].filter(([file]) => keep(file)));

let original: ReturnType<typeof keepingBuild>;
let edited: string;
beforeAll(() => {
  fs.rmSync(WORK, { recursive: true, force: true });
  original = keepingBuild('original', FIXTURE);
  // An edit: a renamed creator (her page and the home page change), a new profile, one removed.
  edited = path.join(WORK, 'edited-content');
  fs.cpSync(FIXTURE, edited, { recursive: true });
  const alice = path.join(edited, 'profiles', 'alice.yaml');
  fs.writeFileSync(alice, fs.readFileSync(alice, 'utf8').replace(/^displayName: .*$/m, 'displayName: "Alice Edited"'));
  fs.writeFileSync(path.join(edited, 'profiles', 'zoe.yaml'), 'displayName: Zoe\ncreatedAt: 2025-06-01T00:00:00Z\nbio: New here.\n');
  fs.rmSync(path.join(edited, 'profiles', 'frank.yaml'));
}, 120_000);
afterAll(() => fs.rmSync(WORK, { recursive: true, force: true }));

describe('rendering with the code a full build kept', () => {
  test('renderSite writes every page astro build wrote, byte for byte, and npm run build serves them', () => {
    const rendered = renderWith(original.renderer, FIXTURE, 'site');
    expect(rendered.has('p/alice.html') && rendered.has('index.html') && rendered.has('sitemap.xml')).toBe(true);
    expectSameFiles(rendered, astroPages(original.client));
    const shared = path.join(releasePath(sharedBuild().dist, servedRelease(sharedBuild().dist)!), 'client');
    for (const [file, bytes] of rendered) expect(readServedFile(path.join(shared, file)).equals(bytes), file).toBe(true);
  }, 60_000);

  test('profile pages and the home page alone are the same bytes', () => {
    const rendered = renderWith(original.renderer, FIXTURE, 'profiles', ['--profiles-only']);
    expectSameFiles(rendered, only(astroPages(original.client), (file) => file.startsWith('p/') || file === 'index.html'));
  }, 60_000);

  test('edited content renders as a full astro build of it does', () => {
    const full = keepingBuild('edited', edited);
    const rendered = renderWith(original.renderer, edited, 'site-edited');
    expect(rendered.get('p/alice.html')!.toString()).toContain('Alice Edited');
    expect(rendered.has('p/zoe.html')).toBe(true);
    expect(rendered.has('p/frank.html')).toBe(false);
    expectSameFiles(rendered, astroPages(full.client));
    // In one process after other content, as `npm start`'s builder renders build after build: the
    // pages keep nothing of the first (frank's page, zoe's absent, the old home page would show).
    expectSameFiles(renderWith(original.renderer, edited, 'site-edited-after', ['--after', FIXTURE]), astroPages(full.client));
    expectSameFiles(renderWith(original.renderer, FIXTURE, 'site-after-edited', ['--after', edited]), astroPages(original.client));
    // The kept code holds no content: the pages' modules are the same bytes (the entry differs in
    // its manifest: this build's folders and a random key).
    expectSameFiles(fileTree(path.join(full.renderer, 'chunks')), fileTree(path.join(original.renderer, 'chunks')));
  }, 120_000);

  test('a renderer kept from other code, or none, is refused with the reason; one opened is marked used', async () => {
    const fingerprint = renderFingerprint(ROOT, TEST_SITE_URL);
    const keptFile = path.join(original.renderer, KEPT_FILE);
    fs.utimesSync(keptFile, 1000, 1000);
    await expect(openRenderer(original.renderer, { fingerprint: 'other', target: 'node' })).rejects.toMatchObject({ message: expect.stringMatching(/built from other code/), noneKept: false });
    await expect(openRenderer(original.renderer, { fingerprint, target: 'cloudflare' })).rejects.toThrow(RendererUnavailable);
    // None at all is a first build's normal case, which the build script does not mention.
    await expect(openRenderer(path.join(WORK, 'nowhere'), { fingerprint, target: 'node' })).rejects.toMatchObject({ message: expect.stringMatching(/no renderer kept/), noneKept: true });
    // Refused, it is not used; rendered with, it is (pruneStore keeps the renderers used last).
    expect(fs.statSync(keptFile).mtimeMs).toBe(1_000_000);
    const before = Date.now() - 1000;
    renderWith(original.renderer, FIXTURE, 'site-marked-used');
    expect(fs.statSync(keptFile).mtimeMs).toBeGreaterThan(before);
  });
});

describe('pages rendered several at a time', () => {
  test('after a page fails no page is started, and the failure is thrown once the pages under way have ended', async () => {
    // A full disk fails one page's write while others render: those must end before the renderer is
    // handed its next batch's index, or they fail again for a reason that is not the one.
    const started: number[] = [];
    let running = 0;
    let runningAtThrow = -1;
    const full = new Error('ENOSPC: no space left on device, write');
    const work = async (k: number) => {
      started.push(k);
      running++;
      // Each page ends two turns of the event loop later; page 5 fails after one, while pages 4, 6
      // and 7 render, and page 6 ends last.
      for (let turn = 0; turn < (k === 5 ? 1 : k === 6 ? 5 : 2); turn++) await new Promise((resolve) => setImmediate(resolve));
      running--;
      if (k === 5) throw full;
    };
    await expect(pool(Array.from({ length: 40 }, (_, k) => k), work, 4).catch((e: unknown) => { runningAtThrow = running; throw e; })).rejects.toBe(full);
    expect(runningAtThrow).toBe(0);
    // Pages 0-7 had started when page 5 failed (four at a time); none after.
    expect(started.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test('every page renders once when none fails', async () => {
    const done: number[] = [];
    await pool(Array.from({ length: 23 }, (_, k) => k), async (k) => { await Promise.resolve(); done.push(k); }, 4);
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, k) => k));
  });
});

describe('keeping the renderer', () => {
  test('pruning the store leaves the copy another build is making now, and removes what dead builds left', () => {
    const store = path.join(WORK, 'prune-store');
    fs.mkdirSync(store, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const [mine, theirs, left, old] = [`node-a.${process.pid}.tmp`, `node-b.${dead}.tmp`, 'node-c.tmp', 'node-d'];
    // KEPT_RENDERER=0 builds' own copies: a running build's stays, a killed one's goes; neither counts among the kept.
    const [ownMine, ownDead] = [`node-e.own-${process.pid}`, `node-f.own-${dead}`];
    for (const name of [mine, theirs, left]) fs.mkdirSync(path.join(store, name, 'chunks'), { recursive: true });
    for (const name of [ownMine, ownDead]) {
      fs.mkdirSync(path.join(store, name), { recursive: true });
      fs.writeFileSync(path.join(store, name, KEPT_FILE), '{}');
    }
    pruneStore(store, path.join(store, old));
    expect(fs.readdirSync(store).sort()).toEqual([mine, ownMine].sort());
  });

  const store = path.join(WORK, 'store');
  const server = path.join(WORK, 'fake-build', 'server');
  const integration = keepRenderer();
  const hook = (name: string) => integration.hooks[name as 'astro:build:generated'] as (params: unknown) => void;
  const warnings: string[] = [];
  const keep = (fingerprint: string, into = store) => {
    keepRendererIn({ dir: path.join(into, `node-${fingerprint}`), fingerprint, target: 'node' });
    try {
      hook('astro:build:generated')({ logger: { warn: (m: string) => warnings.push(m) } });
    } finally {
      keepRendererIn(undefined);
    }
  };

  /** What `astro build` leaves for the hook to keep: its folders told by `astro:config:done`, and the files in them. */
  const fakeAstroBuild = () => {
    // Nothing of another test's: its warnings, its store.
    warnings.length = 0;
    fs.rmSync(store, { recursive: true, force: true });
    const client = path.join(path.dirname(server), 'client');
    hook('astro:config:done')({ config: { build: { server: new URL(`file://${server}/`), client: new URL(`file://${client}/`) }, outDir: new URL(`file://${WORK}/`) }, buildOutput: 'server' });
    fs.mkdirSync(path.join(server, '.prerender', 'chunks'), { recursive: true });
    // The adapter's file beside the pages is kept; the pages are not.
    fs.mkdirSync(path.join(client, 'p'), { recursive: true });
    fs.writeFileSync(path.join(client, '.assetsignore'), 'wrangler.json\n');
    fs.writeFileSync(path.join(client, 'p', 'alice.html'), '<!doctype html>');
    fs.writeFileSync(path.join(server, '.prerender', 'prerender-entry.abc.mjs'), 'export {};');
    fs.writeFileSync(path.join(server, '.prerender', 'chunks', 'page.mjs'), 'export {};');
    fs.writeFileSync(path.join(server, 'entry.mjs'), 'export {};');
  };

  test('only when asked, in a folder of its own, and the store keeps the newest few', () => {
    fakeAstroBuild();
    hook('astro:build:generated')({ logger: { warn: (m: string) => warnings.push(m) } });
    expect(fs.existsSync(store)).toBe(false);

    for (let k = 1; k <= KEPT_RENDERERS + 1; k++) {
      keep(`f${k}`);
      // Kept in order, a second apart: the store goes by age.
      fs.utimesSync(path.join(store, `node-f${k}`, KEPT_FILE), 1000 + k, 1000 + k);
    }
    const kept = fs.readdirSync(store).sort();
    expect(kept).toEqual(Array.from({ length: KEPT_RENDERERS }, (_, i) => `node-f${i + 2}`));
    const dir = path.join(store, kept.at(-1)!);
    expect(readKept(dir, { fingerprint: `f${KEPT_RENDERERS + 1}`, target: 'node' })).toMatchObject({ entry: 'prerender-entry.abc.mjs' });
    expect(fs.readdirSync(dir).sort()).toEqual(['chunks', KEPT_CLIENT_DIR, KEPT_FILE, 'prerender-entry.abc.mjs', KEPT_SERVER_DIR].sort());
    expect(fs.readdirSync(path.join(dir, KEPT_CLIENT_DIR))).toEqual(ADAPTER_CLIENT_FILES);
    expect(fs.readFileSync(path.join(dir, KEPT_CLIENT_DIR, '.assetsignore'), 'utf8')).toBe('wrangler.json\n');
    // The server's code beside it, without the pre-render code a second time.
    expect(fs.readdirSync(path.join(dir, KEPT_SERVER_DIR))).toEqual(['entry.mjs']);
    // Astro removes its folder after the hook: still there for it.
    expect(fs.existsSync(path.join(server, '.prerender', 'chunks', 'page.mjs'))).toBe(true);
    expect(warnings).toEqual([]);
  });

  test('the store keeps the renderers used last: one in use is not pushed out by others kept since', () => {
    fakeAstroBuild();
    const used = path.join(WORK, 'used-store');
    const keepIn = (fingerprint: string) => keep(fingerprint, used);
    for (let k = 1; k <= KEPT_RENDERERS; k++) {
      keepIn(`f${k}`);
      fs.utimesSync(path.join(used, `node-f${k}`, KEPT_FILE), 1000 + k, 1000 + k);
    }
    // f1, kept first, is used by a build: the next one kept pushes out f2, kept first of the rest.
    markRendererUsed(path.join(used, 'node-f1'));
    keepIn('g');
    expect(fs.readdirSync(used).sort()).toEqual(['node-f1', ...Array.from({ length: KEPT_RENDERERS - 2 }, (_, i) => `node-f${i + 3}`), 'node-g'].sort());
    // A folder with nothing kept in it is no use to mark, and marking it creates nothing.
    markRendererUsed(path.join(used, 'node-none'));
    expect(fs.existsSync(path.join(used, 'node-none'))).toBe(false);
  });

  test('a renderer that cannot be kept costs a warning, never the build', () => {
    fakeAstroBuild();
    const blocker = path.join(WORK, 'not-a-folder');
    fs.writeFileSync(blocker, '');
    keepRendererIn({ dir: path.join(blocker, 'node-x'), fingerprint: 'x', target: 'node' });
    try {
      expect(() => hook('astro:build:generated')({ logger: { warn: (m: string) => warnings.push(m) } })).not.toThrow();
    } finally {
      keepRendererIn(undefined);
    }
    expect(warnings.splice(0).join('\n')).toMatch(/could not keep the pre-render code \(.*\): edit builds will run `astro build`/);
  });

  test('a build whose pre-render code is not where Astro puts it keeps nothing and says so', () => {
    fakeAstroBuild();
    fs.rmSync(path.join(server, '.prerender'), { recursive: true, force: true });
    keep('missing');
    expect(fs.existsSync(path.join(store, 'node-missing'))).toBe(false);
    expect(warnings.join('\n')).toMatch(/no pre-render code in .*\.prerender: edit builds will run `astro build`/);
  });
});

describe('a first build', () => {
  // A SITE_URL of its own gives code no build kept a renderer for.
  const siteUrl = `https://first-build-${process.pid}.example`;
  const key = { fingerprint: renderFingerprint(ROOT, siteUrl), target: 'node' };
  afterAll(() => fs.rmSync(rendererDir(ROOT, key), { recursive: true, force: true }));

  test('says nothing about the renderer it had none of', () => {
    expect(readKept(rendererDir(ROOT, key), key)).toMatch(/no renderer kept/);
    const r = buildSite({ contentDir: FIXTURE, distDir: path.join(WORK, 'first', 'dist'), siteUrl, env: { SOURCE_DATE_EPOCH: String(BUILD_EPOCH) } });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/Rendering|pages/i);
    expect(r.stdout).not.toMatch(/no renderer kept|rendered by `astro build`|profile-lookup\/renderers/);
    // It kept one, which the next build of the same code renders with.
    expect(readKept(rendererDir(ROOT, key), key)).toMatchObject({ entry: expect.any(String) });
  }, 120_000);
});
