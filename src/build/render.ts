// The render step: the profile pages the plan says changed, and the pages made from the whole index
// (derived.ts), rendered by one engine: the code `astro build` compiled, kept (astro/keep-renderer.ts)
// and run in this thread and worker threads on every core (astro/render-pages.ts). A first build of
// new code compiles it with `astro build` beside validating the content (the code holds no content:
// `compileRenderer`), then renders every page the same way.
// Cloudflare's adapter compiles for workerd, so its pages are rendered by `astro build` itself.
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildLayout } from '../release/layout.ts';
import { LAYERED_DIRS, linkOrCopy, listFiles } from '../release/layers.ts';
import { columnsOf, type SiteIndex } from '../model/site-index.ts';
import { handOverSiteIndex, pagesRendered } from './astro/page-data.ts';
import { linkPages } from './reuse/page-reuse.ts';
import { KEPT_CLIENT_DIR, KEPT_FILE, KEPT_SERVER_DIR, keepRendererIn, readKept } from './astro/keep-renderer.ts';
import { openRenderer, RendererUnavailable, type PageRenderer } from './astro/page-renderer.ts';
import { RenderWorkers, WORKER_MIN_PAGES, renderProfilePages, threadCount, workerThreads } from './astro/render-pages.ts';
import { astroFallback } from './astro/fallbacks.ts';
import type { CompileJob } from './astro/compile-process.ts';
import { addStats, emptyStats, type CompressStats } from './files/compress.ts';
import { isRetiredAsset } from './files/retired-assets.ts';
import { holdWranglerRedirect } from './astro/wrangler-deploy-config.ts';
import { wholeIndexFiles } from './derived.ts';
import type { EditPlan } from './reuse/edit-path.ts';
import { diskFault, faultPoint } from './faults.ts';
import type { Build, BuildOptions } from './pipeline.ts';
import type { ContentRead, ReleasePlan, ServedRelease } from './plan.ts';

export type { PageRenderer };

/**
 * Whether this build's pages are rendered by the kept renderer, on every target: Cloudflare's pages
 * are pre-rendered in Node too (`prerenderEnvironment: 'node'`), and its Worker is the adapter's
 * output the renderer keeps beside them.
 */
const usesEngine = (): boolean => !astroFallback('kept-renderer');

/** What `astro build` reads from the environment, set for a production build of these options. */
function setAstroEnv(o: BuildOptions): void {
  process.env.SITE_URL = o.siteUrl;
  process.env.CONTENT_DIR = o.contentDir;
  // A build is always for production. Vite takes `import.meta.env`'s own names from the environment
  // where set, and vitest sets them (DEV=1, MODE=test, ...): the pages then pointed at the dev
  // server's image routes instead of the static files. So none of them is inherited.
  process.env.NODE_ENV = 'production';
  for (const name of ['DEV', 'PROD', 'SSR', 'MODE', 'BASE_URL']) delete process.env[name];
  process.env.ASTRO_TELEMETRY_DISABLED = '1';
}

/** `astro build` with these options into `outDir`, rendering the profile pages of `profiles` only from `index`; it keeps its renderer for the engine. */
async function astroBuild(build: Build, index: SiteIndex, profiles: Iterable<string>, outDir: string): Promise<void> {
  const { o } = build;
  setAstroEnv(o);
  handOverSiteIndex(index, new Set(profiles));
  keepRendererIn(usesEngine() ? { ...build.keptKey, dir: build.keptDir } : undefined);
  // Imported here: loading Astro's build takes 1-4 s, which a build with the kept renderer skips.
  const { build: astro } = await import('astro');
  await astro({ root: o.root, outDir, logLevel: o.astroLogLevel as 'info' | undefined ?? 'warn' });
}

/** The compiles under way in this process, by the folder each keeps its renderer in: a build that needs one waits for it. */
const compiles = new Map<string, Promise<void>>();

/**
 * Compiles the code with `astro build`, in a process of its own (`compileElsewhere`), and keeps its
 * renderer, when none is kept for this code and the engine renders this build's pages; undefined
 * otherwise. The pipeline begins it as the build starts, beside validating the content: the
 * compiled code holds no content, so Astro pre-renders its pages from an empty index into a
 * scratch folder, thrown away, and the kept renderer renders every page of the release
 * (`renderWithKept`), as for every build after it.
 */
