// Renders chosen pages with the pre-render code a full build kept (keep-renderer.ts): Astro's own
// compiled pages, layout and render pipeline, imported in plain Node, so an edit build renders the
// pages it changed without the seconds `astro build` spends bundling the site first. The bytes are
// those `astro build` writes (test/build/page-renderer.test.ts compares every page).
//
// What it uses of Astro: the `app` and `manifest` that Astro's pre-render entry exports
// (astro/dist/entrypoints/prerender.js) and `app.render(request, { routeData })`, the call Astro's
// own pre-renderer makes for each page (astro/dist/core/build/default-prerenderer.js). That app
// expects two things from the build it runs in, which are given here from the kept manifest: the
// styles and scripts of each page (`setInternals`), and the build's settings and logger
// (`setOptions`). None of this is public API; an Astro upgrade changes `renderFingerprint` (the
// lock file), so a renderer is only ever used with the Astro that compiled it, and the test fails
// when a new Astro no longer fits.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { handOverSiteIndex } from './page-data.ts';
import { astroFallback } from './fallbacks.ts';
import { KEPT_FILE, markRendererUsed, readKept, type KeptRendererKey } from './keep-renderer.ts';
import type { SiteIndex } from '../../model/site-index.ts';
import { emptyStats, writeCoded, type CodingLayout, type CompressStats } from '../files/compress.ts';

/** Why a kept renderer cannot be used: the build renders with `astro build` instead. */
export class RendererUnavailable extends Error {
  /** Nothing was kept yet (a first build of this code): normal, and not worth saying. */
  readonly noneKept: boolean;
  constructor(message: string, noneKept = false) {
    super(message);
    this.noneKept = noneKept;
  }
}

interface RouteData {
  route: string;
  component: string;
  type: string;
  prerender: boolean;
  pattern: RegExp;
}
type Sheet = { type: 'external'; src: string } | { type: 'inline'; content: string };
type Script = { type: 'external'; value: string } | { stage: string; children: string };
/** The parts of Astro's serialized manifest read here. */
interface KeptManifest {
  base: string;
  site?: string;
  buildFormat: string;
  routes: { routeData: RouteData; styles: Sheet[]; scripts: Script[] }[];
  /** Each page's module by its component, imported on demand (the entry's manifest, not the serialized one). */
  pageMap?: Map<string, () => Promise<unknown>>;
}
/** Astro's `BuildApp` as its pre-render entry exports it. */
interface BuildApp {
  setInternals(internals: unknown): void;
  setOptions(options: unknown): void;
  render(request: Request, options: { routeData: RouteData }): Promise<Response>;
  /** BuildApp's choice of streaming (protected; overridden to render each page to one string). */
  resolveStreaming?: () => boolean | undefined;
  readonly routeCache: { clearAll(): void };
  readonly logger: { options: { destination: unknown } };
}

/** Pages rendered at once, as Astro does (`build.concurrency` in astro.config.mjs). */
const CONCURRENCY = 4;
/** Pages between two turns of the event loop. */
const YIELD_EVERY = 64;


export class PageRenderer {
  readonly #app: BuildApp;
  readonly #routes: RouteData[];
  readonly #origin: string;
  readonly #profile: RouteData;
  /** Folders made by this renderer: a page's folder is made once, not awaited per page. */
  readonly #madeDirs = new Set<string>();
  /** Profile pages written so far, for the build's progress lines. */
  profilePagesWritten = 0;
  /** How each page's compressed codings are written with it (compress.ts): none for Cloudflare. */
  readonly #layout: CodingLayout | undefined;
  /** What this renderer compressed, for the build's figures. */
  readonly compressed: CompressStats = emptyStats();

  constructor(app: BuildApp, manifest: KeptManifest, layout?: CodingLayout) {
    this.#layout = layout;
    if (manifest.buildFormat !== 'file' || manifest.base !== '/') {
      throw new RendererUnavailable(`the renderer writes pages as astro.config.mjs has them (build.format 'file', base '/'), not ${manifest.buildFormat} at ${manifest.base}`);
    }
    this.#app = app;
    this.#routes = manifest.routes.map((r) => r.routeData).filter((r) => r.prerender);
    const profile = this.#routes.find((r) => r.route === '/p/[username]');
    if (!profile) throw new RendererUnavailable('the kept renderer has no /p/[username] route');
    this.#profile = profile;
    // Astro's origin for pre-rendered requests (astro/dist/core/build/index.js).
    this.#origin = manifest.site ? new URL(manifest.site).origin : 'http://localhost:4321';
    app.setInternals({ pagesByKeys: pagesByKeys(manifest) });
    if (!astroFallback('page-map')) importPagesOnce(manifest);
    // Each page rendered to one string, not streamed through a ReadableStream: the same bytes,
    // at a fraction of the cost per page (page-writes.ts does the same inside `astro build`).
    if (typeof app.resolveStreaming === 'function' && !astroFallback('resolve-streaming')) app.resolveStreaming = () => false;
    app.setOptions({ settings: { scripts: settingsScripts(manifest) }, logger: { options: { destination: app.logger.options.destination } } });
  }

