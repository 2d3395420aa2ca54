// The render step: the profile pages the plan says changed, and the pages made from the whole index
// (derived.ts), rendered by Astro. With the code the last `astro build` of the same code kept
// (page-renderer.ts), without its seconds of bundling, in worker threads on every core; the first
// build of new code runs `astro build`, and keeps its own (keep-renderer.ts).
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { buildLayout } from '../release/layout.ts';
import { isLayered, listFiles } from '../release/layers.ts';
import { releasePath, servedRelease } from '../release/releases.ts';
import { columnsOf } from '../model/site-index.ts';
import { handOverSiteIndex, pagesRendered } from './page-data.ts';
import { linkPages } from './page-reuse.ts';
import { KEPT_FILE, KEPT_SERVER_DIR, keepRendererIn } from './keep-renderer.ts';
import { openRenderer, RendererUnavailable, type PageRenderer } from './page-renderer.ts';
import { WORKER_MIN_PAGES, movePages, renderInWorker, runShard, runningShards, shardCount, splitPages, type ShardResult } from './render-shards.ts';
import { isWholeIndexFile, wholeIndexRoutes } from './derived.ts';
import type { EditPlan } from './edit-path.ts';
import { faultPoint } from './faults.ts';
import type { Build } from './pipeline.ts';
import type { ContentRead, ReleasePlan } from './plan.ts';

export type { PageRenderer };

/** The renderer `astro build` kept for this code, or undefined: this build runs `astro build` (and keeps one). */
export async function openKeptRenderer(build: Build): Promise<PageRenderer | undefined> {
  try {
    return await openRenderer(build.keptDir, build.keptKey);
  } catch (e) {
    if (!(e instanceof RendererUnavailable)) throw e;
    // A first build of this code has none to use, as expected: said only when asked for Astro's info.
    if (!e.noneKept || ['info', 'debug'].includes(build.o.astroLogLevel ?? '')) console.log(`(${e.message}: the pages are rendered by \`astro build\`)`);
    return undefined;
  }
}

export interface Rendered {
  /** Peak memory of each render process besides this one, in KB. */
  otherRssKb: number[];
}

/** Renders the plan's pages into the new release (`release.fresh`), and links the unchanged ones from the served release. */
export async function renderPages(build: Build, read: ContentRead, release: ReleasePlan): Promise<Rendered> {
  const { o } = build;
  const { index, edit } = read;
  const { pages: plan, fresh } = release;
  const keptRenderer = edit?.renderer ?? (o.target === 'node' && o.keptRenderer ? await openKeptRenderer(build) : undefined);
  if (!keptRenderer && o.target === 'node') keepRendererIn({ ...build.keptKey, dir: build.keptDir });

  // Many pages to render: this process renders the first part and others the rest, one per core
  // (render-shards.ts): worker threads with the kept renderer, else processes running `astro build`.
  const env = o.renderShards === undefined ? {} : { RENDER_SHARDS: o.renderShards };
  const [ownPages = [], ...otherPages] = splitPages([...plan.render], shardCount(plan.render.size, env, undefined, keptRenderer ? WORKER_MIN_PAGES : undefined));
  const shardPages = keptRenderer ? [] : otherPages;
  const workerPages = keptRenderer ? otherPages : [];
  handOverSiteIndex(index, new Set(ownPages));
  if (o.heapCap && plan.render.size >= WORKER_MIN_PAGES) v8.setFlagsFromString(o.heapCap);
  process.env.SITE_URL = o.siteUrl;
  process.env.CONTENT_DIR = o.contentDir;
  // A build is always for production. Vite takes `import.meta.env`'s own names from the environment
  // where set, and vitest sets them (DEV=1, MODE=test, ...): the pages then pointed at the dev
  // server's image routes instead of the static files. So none of them is inherited.
  process.env.NODE_ENV = 'production';
  for (const name of ['DEV', 'PROD', 'SSR', 'MODE', 'BASE_URL']) delete process.env[name];
  process.env.ASTRO_TELEMETRY_DISABLED = '1';

  const shardDir = (k: number) => `${fresh}.shard${k}`;
  let shards: Promise<ShardResult[]> = Promise.resolve([]);
  let ownRender: Promise<unknown> = Promise.resolve();
  const processes = shardPages.length ? ` in ${shardPages.length + 1} processes` : workerPages.length ? ` in ${workerPages.length + 1} threads` : '';
  try {
    const shardResults = await build.step(`Rendering ${plan.render.size} of ${read.userCount} profile pages with Astro${keptRenderer ? '\'s kept renderer' : ''}${processes} (and writing the API files)`, async () => {
      // Progress every 5 s while pages render: a 100,000-profile build renders for a minute or two.
      const shardDone = [...shardPages, ...workerPages].map(() => 0);
      let reported = false;
      const progress = setInterval(() => {
        reported = true;
        const done = pagesRendered() + shardDone.reduce((a, b) => a + b, 0);
        process.stdout.write(`\n  ${done} / ${plan.render.size} profile pages rendered (${build.seconds()} s)`);
      }, 5000);
      let settled;
      try {
        shards = Promise.all(shardPages.map((render, k) => runShard(o.root, { index, render }, shardDir(k + 1), k + 1, (n) => { shardDone[k] = n; })));
        ownRender = keptRenderer
          ? (edit ? renderEdit(build, keptRenderer, fresh, ownPages, edit.plan) : renderWithKept(build, read, keptRenderer, fresh, ownPages, workerPages, (k, n) => { shardDone[k] = n; }))
          // Imported here: loading Astro's build takes 1-4 s, which a rebuild with the kept renderer skips.
          : import('astro').then(({ build: astroBuild }) => astroBuild({ root: o.root, outDir: fresh, logLevel: o.astroLogLevel as 'info' | undefined ?? 'warn' }));
        await faultPoint('rendering', runningShards.size ? `render shards: ${[...runningShards].join(' ')}` : '');
        // Settled before anything throws, so a failed render never leaves a shard process running.
        settled = await Promise.allSettled([ownRender, shards]);
      } finally {
        clearInterval(progress);
      }
      const [own, others] = settled;
      if (reported) process.stdout.write('\n  finished:');
      if (own.status === 'rejected') throw own.reason;
      if (others.status === 'rejected') throw others.reason;
      return others.value;
    });
    await faultPoint('rendered');
    const freshLayout = buildLayout(fresh);
    for (const r of shardResults) {
      movePages(buildLayout(r.outDir).pages, freshLayout.pages);
      fs.rmSync(r.outDir, { recursive: true, force: true });
    }
    if (plan.reuse.length && !release.layers) {
      const { served } = release;
      await build.step(`Linking ${plan.reuse.length} unchanged pages from the last build`, () => linkPages(plan.reuse, (file) => path.join(served.at(`p/${file}`) ?? served.client, 'p', file), freshLayout.pages));
    }
    return { otherRssKb: shardResults.map((r) => r.maxRssKb) };
  } catch (e) {
    await Promise.allSettled([shards, ownRender]);
    for (let k = 1; k <= shardPages.length; k++) fs.rmSync(shardDir(k), { recursive: true, force: true });
    throw e;
  }
}