export function compileRenderer(build: Build): Promise<void> | undefined {
  const { o } = build;
  const under = compiles.get(build.keptDir);
  if (under || !usesEngine() || typeof readKept(build.keptDir, build.keptKey) !== 'string') return under;
  // Its own name in the store, which pruneStore (keep-renderer.ts) removes once this process is gone.
  const scratch = `${build.keptDir}.astro-out.${process.pid}.tmp`;
  setAstroEnv(o);
  const job: CompileJob = {
    root: o.root, contentDir: o.contentDir, siteUrl: o.siteUrl, builtAt: o.builtAt.toISOString(), target: o.target,
    key: build.keptKey, keptDir: build.keptDir, outDir: scratch, logLevel: o.astroLogLevel,
  };
  const restoreRedirect = o.target === 'cloudflare' ? holdWranglerRedirect(o.root, o.distDir) : undefined;
  const compile = compileElsewhere(job)
    .then((peakKb) => { build.compilePeakKb = peakKb; })
    .finally(() => {
      restoreRedirect?.();
      fs.rmSync(scratch, { recursive: true, force: true });
      compiles.delete(build.keptDir);
    });
  // Awaited by the render step; a build stopped before it (bad content) waits for it to settle.
  compile.catch(() => {});
  compiles.set(build.keptDir, compile);
  return compile;
}

/**
 * Node arguments of the compile's process after this process's own (the last of a V8 flag wins). It
 * runs beside the validation of a first build: a young generation of 8 MB semi-spaces instead of
 * the build's 32 took 40 MB off its peak (425 → 375 MB) at no time measured (docs/scale.md).
 */
export const COMPILE_NODE_ARGS = ['--max-semi-space-size=8'];

/**
 * `astro build` of `job` in a process of its own (astro/compile-process.ts), with this process's Node
 * arguments and environment and its output printed here. Resolves with its peak memory (KB, as it
 * told), rejects when it fails.
 */
function compileElsewhere(job: CompileJob): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, ...COMPILE_NODE_ARGS, fileURLToPath(new URL('./astro/compile-process.ts', import.meta.url)), JSON.stringify(job)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let peakKb: number | undefined;
    child.on('message', (m: { maxRssKb?: number }) => { peakKb = m.maxRssKb; });
    child.once('error', reject);
    // 'close', not 'exit': after its last message too.
    child.once('close', (code, signal) => (code === 0 ? resolve(peakKb) : reject(new Error(`\`astro build\` (compiling the pages) ${signal ? `was stopped by ${signal}` : `failed with exit code ${code}`}; its output is above`))));
  });
}

/** The renderer `astro build` kept for this code, or undefined: none was kept (`compileRenderer`). */
export async function openKeptRenderer(build: Build): Promise<PageRenderer | undefined> {
  try {
    // Pages compressed as they are written, but for Cloudflare, which compresses itself.
    return await openRenderer(build.keptDir, build.keptKey, build.codings);
  } catch (e) {
    if (!(e instanceof RendererUnavailable)) throw e;
    // A first build of this code has none to use, as expected: said only when asked for Astro's info.
    if (!e.noneKept || ['info', 'debug'].includes(build.o.astroLogLevel ?? '')) console.log(`(${e.message}: \`astro build\` compiles the code anew)`);
    return undefined;
  }
}

export interface Rendered {
  /** What the render threads compressed as they wrote (compress.ts), for the build's figures. */
  compressed: CompressStats;
  /** Whether every profile page has its compressed siblings (the kept renderer writes them), so the compress step need not look at them. */
  pagesCompressed: boolean;
  /** The files an edit build linked from the served release (relative to `client/`): compressed there, so the compress step need not read them. */
  linked: ReadonlySet<string>;
}

/** How many threads render `pages` pages (RENDER_THREADS, or one per core: render-pages.ts `threadCount`). */
const renderThreads = (o: BuildOptions, pages: number): number => threadCount(pages, o.renderThreads === undefined ? {} : { RENDER_THREADS: o.renderThreads });

