// One release as the server holds it, and how the server notices a new one. `<DIST_DIR>` is a link
// to a release folder (src/release/releases.ts); a release is opened by its real path, and a request
// keeps the release it started with to the end: its files are read from that folder, never through
// the link, so it never mixes two releases (kept releases are never modified).
import fs from 'node:fs';
import path from 'node:path';
import { buildLayout } from '../release/layout.ts';
import { RELEASE_INFO_FILE, type ReleaseInfo } from '../release/releases.ts';
import { locator } from '../release/layers.ts';
import { DiskFiles } from './disk-files.ts';

export interface LoadedRelease {
  /** The release folder's real path (not the link). */
  dir: string;
  /** What `releaseKey` said when it was loaded: a different key is a different release. */
  key: string;
  /** When the release was built (its release.json), for the server's log. */
  builtAt: string;
  /** Its public files, read by the handler from this folder only. */
  files: DiskFiles;
}

/** The real folder `distDir` leads to and its release.json's identity; undefined when there is none. */
export function releaseKey(distDir: string): string | undefined {
  try {
    const dir = fs.realpathSync(distDir);
    const info = fs.statSync(path.join(dir, RELEASE_INFO_FILE));
    return `${dir}\0${info.ino}\0${info.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/**
 * A release, ready to serve: nothing is read ahead (the handler reads what each request needs), so
 * loading costs the same at any number of profiles; the 404 page is read once to check the
 * release is whole before any request sees it.
 */
export async function loadRelease(distDir: string, fileCacheBytes?: number): Promise<LoadedRelease> {
  const key = releaseKey(distDir);
  if (!key) throw new Error(`No build in ${distDir}: run \`npm run build\` first (or \`npm start\`, which builds and serves).`);
  const dir = key.split('\0')[0]!;
  const info = releaseInfoOf(dir);
  const client = buildLayout(dir).client;
  // A layered release reads the files it does not hold from the releases it names (src/release/layers.ts).
  const files = new DiskFiles(client, fileCacheBytes, info.layers && locator(path.dirname(dir), client, info.layers));
  if (!await files.read('404.html')) throw new Error(`The build in ${dir} has no 404 page: it is not a whole build.`);
  return { dir, key, builtAt: info.builtAt ?? 'an unknown time', files };
}

function releaseInfoOf(dir: string): Partial<ReleaseInfo> {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, RELEASE_INFO_FILE), 'utf8')) as ReleaseInfo;
  } catch {
    return {};
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