/**
 * What `astro build` writes into `outDir`, made with the kept renderer: the pages of this build
 * (its profiles to render, `ownPages` here and each of `workerPages` in a worker thread, and every
 * page that reads the whole index), then the rest of Astro's output, which is the same for the
 * same code and so is copied from the kept renderer (the server's code and the bundled styles) or
 * from `public/`, as Astro copies it.
 */
async function renderWithKept(build: Build, read: ContentRead, renderer: PageRenderer, outDir: string, ownPages: string[], workerPages: string[][], onProgress: (worker: number, rendered: number) => void): Promise<void> {
  const to = buildLayout(outDir);
  const { keptDir, keptKey, o } = build;
  const workers = workerPages.map((names, k) => renderInWorker({ dir: keptDir, key: keptKey, index: read.index, names, clientDir: to.client }, (n) => onProgress(k, n)));
  const rendered = await Promise.allSettled([renderer.renderSite(read.index, ownPages, to.client), ...workers]);
  const failed = rendered.find((r) => r.status === 'rejected');
  if (failed) {
    // A cache, which a bad copy must not keep failing: without its record the next build renders
    // with `astro build` and keeps a new one (a page that fails for its content fails there too,
    // with Astro's words). Its files stay for a build of another release that may be using them.
    fs.rmSync(path.join(keptDir, KEPT_FILE), { force: true });
    throw new Error(`the kept renderer failed (the next build runs \`astro build\`): ${(failed.reason as Error)?.stack ?? failed.reason}`);
  }
  fs.cpSync(path.join(keptDir, KEPT_SERVER_DIR), to.server, { recursive: true });
  fs.cpSync(path.join(keptDir, '_astro'), path.join(to.client, '_astro'), { recursive: true });
  if (fs.existsSync(path.join(o.root, 'public'))) fs.cpSync(path.join(o.root, 'public'), to.client, { recursive: true });
}

/**
 * What an edit build writes besides its answers, previews and the handler's files (write-build.ts):
 * every file of the served release outside the layered folders (the same code built them from the
 * same inputs), the changed profiles' pages, and the pages made from the whole index, rendered from
 * the edit's columns as a whole build renders them from its index (derived.ts).
 */
async function renderEdit(build: Build, renderer: PageRenderer, outDir: string, names: string[], edit: EditPlan): Promise<void> {
  const to = buildLayout(outDir);
  const from = buildLayout(releasePath(build.o.distDir, servedRelease(build.o.distDir)!)).client;
  const made = new Set<string>();
  for (const file of listFiles(from)) {
    // A remade file's compressed siblings go with it: the compress step makes them again.
    if (isLayered(file) || isWholeIndexFile(file)) continue;
    const dir = path.dirname(path.join(to.client, file));
    if (!made.has(dir)) fs.mkdirSync(dir, { recursive: true });
    made.add(dir);
    fs.copyFileSync(path.join(from, file), path.join(to.client, file));
  }
  try {
    await renderer.renderChangedPages(edit.index, names, to.client);
    await renderer.renderPaths(edit.index, wholeIndexRoutes(columnsOf(edit.index)), to.client);
  } catch (e) {
    fs.rmSync(path.join(build.keptDir, KEPT_FILE), { force: true });
    throw new Error(`the kept renderer failed (the next build runs \`astro build\`): ${(e as Error)?.stack ?? e}`);
  }
  fs.cpSync(path.join(build.keptDir, KEPT_SERVER_DIR), to.server, { recursive: true });
}
