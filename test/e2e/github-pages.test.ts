// GitHub Pages publishes a folder (a branch, or an artifact of actions/deploy-pages) through Jekyll
// unless a `.nojekyll` file is at its root; Jekyll leaves out every name starting with `_` or `.`,
// `_astro/` (the only stylesheet) among them. GitHub sends `404.html` from that root for any
// unknown address, at any depth. The host cannot run here: these are its layout rules, checked on a
// DEPLOY_TARGET=static build, and Debian's `jekyll` where it is installed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NOJEKYLL_FILE } from '../../src/build/hosts/static-host-files.ts';
import { TEST_SITE_URL, buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE } from '../support/helpers.ts';

const work = workDir('github-pages');
const dist = path.join(work, 'dist');
/** The folder an operator publishes. */
const published = path.join(dist, 'client');
const jekyll = spawnSync('jekyll', ['--version']).error ? undefined : 'jekyll';
if (!jekyll) console.warn('github-pages.test.ts: the Jekyll check is skipped: jekyll is not installed (Debian: `apt-get install -y jekyll`).');

beforeAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  // As the site workflow builds for Pages: no .br/.gz copies, GitHub compresses by itself.
  const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'static', PRECOMPRESS: '0' });
  expect(built.status, built.stderr).toBe(0);
}, 120_000);
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Jekyll's default `exclude` of names (a segment starting with `.`, `_` or `#`, or ending with `~`), where no `include` lists them. */
const jekyllDrops = (file: string) => file.split('/').some((s) => /^[._#]/.test(s) || s.endsWith('~'));

/** The site's own addresses (root-relative, or absolute on SITE_URL) in a page's href, src and content attributes. */
function internalAddresses(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/\s(?:href|src|content)="([^"]+)"/g)) {
    const raw = m[1]!.replaceAll('&amp;', '&');
    if (raw.startsWith(TEST_SITE_URL)) out.push(raw.slice(TEST_SITE_URL.length) || '/');
    else if (/^[./]/.test(raw) && !raw.startsWith('//')) out.push(raw);
  }
  return out;
}

describe('GitHub Pages layout rules on a DEPLOY_TARGET=static build', () => {
  test('`.nojekyll` is at the root of the published folder, and is needed: every page\'s stylesheet is under a name Jekyll drops', () => {
    expect(fs.statSync(path.join(published, NOJEKYLL_FILE)).isFile()).toBe(true);
    const needed = new Set<string>();
    for (const page of ['index.html', 'docs.html', '404.html', 'p/alice.html']) {
      for (const address of internalAddresses(fs.readFileSync(path.join(published, page), 'utf8'))) needed.add(address.split(/[?#]/)[0]!.slice(1));
    }
    const dropped = [...needed].filter((f) => jekyllDrops(f) && fs.existsSync(path.join(published, f)));
    expect(dropped.some((f) => /^_astro\/.+\.css$/.test(f)), [...needed].join(', ')).toBe(true);
  });

  test('`404.html` is at the root: the site\'s 404 page, with only root-relative addresses, since GitHub sends it at any depth', async () => {
    const page = fs.readFileSync(path.join(published, '404.html'));
    // The page the Node server answers an unknown address with, byte for byte.
    const server = await fetch(`${sharedBuild().base}/p/nobody/at/depth`);
    expect(server.status).toBe(404);
    expect(Buffer.from(await server.arrayBuffer()).equals(page)).toBe(true);
    const addresses = internalAddresses(page.toString());
    expect(addresses.some((a) => /^\/_astro\/.+\.css$/.test(a))).toBe(true);
    expect(addresses.filter((a) => !a.startsWith('/'))).toEqual([]);
  });

  test.skipIf(!jekyll)('Debian\'s Jekyll, run as GitHub runs it when `.nojekyll` is absent, leaves out `_astro/`: Jekyll itself does not read `.nojekyll`', () => {
    const out = path.join(work, 'jekyll-site');
    const run = spawnSync(jekyll!, ['build', '--safe', '--quiet', '-s', published, '-d', out], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(out, 'p', 'alice.html'))).toBe(true);
    expect(fs.existsSync(path.join(out, '_astro'))).toBe(false);
    expect(fs.existsSync(path.join(out, NOJEKYLL_FILE))).toBe(false);
    // What GitHub publishes when it skips Jekyll is the folder as it is: the stylesheet included.
    expect(fs.readdirSync(path.join(published, '_astro')).some((f) => f.endsWith('.css'))).toBe(true);
  });
});
