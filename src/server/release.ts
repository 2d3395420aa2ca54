// One release as the server holds it, and how the server notices a new one. `<DIST_DIR>` is a link
// to a release folder (src/build/releases.ts); a release is loaded whole from its real path (index,
// file list, 404 page, Astro's handler) before any request sees it, and a request keeps the release
// it started with to the end: its files are read from that folder, never through the link, so it
// never mixes two releases, and a file listed is a file there (kept releases are never modified).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Site, loadBuiltSite } from '../api/site.ts';
import { buildLayout } from '../build/layout.ts';
import { StaticFiles } from './static-files.ts';

export type AstroHandler = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void, locals: object) => Promise<void>;

export interface LoadedRelease {
  /** The release folder's real path (not the link). */
  dir: string;
  /** What `releaseKey` said when it was loaded: a different key is a different release. */
  key: string;
  site: Site;
  files: StaticFiles;
  notFoundHtml: Buffer;
  astro: AstroHandler | undefined;
}

/** The real folder `distDir` leads to and its site index's identity; undefined when there is none. */
export function releaseKey(distDir: string): string | undefined {
  try {
    const dir = fs.realpathSync(distDir);
    const index = fs.statSync(buildLayout(dir).siteIndex);
    return `${dir}\0${index.ino}\0${index.mtimeMs}`;
  } catch {
    return undefined;
  }
}

export async function loadRelease(distDir: string): Promise<LoadedRelease> {
  const key = releaseKey(distDir);
  if (!key) throw new Error(`No build in ${distDir}: run \`npm run build\` first (or \`npm start\`, which builds and serves).`);
  const dir = key.split('\0')[0]!;
  const layout = buildLayout(dir);
  const site = loadBuiltSite(dir);
  const files = new StaticFiles(layout.client);
  const notFoundHtml = files.notFoundPage ? fs.readFileSync(files.notFoundPage) : Buffer.from('<!doctype html><title>Not found</title><h1>Not found</h1>');
  return { dir, key, site, files, notFoundHtml, astro: await astroHandlerOf(dir) };
}

/**
 * Astro's request handler of a release. Node never unloads an ES module, and each import of a
 * bundle's entry also adds a process-wide `unhandledRejection` listener (@astrojs/node
 * `createAppHandler`): importing every release's bundle grew the process by one module graph and
 * one listener per rebuild. Releases built from the same code (the page manifest's fingerprint:
 * sources, config, lockfile, SITE_URL; src/build/page-reuse.ts) share one handler, so content
 * rebuilds cost nothing; a release of new code loads its own, and the listener of the handler it
 * replaces is removed. The cost is one module graph per code version the process has served.
 * A shared handler reads its error pages and `/_image` sources from the release it came from,
 * the same bytes under the same fingerprint; our server answers every other path itself.
 */
async function astroHandlerOf(dir: string): Promise<AstroHandler | undefined> {
  const layout = buildLayout(dir);
  const entry = path.join(layout.server, 'entry.mjs');
  if (!fs.existsSync(entry)) return undefined;
  const fingerprint = codeFingerprint(layout.pageManifest);
  if (fingerprint && loadedHandler?.fingerprint === fingerprint) return loadedHandler.handler;
  const before = new Set(process.listeners('unhandledRejection'));
  const handler = (await import(pathToFileURL(entry).href) as { handler: AstroHandler }).handler;
  const added = process.listeners('unhandledRejection').filter((l) => !before.has(l));
  if (loadedHandler) for (const l of loadedHandler.listeners) process.off('unhandledRejection', l);
  loadedHandler = { fingerprint, handler, listeners: added };
  return handler;
}

let loadedHandler: { fingerprint: string | undefined; handler: AstroHandler; listeners: NodeJS.UnhandledRejectionListener[] } | undefined;

function codeFingerprint(manifestFile: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { fingerprint?: string }).fingerprint;
  } catch {
    return undefined;
  }
}

/** How often the server also checks the link itself: where folder events are not delivered (some network and container file systems). */
export const RELEASE_POLL_MS = 2000;

/**
 * Calls `check` when `distDir` may lead somewhere new: at once on a change of the folder holding
 * the link (the build renames a new link over it), and every `RELEASE_POLL_MS` in any case.
 * Returns a function that stops watching.
 */
export function watchRelease(distDir: string, check: () => void, pollMs = RELEASE_POLL_MS): () => void {
  const name = path.basename(distDir);
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(path.dirname(distDir), { persistent: false }, (_event, file) => {
      if (file === null || file === name) check();
    });
    watcher.on('error', () => { watcher?.close(); watcher = undefined; });
  } catch {
    watcher = undefined; // polling alone
  }
  const timer = setInterval(check, pollMs);
  timer.unref();
  return () => {
    watcher?.close();
    clearInterval(timer);
  };
}
