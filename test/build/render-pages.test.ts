// Profile pages have one render engine (src/build/astro/render-pages.ts): the kept renderer, in
// this thread and worker threads. A first build of new code compiles with `astro build` and renders
// with what it kept; each Astro internal has a fallback (src/build/astro/fallbacks.ts). Every way
// must build the very same files.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { BATCH_PAGES, MAX_THREADS, OWN_THREAD_MAX_PAGES, RenderWorkers, WORKER_MIN_PAGES, renderBatches, renderInWorkers, renderShares, splitPages, threadCount } from '../../src/build/astro/render-pages.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { loadContent } from '../../src/content/load.ts';
import type { SiteIndex } from '../../src/model/site-index.ts';
import type { CreatorSummary, PublicUser } from '../../src/schemas/api.ts';
import { ASTRO_FALLBACKS, astroFallback } from '../../src/build/astro/fallbacks.ts';
import { TEST_SITE_URL, buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT, copyFixture, fileTree } from '../support/helpers.ts';
import { buildSite } from '../../scripts/support/serve-build.ts';
import { servedRelease } from '../../src/release/releases.ts';
import { PAGE_DATA_URL } from '../../src/build/astro/page-data.ts';
import { KEPT_FILE, rendererDir, rendererStore } from '../../src/build/astro/keep-renderer.ts';
import { renderFingerprint } from '../../src/build/reuse/page-reuse.ts';


const WORK = workDir('render-pages');
afterAll(() => fs.rmSync(WORK, { recursive: true, force: true }));

function build(name: string, env: Record<string, string>) {
  const dist = path.join(WORK, name, 'dist');
  const r = buildFixture(FIXTURE, dist, { PROFILES_INCREMENTAL: '0', ...env });
  expect(r.status, `${r.stderr}${r.stdout}`).toBe(0);
  return { dist, stdout: r.stdout, pid: r.pid };
}

/** What build process `pid` left in the renderer store: its own copy (`.own-<pid>`) or its compile's scratch; other builds may be running beside. */
const leftBy = (pid: number) => fs.readdirSync(rendererStore(ROOT)).filter((name) => name.endsWith(`.own-${pid}`) || name.includes(`.astro-out.${pid}.`));

/** The served release's client files equal the shared build's, byte for byte, and its server's file names too. */
function expectSameAsShared(dist: string) {
  const one = sharedBuild();
  const a = fileTree(path.join(one.dist, 'client'));
  const b = fileTree(path.join(dist, 'client'));
  expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
  for (const [file, bytes] of a) expect(b.get(file)!.equals(bytes), file).toBe(true);
  expect(a.has(path.join('p', 'kate.html'))).toBe(true);
  // Only the names, without the hashes of the chunks that name the folder they were built in.
  const release = (d: string) => path.join(`${d}.releases`, servedRelease(d)!);
  const serverFiles = (d: string) => [...fileTree(path.join(release(d), 'server')).keys()].map((f) => f.replace(/_[\w-]{8}\.mjs$/, '_*.mjs')).sort();
  expect(serverFiles(dist)).toEqual(serverFiles(one.dist));
  expect(serverFiles(dist)).toContain('entry.mjs');
  // The link and one release: nothing staged, no lock.
  expect(fs.readdirSync(path.dirname(dist)).sort()).toEqual(['dist', 'dist.releases']);
  expect(fs.readdirSync(`${dist}.releases`)).toEqual([servedRelease(dist)]);
}