/** Renders the plan's pages into the new release (`release.fresh`), and links the unchanged ones from the served release. */
export async function renderPages(build: Build, read: ContentRead, release: ReleasePlan): Promise<Rendered> {
  const { o } = build;
  const { edit } = read;
  const plan = release.pages;
  // A first build of this code: the compile begun with the build (pipeline.ts), or begun now.
  const compile = edit ? undefined : build.compiling ?? compileRenderer(build);
  // The worker threads start now and load their code while `astro build` compiles and this thread
  // opens the renderer: at 20,000 profiles they began rendering 0.3 s later otherwise.
  const started = new RenderWorkers(edit || !usesEngine() ? 0 : workerThreads(plan.render.size, renderThreads(o, plan.render.size)));
  try {
    return await renderStarted(build, read, release, compile, started);
  } finally {
    started.close();
  }
}

/** `renderPages` once its worker threads are starting: waits for the compile, if any, then renders. */
async function renderStarted(build: Build, read: ContentRead, release: ReleasePlan, compile: Promise<void> | undefined, started: RenderWorkers): Promise<Rendered> {
  const { o } = build;
  const { index, edit } = read;
  const { pages: plan, fresh } = release;
  if (compile) await build.step(`Compiling the pages with \`astro build\`${build.compiling ? ' (begun as the build started)' : ''}`, () => compile);
  const keptRenderer = edit?.renderer ?? (usesEngine() ? await openKeptRenderer(build) : undefined);
  const compressed = emptyStats();
  const threads = edit || !keptRenderer ? 1 : renderThreads(o, plan.render.size);
  // The cap is for many pages rendered in this heap (docs/scale.md "Memory of the build"): a flag
  // is every thread's, and render threads under it marked their heaps every second for nothing.
  if (o.heapCap && threads === 1 && plan.render.size >= WORKER_MIN_PAGES) v8.setFlagsFromString(o.heapCap);
  const how = !keptRenderer ? '`astro build`' : compile ? 'the renderer `astro build` compiled' : 'Astro\'s kept renderer';
  let rendering: Promise<unknown> = Promise.resolve();
  let linked: ReadonlySet<string> = new Set();
  try {
    await build.step(`Rendering ${plan.render.size} of ${read.userCount} profile pages with ${how}${threads > 1 ? ` in ${threads} threads` : ''} (and writing the API files)`, async () => {
      // Progress every 5 s while pages render: a 100,000-profile build renders for a minute or two.
      let done = 0;
      let reported = false;
      const progress = setInterval(() => {
        reported = true;
        process.stdout.write(`\n  ${Math.max(done, pagesRendered())} / ${plan.render.size} profile pages rendered (${build.seconds()} s)`);
      }, 5000);
      try {
        rendering = (async () => {
          if (edit) {
            linked = await renderEdit(build, edit.renderer, release.served, fresh, [...plan.render], edit.plan);
            return;
          }
          // Astro kept nothing (a warning said why), or ASTRO_FALLBACK=kept-renderer: `astro build` renders every page.
          if (!keptRenderer) return astroBuild(build, index, plan.render, fresh);
          const job = { dir: build.keptDir, key: build.keptKey, clientDir: buildLayout(fresh).client, layout: build.codings };
          // The workers open the renderer while this thread renders the pages of the whole index.
          started.open(job);
          await renderWithKept(build, read, keptRenderer, fresh);
          try {
            const r = await renderProfilePages({
              ...job, renderer: keptRenderer, index, names: [...plan.render], onProgress: (n) => { done = n; }, started,
            });
            addStats(compressed, r.compressed);
          } catch (e) {
            throw keptRendererFailed(build, e);
          }
        })();
        await faultPoint('rendering');
        await rendering;
      } finally {
        clearInterval(progress);
      }
      if (reported) process.stdout.write('\n  finished:');
    });
    await faultPoint('rendered');
    if (keptRenderer) addStats(compressed, keptRenderer.compressed);
    if (plan.reuse.length && !release.layers) {
      const { served } = release;
      await build.step(`Linking ${plan.reuse.length} unchanged pages from the last build`, () => linkPages(plan.reuse, (file) => path.join(served.at(`p/${file}`) ?? served.client, 'p', file), buildLayout(fresh).pages, build.codings === 'siblings'));
    }
    // Pages linked into a whole release come as an earlier build wrote them, siblings or not.
    return { compressed, pagesCompressed: keptRenderer !== undefined && (plan.reuse.length === 0 || release.layers !== undefined), linked };
  } catch (e) {
    await Promise.allSettled([rendering]);
    throw e;
  }
}