  /**
   * Writes every file `astro build` writes when the build script asks for the pages of `usernames`
   * only (page-data.ts `shouldRenderPage`): their `p/<username>.html`, and every other page, which
   * reads the whole index (the home page, the sitemaps, the API docs...). Returns the files written.
   */
  async renderSite(index: SiteIndex, usernames: Iterable<string>, clientDir: string): Promise<string[]> {
    this.#handOver(index, usernames);
    // What Astro's own pre-renderer renders (astro/dist/core/build/default-prerenderer.js): each
    // route's paths, getStaticPaths run inside the kept code.
    // Imported here, not at the top: its 90 modules cost every build process 0.1 s, and only a build
    // that renders the whole-index pages needs them (an edit build, a render thread do not).
    const { StaticPaths } = await import('astro/runtime/prerender/static-paths.js');
    const paths = await new StaticPaths(this.#app as unknown as ConstructorParameters<typeof StaticPaths>[0]).getAll();
    return this.#writeAll(paths.map(({ pathname, route }) => ({ pathname, route: route as RouteData })), clientDir);
  }

  /**
   * Writes `p/<username>.html` into `clientDir` for each of `usernames`, rendered from `index`.
   * Throws for a username the index lacks, as `astro build` would.
   */
  async renderChangedPages(index: SiteIndex, usernames: Iterable<string>, clientDir: string): Promise<string[]> {
    const names = [...usernames];
    this.#handOver(index, names);
    return this.#writeAll(names.map((name) => ({ route: this.#profile, pathname: `/p/${name}` })), clientDir);
  }

  /**
   * Writes the pre-rendered files of `pathnames` into `clientDir`, rendered from `index`: `/` (the
   * home page, which lists the creators), `/sitemap.xml`, `/404`... Profile pages: renderChangedPages.
   */
  async renderPaths(index: SiteIndex, pathnames: readonly string[], clientDir: string): Promise<string[]> {
    this.#handOver(index, []);
    return this.#writeAll(pathnames.map((pathname) => {
      const route = this.#routes.find((r) => r.pattern.test(pathname));
      if (!route || route === this.#profile) throw new Error(`no pre-rendered route for ${pathname} (profile pages: renderChangedPages)`);
      return { route, pathname };
    }), clientDir);
  }

  /**
   * Hands `index` to the kept pages for this call (page-data.ts getSiteIndex), as a build does. The
   * index may differ from call to call, so one process renders build after build (`npm start`'s
   * builder): the pages keep nothing of it between calls (test/build/page-renderer.test.ts).
   */
  #handOver(index: SiteIndex, profiles: Iterable<string>): void {
    handOverSiteIndex(index, new Set(profiles));
    // getStaticPaths ran for the profiles asked before: run it again for these.
    this.#app.routeCache.clearAll();
  }

  /** Renders the first page of each route alone, so that its getStaticPaths runs once, then the rest `CONCURRENCY` at a time. */
  async #writeAll(pages: { route: RouteData; pathname: string }[], clientDir: string): Promise<string[]> {
    const files: string[] = new Array(pages.length);
    const seen = new Set<RouteData>();
    const rest: number[] = [];
    for (let k = 0; k < pages.length; k++) {
      const { route, pathname } = pages[k]!;
      if (seen.has(route)) {
        rest.push(k);
        continue;
      }
      seen.add(route);
      files[k] = await this.#write(route, pathname, clientDir);
    }
    let written = 0;
    await pool(rest, async (k) => {
      files[k] = await this.#write(pages[k]!.route, pages[k]!.pathname, clientDir);
      // Rendering resolves in microtasks only: a turn of the event loop now and then lets the
      // progress timers and the worker threads' messages through.
      if (++written % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    });
    return files;
  }

  async #write(route: RouteData, pathname: string, clientDir: string): Promise<string> {
    // The address and file Astro uses for the page with `build.format: 'file'` (astro/dist/core/build/generate.js).
    const file = route.type === 'page' ? (pathname === '/' ? 'index.html' : `${pathname.slice(1)}.html`) : pathname.slice(1);
    // A string, not a URL: Request parses it once either way.
    const response = await this.#app.render(new Request(`${this.#origin}${route.type === 'page' ? `/${file}` : pathname}`), { routeData: route });
    if (response.status >= 300 && response.status < 400) throw new Error(`${pathname} redirects (${response.status}); the renderer writes no redirect pages`);
    if (!response.body) throw new Error(`${pathname} rendered no body (${response.status})`);
    const body = new Uint8Array(await response.arrayBuffer());
    const to = path.join(clientDir, file);
    const dir = path.dirname(to);
    if (!this.#madeDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      this.#madeDirs.add(dir);
    }
    // Compressed while the bytes are at hand (the compress step, after, skips a file with codings),
    // each file in one synchronous call: three trips through libuv's threads per page cost more than the write.
    writeCoded(to, file, body, this.#layout, this.compressed);
    if (route === this.#profile) this.profilePagesWritten++;
    return to;
  }
}