describe('the render engine', () => {
  test('one thread per core only for big renders, and the pages split without loss', () => {
    expect(threadCount(100, {}, 8)).toBe(1);
    expect(threadCount(WORKER_MIN_PAGES - 1, {}, 8)).toBe(1);
    expect(threadCount(WORKER_MIN_PAGES, {}, 1)).toBe(1);
    expect(threadCount(WORKER_MIN_PAGES, {}, 2)).toBe(2);
    expect(threadCount(WORKER_MIN_PAGES * 10, {}, 64)).toBe(MAX_THREADS);
    expect(threadCount(5, { RENDER_THREADS: '3' })).toBe(3);
    expect(threadCount(2, { RENDER_THREADS: '3' })).toBe(2);
    const names = Array.from({ length: 10 }, (_, i) => `u${i}`);
    const parts = splitPages(names, 3);
    expect(parts.map((p) => p.length)).toEqual([3, 3, 4]);
    expect(parts.flat()).toEqual(names);
  });

  test('above OWN_THREAD_MAX_PAGES the build\'s own thread, which holds the whole index, renders no page', () => {
    const small = Array.from({ length: OWN_THREAD_MAX_PAGES }, (_, i) => i);
    const big = Array.from({ length: OWN_THREAD_MAX_PAGES + 1 }, (_, i) => i);
    const a = renderShares(small, 2);
    expect([a.own.length, a.others.length, a.workers]).toEqual([OWN_THREAD_MAX_PAGES / 2, OWN_THREAD_MAX_PAGES / 2, 1]);
    expect([...a.own, ...a.others]).toEqual(small);
    expect(renderShares(big, 2)).toEqual({ own: [], others: big, workers: 2 });
    // One thread in all: this one, whatever the size.
    expect(renderShares(big, 1)).toEqual({ own: big, others: [], workers: 0 });
  });

  test('worker threads get the pages in batches, each with only its own users and avatars', () => {
    const users = Array.from({ length: 23 }, (_, i) => ({ username: `u${i}` }) as unknown as PublicUser);
    const index: SiteIndex = {
      builtAt: '2026-01-01T00:00:00.000Z', siteUrl: 'https://x.example', profileCount: 23, decorationFiles: ['d.png'],
      creators: [{ username: 'u0' } as unknown as CreatorSummary], users, avatars: [['u3', 'a3.png'], ['u20', 'a20.png']],
    };
    const names = users.slice(2).map((u) => u.username);
    const batches = renderBatches(index, names, 2);
    // At least four a thread: 21 names in batches of 3.
    expect(batches.map((b) => b.names.length)).toEqual([3, 3, 3, 3, 3, 3, 3]);
    expect(batches.flatMap((b) => b.names)).toEqual(names);
    for (const b of batches) {
      expect(b.index.users.map((u) => u.username)).toEqual(b.names);
      expect(b.index.avatars.every(([n]) => b.names.includes(n))).toBe(true);
      expect([b.index.siteUrl, b.index.profileCount, b.index.creators]).toEqual([index.siteUrl, 23, []]);
    }
    expect(batches.flatMap((b) => b.index.avatars)).toEqual(index.avatars);
    // Never more than BATCH_PAGES a batch.
    const many = Array.from({ length: BATCH_PAGES * 9 }, (_, i) => `n${i}`);
    expect(Math.max(...renderBatches({ ...index, users: [], avatars: [] }, many, 2).map((b) => b.names.length))).toBe(BATCH_PAGES);
  });

  test('a misspelt fallback is refused, not ignored', () => {
    expect(() => astroFallback('static-paths', { ASTRO_FALLBACK: 'static-path' })).toThrow(/no fallback `static-path`/);
    expect(astroFallback('static-paths', { ASTRO_FALLBACK: 'kept-renderer,static-paths' })).toBe(true);
    expect(astroFallback('resolve-streaming', { ASTRO_FALLBACK: 'static-paths' })).toBe(false);
  });

  // KEPT_RENDERER=0 throws the kept renderer away: `astro build` compiles, and its kept code renders.
  test('a first build of new code renders its profile pages with what `astro build` kept, in two threads', () => {
    const built = build('first', { KEPT_RENDERER: '0', RENDER_THREADS: '2' });
    // Compiled beside validating, into a scratch folder of the store that goes with the build.
    expect(built.stdout).toContain('Compiling the pages with `astro build` (begun as the build started)…');
    expect(built.stdout).toContain('profile pages with the renderer `astro build` compiled in 2 threads');
    // The compile's process has its own peak, said beside the build's.
    expect(built.stdout).toMatch(/peak memory \d+ MB \(and \d+ MB in the process that compiled, while it ran\)\.$/m);
    // The answers counted, not the compressed siblings written beside them.
    expect(built.stdout).toContain('7 pages (7 rendered, 0 unchanged), 7 API files,');
    expectSameAsShared(built.dist);
    expect(leftBy(built.pid)).toEqual([]);
  }, 60_000);

  // The compile begins before the content is read: a build stopped by bad content still ends it,
  // and keeps what it compiled for the build after the fix.
  test('a first build of new code stopped by bad content keeps the compiled code, and no scratch', () => {
    const { parent, content } = copyFixture('compile-ahead');
    try {
      fs.writeFileSync(path.join(content, 'profiles', 'bob.yaml'), 'displayName: [not, a, string]\n');
      // Another SITE_URL is other code to the fingerprint: nothing kept for it yet.
      const siteUrl = `https://compile-ahead-${process.pid}.example`;
      const kept = rendererDir(ROOT, { fingerprint: renderFingerprint(ROOT, siteUrl), target: 'node' });
      fs.rmSync(kept, { recursive: true, force: true });
      const r = buildSite({ contentDir: content, distDir: path.join(WORK, 'bad', 'dist'), siteUrl, env: { SOURCE_DATE_EPOCH: '1768478400' } });
      expect(r.status, `${r.stderr}${r.stdout}`).toBe(1);
      expect(r.stderr).toMatch(/profiles\/bob\.yaml:1/);
      expect(r.stderr).toContain('Nothing was built');
      expect(fs.existsSync(path.join(kept, KEPT_FILE))).toBe(true);
      expect(leftBy(r.pid)).toEqual([]);
      fs.rmSync(kept, { recursive: true, force: true });
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);

  // The compile is a process of its own, so that what it holds is not held by the build while it
  // renders: when it dies, the build says so and fails, and nothing is served or left behind.
  test('a first build of new code whose compile dies fails with the reason and publishes nothing', () => {
    const dist = path.join(WORK, 'compile-dies', 'dist');
    const r = buildFixture(FIXTURE, dist, { PROFILES_INCREMENTAL: '0', KEPT_RENDERER: '0', BUILD_FAULT: 'compiling' });
    expect(r.status, `${r.stderr}${r.stdout}`).toBe(1);
    expect(r.stderr).toContain('BUILD_FAULT: SIGKILL at compiling');
    expect(r.stderr).toContain('`astro build` (compiling the pages) was stopped by SIGKILL');
    expect(r.stderr).toMatch(/dist\/ is untouched/);
    expect(servedRelease(dist)).toBeUndefined();
    expect(leftBy(r.pid)).toEqual([]);
  }, 60_000);

  test('a build of code compiled before renders every page with the kept renderer, in two threads', () => {
    // Compiled before: by the run's shared build, unless the store has pruned it since (it keeps
    // the newest eight, and other tests compile other code and targets), then by this one.
    build('kept-first', {});
    const built = build('kept', { RENDER_THREADS: '2' });
    expect(built.stdout).toContain('profile pages with Astro\'s kept renderer in 2 threads');
    expect(built.stdout).toMatch(/peak memory \d+ MB\.$/m);
    expectSameAsShared(built.dist);
  }, 60_000);

  /** The renderer this code kept (a build named `first` compiles it when the store has none), the fixture's index, and a `client` folder named `name`. */
  function workerJob(first: string, name: string) {
    build(first, {});
    const key = { fingerprint: renderFingerprint(ROOT, TEST_SITE_URL), target: 'node' as const };
    const { content } = loadContent(FIXTURE);
    const index = buildSiteIndex(content, { siteUrl: TEST_SITE_URL, builtAt: new Date('2026-01-15T12:00:00Z') });
    const clientDir = path.join(WORK, name, 'client');
    fs.mkdirSync(path.join(clientDir, 'p'), { recursive: true });
    return { index, names: index.users.map((u) => u.username), job: { dir: rendererDir(ROOT, key), key, layout: undefined, clientDir } };
  }

  test('worker threads render batch after batch; a batch that fails fails the render once every thread has stopped', async () => {
    const { index, names, job } = workerJob('workers-first', 'workers');
    const { clientDir } = job;
    const progress: number[] = [];
    await renderInWorkers(job, renderBatches(index, names, 2), 2, (n) => progress.push(n));
    expect(fs.readdirSync(path.join(clientDir, 'p')).sort()).toEqual(names.map((n) => `${n}.html`).sort());
    expect(progress.at(-1)).toBe(names.length);
    for (const name of names) expect(fs.readFileSync(path.join(clientDir, 'p', `${name}.html`), 'utf8')).toContain(`<meta property="profile:username" content="${name}">`);

    // A batch naming a profile its users do not hold: its thread fails, the other ends, the error is the page's.
    const failing = path.join(WORK, 'workers-failing', 'client');
    fs.mkdirSync(path.join(failing, 'p'), { recursive: true });
    const bad = { names: ['nobody-here'], index: { ...renderBatches(index, names, 2)[0]!.index, users: [], avatars: [] } };
    await expect(renderInWorkers({ ...job, clientDir: failing }, [...renderBatches(index, names, 2), bad], 2)).rejects.toThrow(/nobody-here/);
    expect(fs.existsSync(path.join(failing, 'p', 'nobody-here.html'))).toBe(false);
  }, 60_000);

  test('threads started before their job render with it; one told a job it cannot open is not used', async () => {
    const { index, names, job } = workerJob('started-first', 'started');
    const { clientDir } = job;

    // Three started, told the job before any batch; two render, the third is ended by `close`.
    const started = new RenderWorkers(3);
    expect(started.waiting).toBe(3);
    started.open(job);
    await renderInWorkers(job, renderBatches(index, names, 2), 2, () => {}, started);
    expect(started.waiting).toBe(1);
    started.close();
    expect(started.waiting).toBe(0);
    expect(fs.readdirSync(path.join(clientDir, 'p')).sort()).toEqual(names.map((n) => `${n}.html`).sort());

    // Told a folder with no renderer, the started thread fails before it is taken: a new one renders.
    const again = path.join(WORK, 'started-again', 'client');
    fs.mkdirSync(path.join(again, 'p'), { recursive: true });
    const broken = new RenderWorkers(1);
    broken.open({ ...job, dir: path.join(WORK, 'no-renderer-here') });
    await renderInWorkers({ ...job, clientDir: again }, renderBatches(index, names, 1), 1, () => {}, broken);
    broken.close();
    expect(fs.readdirSync(path.join(again, 'p')).sort()).toEqual(names.map((n) => `${n}.html`).sort());
  }, 60_000);

  // One module, no global: the kept code imports page-data.ts by its address, never a copy of it.
  test('the pages read the index from page-data.ts itself, not a bundled copy', () => {
    const kept = rendererDir(ROOT, { fingerprint: renderFingerprint(ROOT, TEST_SITE_URL), target: 'node' });
    const chunks = [...fileTree(kept)].filter(([file]) => file.endsWith('.mjs') && !file.startsWith('server/')).map(([, bytes]) => bytes.toString());
    expect(chunks.filter((code) => code.includes(PAGE_DATA_URL)).length).toBeGreaterThan(3);
    expect(chunks.some((code) => /function getSiteIndex\b/.test(code))).toBe(false);
  });

  // Cloudflare's builds against `astro build`'s: test/build/cloudflare-assets.test.ts (they move the project's wrangler redirect).
  // The Cloudflare redirect's fallback: test/build/cloudflare-assets.test.ts.
  test.each(ASTRO_FALLBACKS.filter((f) => f !== 'wrangler-redirect' && f !== 'content-changed').map((f) => [f]))('ASTRO_FALLBACK=%s builds the same files', (fallback) => {
    const built = build(`fallback-${fallback}`, { ASTRO_FALLBACK: fallback });
    if (fallback === 'kept-renderer') expect(built.stdout).toContain('profile pages with `astro build` (');
    expectSameAsShared(built.dist);
  }, 60_000);
});