/**
 * What `astro build` writes into `outDir` besides the profile pages, made with the kept renderer:
 * every page that reads the whole index (home, sitemaps, docs...), then the rest of Astro's
 * output, which is the same for the same code and so is copied from the kept renderer (the
 * server's code and the bundled styles) or from `public/`, as Astro copies it.
 */
async function renderWithKept(build: Build, read: ContentRead, renderer: PageRenderer, outDir: string): Promise<void> {
  // Without Astro's StaticPaths (an internal: src/build/astro/README.md), `astro build` makes them.
  if (astroFallback('static-paths')) return astroBuild(build, read.index, [], outDir);
  const to = buildLayout(outDir);
  try {
    await renderer.renderSite(read.index, [], to.client);
  } catch (e) {
    throw keptRendererFailed(build, e);
  }
  fs.cpSync(path.join(build.keptDir, KEPT_SERVER_DIR), to.server, { recursive: true });
  fs.cpSync(path.join(build.keptDir, '_astro'), path.join(to.client, '_astro'), { recursive: true });
  if (fs.existsSync(path.join(build.o.root, 'public'))) fs.cpSync(path.join(build.o.root, 'public'), to.client, { recursive: true });
  // Written by the adapter after Vite copied public/ (keep-renderer.ts `ADAPTER_CLIENT_FILES`).
  const adapterFiles = path.join(build.keptDir, KEPT_CLIENT_DIR);
  if (fs.existsSync(adapterFiles)) fs.cpSync(adapterFiles, to.client, { recursive: true });
}

/**
 * A cache, which a bad copy must not keep failing: without its record the next build compiles
 * anew (a page that fails for its content fails there too, with Astro's words). Its files stay for
 * a build of another release that may be using them.
 */
function keptRendererFailed(build: Build, e: unknown): Error {
  // A full disk is no fault of the renderer: it stays for the next build.
  if (diskFault(e)) return e as Error;
  fs.rmSync(path.join(build.keptDir, KEPT_FILE), { force: true });
  return new Error(`the kept renderer failed (the next build compiles anew): ${(e as Error)?.stack ?? e}`);
}

/**
 * What an edit build writes besides its answers, previews and the handler's files (write-build.ts):
 * the changed profiles' pages and the pages made from the whole index that its changes make again
 * (derived.ts), rendered from the edit's columns as a whole build renders them from its index; then
 * every other file of the served release outside the layered folders (the same code built them from
 * the same inputs), hard-linked: a release's files never change once written, and a link makes no
 * inode, which this disk charges most for (docs/scale.md, "Files on disk"). Nothing is linked over
 * a file this build wrote, and this build's writers replace a file rather than write into it
 * (write-build.ts `writeFiles`, compress.ts `writeCodedFile`), so no link can change the served release.
 * Returns the files it linked: at 1,000,000 profiles about 1,500 of them (browse pages, sitemaps, lookup
 * tables), which the compress step read whole to find them compressed already (0.2 s an edit).
 */
async function renderEdit(build: Build, renderer: PageRenderer, served: ServedRelease, outDir: string, names: string[], edit: EditPlan): Promise<ReadonlySet<string>> {
  const to = buildLayout(outDir);
  const from = served.client;
  const whole = wholeIndexFiles(columnsOf(edit.index), edit.changes);
  try {
    await renderer.renderChangedPages(edit.index, names, to.client);
    await renderer.renderPaths(edit.index, whole.routes, to.client);
  } catch (e) {
    throw keptRendererFailed(build, e);
  }
  const made = new Set<string>();
  const linked = new Set<string>();
  // The layered folders are not walked: the new release reads their files from where the served one does.
  for (const file of listFiles(from, LAYERED_DIRS)) {
    // A remade file's compressed siblings go with it: the compress step makes them again. Retired
    // assets are kept, or not, by their age (write.ts).
    if (whole.remade(file) || isRetiredAsset(served.retiredAssets, file)) continue;
    const dir = path.dirname(path.join(to.client, file));
    if (!made.has(dir)) fs.mkdirSync(dir, { recursive: true });
    made.add(dir);
    linkOrCopy(path.join(from, file), path.join(to.client, file));
    linked.add(file);
  }
  fs.cpSync(path.join(build.keptDir, KEPT_SERVER_DIR), to.server, { recursive: true });
  return linked;
}