/**
 * The renderer kept in `dir` for `key`; RendererUnavailable (with the reason) when there is none or
 * it cannot be used. Its pages read what `astro build`'s do from the process: CONTENT_DIR (the
 * avatars, for link previews), and the index handed to each call. `layout`: how each page's
 * compressed codings are written with it (compress.ts), if at all.
 */
export async function openRenderer(dir: string, key: KeptRendererKey, layout?: CodingLayout): Promise<PageRenderer> {
  const kept = readKept(dir, key);
  if (typeof kept === 'string') throw new RendererUnavailable(kept, !fs.existsSync(path.join(dir, KEPT_FILE)));
  let entry: { app?: BuildApp; manifest?: KeptManifest };
  try {
    entry = await import(pathToFileURL(path.join(dir, kept.entry)).href) as typeof entry;
  } catch (e) {
    throw new RendererUnavailable(`the renderer in ${dir} does not load: ${(e as Error).message}`);
  }
  const { app, manifest } = entry;
  if (!app || !manifest || typeof app.render !== 'function' || typeof app.setInternals !== 'function' || typeof app.setOptions !== 'function' || !app.routeCache) {
    throw new RendererUnavailable(`the renderer in ${dir} is not the pre-render entry this code knows (another Astro version?)`);
  }
  const renderer = new PageRenderer(app, manifest, layout);
  markRendererUsed(dir);
  return renderer;
}

/**
 * The page data Astro's build environment reads for each page's `<head>` (its `getPageData`, keyed
 * `route&component`): the stylesheets, already in Astro's order in the manifest.
 */
function pagesByKeys(manifest: KeptManifest): Map<string, { styles: { sheet: Sheet; depth: number; order: number }[] }> {
  const pages = new Map<string, { styles: { sheet: Sheet; depth: number; order: number }[] }>();
  for (const { routeData, styles } of manifest.routes) {
    pages.set(`${routeData.route}&${routeData.component}`, { styles: styles.map((sheet, order) => ({ sheet, depth: 0, order })) });
  }
  return pages;
}

/**
 * Makes each page module's importer in the manifest's `pageMap` import once: Astro calls it for every
 * page it renders, and each `import()` of a module already loaded still goes through Node's loader,
 * 6% of rendering a profile page. The same module either way; a manifest without the map is left alone.
 */
function importPagesOnce(manifest: KeptManifest): void {
  if (!(manifest.pageMap instanceof Map)) return;
  for (const [component, load] of manifest.pageMap) {
    let loading: Promise<unknown> | undefined;
    manifest.pageMap.set(component, () => loading ??= load());
  }
}

/** The build's injected scripts as Astro's settings hold them: only inline ones, since the site has no client script. */
function settingsScripts(manifest: KeptManifest): { stage: string; content: string }[] {
  const scripts = manifest.routes.find((r) => r.routeData.prerender && r.routeData.type === 'page')?.scripts ?? [];
  return scripts.map((script) => {
    if (!('stage' in script) || script.stage !== 'head-inline') throw new RendererUnavailable('the pages load a client script, which this renderer does not set up');
    return { stage: script.stage, content: script.children };
  });
}

/**
 * `work` on each item, `concurrency` at a time. After a failure no item is started, and the first
 * error is thrown once the work under way has ended: a page still rendering when the call returned
 * would render with the next call's index (`#handOver`), and fail for a reason that is not the one.
 */
export async function pool<T>(items: readonly T[], work: (item: T) => Promise<void>, concurrency = CONCURRENCY): Promise<void> {
  let next = 0;
  let failed = false;
  const run = async () => {
    try {
      while (!failed && next < items.length) await work(items[next++]!);
    } catch (e) {
      failed = true;
      throw e;
    }
  };
  const ends = await Promise.allSettled(Array.from({ length: Math.min(concurrency, items.length) }, run));
  const failure = ends.find((end) => end.status === 'rejected');
  if (failure) throw failure.reason;
}
