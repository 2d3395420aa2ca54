// Releases, the way atomic deploys work. Every build writes a complete folder of its own under
// `<DIST_DIR>.releases/`, and `<DIST_DIR>` is a symbolic link to the one being served. A build
// writes its release as `.building-<id>` (not a release: anything not named like one is a leftover
// of a dead build and removed by the next), renames it to `<id>` when it is complete, and switches
// `<DIST_DIR>` to it with one rename of a new link over the old one: at every instant `<DIST_DIR>`
// is either the old release or the new one, both complete. Only a build holding the build lock
// (lock.ts) or `npm run rollback` changes anything here.
//
//   dist -> dist.releases/000042-20261122T192300Z
//   dist.releases/000040-…  000041-…  000042-…   kept releases, never modified once named
//   dist.releases/.building-000043-…             the build in progress (or a dead one's leftovers)
//   dist.releases/.pruning-000039-…              a release being removed
//   dist.releases/build.lock                     who is building (lock.ts)
import fs from 'node:fs';
import path from 'node:path';
import { layerReleases, type Layers } from './layers.ts';

/** Releases kept after a build: the new one, the one served before it (the rollback) and the newest others. */
export const KEEP_RELEASES = 3;

/** `<sequence>-<UTC time>`: the sequence orders releases whatever the clock says. */
const RELEASE_NAME = /^(\d{6,})-\d{8}T\d{6}Z$/;
const BUILDING = '.building-';
const PRUNING = '.pruning-';
/** The build lock and its takeover guard live here too, and are never leftovers. */
export const LOCK_FILE = 'build.lock';

export const releasesDir = (distDir: string) => `${distDir}.releases`;
export const releasePath = (distDir: string, id: string) => path.join(releasesDir(distDir), id);
export const isReleaseId = (name: string) => RELEASE_NAME.test(name);
const sequenceOf = (id: string) => Number(RELEASE_NAME.exec(id)![1]);

/** Where a build writes its release until it is complete. */
export const buildingPath = (distDir: string, id: string) => path.join(releasesDir(distDir), `${BUILDING}${id}`);

/** Every complete release, oldest first. */
export function listReleases(distDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(releasesDir(distDir));
  } catch {
    return [];
  }
  return names.filter(isReleaseId).sort((a, b) => sequenceOf(a) - sequenceOf(b));
}

/** The id for the next release: one past the highest sequence ever seen here. */
export function nextReleaseId(distDir: string, now = new Date()): string {
  let highest = 0;
  for (const name of safeReaddir(releasesDir(distDir))) {
    // What a dead build left counts too, `.building-<id>.users` and `.shard<k>` included: a new build
    // with that id in the same second would write into the folder its own clean-up is deleting.
    const id = (name.startsWith(BUILDING) ? name.slice(BUILDING.length) : name.startsWith(PRUNING) ? name.slice(PRUNING.length) : name).replace(/\..*$/, '');
    if (isReleaseId(id)) highest = Math.max(highest, sequenceOf(id));
  }
  const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
  return `${String(highest + 1).padStart(6, '0')}-${stamp}`;
}

/**
 * The release `<DIST_DIR>` points at, or undefined: no `<DIST_DIR>`, or a plain folder (a build
 * from before releases, see `adoptPlainBuild`), or a link somewhere else.
 */
export function servedRelease(distDir: string): string | undefined {
  let target: string;
  try {
    target = fs.readlinkSync(distDir);
  } catch {
    return undefined;
  }
  const resolved = path.resolve(path.dirname(distDir), target);
  return path.dirname(resolved) === releasesDir(distDir) && isReleaseId(path.basename(resolved)) ? path.basename(resolved) : undefined;
}

export interface ReleaseInfo {
  id: string;
  /** The release served when this one was switched in: where `npm run rollback` goes. */
  previous: string | null;
  builtAt: string;
  /** Set when the release holds only what changed since its base (layers.ts). */
  layers?: Layers;
  /** Assets of earlier releases it keeps for pages cached before it, and since when (src/build/files/retired-assets.ts). */
  retiredAssets?: Record<string, string>;
}

export const RELEASE_INFO_FILE = 'release.json';

export function writeReleaseInfo(dir: string, info: ReleaseInfo): void {
  fs.writeFileSync(path.join(dir, RELEASE_INFO_FILE), `${JSON.stringify(info)}\n`);
}

export function readReleaseInfo(distDir: string, id: string): ReleaseInfo | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(releasePath(distDir, id), RELEASE_INFO_FILE), 'utf8')) as ReleaseInfo;
  } catch {
    return undefined;
  }
}

/**
 * Points `<DIST_DIR>` at release `id` in one atomic step: a new link made under a temporary name,
 * then renamed over the old one (rename(2) replaces its target atomically; a reader sees the old
 * link or the new one, never neither). `beforeRename` is the test hook of the build's fault
 * injection: a kill there leaves the temporary link, which the next build removes.
 */
export function switchRelease(distDir: string, id: string, beforeRename: () => void = () => {}): void {
  const target = releasePath(distDir, id);
  if (!fs.statSync(target).isDirectory()) throw new Error(`${target} is not a release`);
  const temp = `${distDir}.switch-${process.pid}`;
  fs.rmSync(temp, { force: true });
  fs.symlinkSync(path.relative(path.dirname(distDir), target), temp);
  beforeRename();
  fs.renameSync(temp, distDir);
  syncDir(path.dirname(distDir));
}

/**
 * A `<DIST_DIR>` that is a plain folder (built before releases existed) becomes a release, and
 * `<DIST_DIR>.prev` the one before it, so they stay served and available to roll back to. Between
 * the rename of the folder and that of the link `<DIST_DIR>` does not exist; `recoverLink` mends a
 * kill in that instant. Returns the adopted ids.
 */
export function adoptPlainBuild(distDir: string): string[] {
  const adopted: string[] = [];
  fs.mkdirSync(releasesDir(distDir), { recursive: true });
  const prev = `${distDir}.prev`;
  if (isPlainDir(prev)) {
    const id = nextReleaseId(distDir);
    fs.renameSync(prev, releasePath(distDir, id));
    adopted.push(id);
  }
  if (isPlainDir(distDir)) {
    const id = nextReleaseId(distDir);
    const temp = `${distDir}.switch-${process.pid}`;
    fs.rmSync(temp, { force: true });
    fs.symlinkSync(path.relative(path.dirname(distDir), releasePath(distDir, id)), temp);
    fs.renameSync(distDir, releasePath(distDir, id));
    fs.renameSync(temp, distDir);
    adopted.push(id);
  }
  // What the old two-rename swap left behind.
  for (const leftover of [`${distDir}.next`, `${distDir}.users`]) fs.rmSync(leftover, { recursive: true, force: true });
  return adopted;
}

/** A missing `<DIST_DIR>` with releases beside it (a kill while adopting a plain build) links the newest again. */
export function recoverLink(distDir: string): string | undefined {
  if (fs.existsSync(distDir) || isLink(distDir)) return undefined;
  const newest = listReleases(distDir).at(-1);
  if (newest) switchRelease(distDir, newest);
  return newest;
}

/**
 * Which releases a build that will switch to `newId` removes: all but the new one, the one served
 * now (the rollback after the switch), the newest others up to `keep`, and every release one of
 * those reads files from (`readsFrom`, layers.ts). The new release reads only from the served one
 * and what that reads from.
 */
export function releasesToPrune(ids: readonly string[], served: string | undefined, newId: string, keep = KEEP_RELEASES, readsFrom: (id: string) => readonly string[] = () => []): string[] {
  const kept = new Set([newId, ...(served ? [served] : [])]);
  for (const id of [...ids].reverse()) {
    if (kept.size >= keep) break;
    kept.add(id);
  }
  for (const id of [...kept]) for (const dep of readsFrom(id)) kept.add(dep);
  return ids.filter((id) => !kept.has(id));
}

/** The releases release `id` reads files from (its layers), from its release.json. */
export const readsFromOf = (distDir: string) => (id: string): string[] => layerReleases(readReleaseInfo(distDir, id)?.layers);

/**
 * Takes a release out of the list with one rename (it is no longer a release from that instant, so
 * nothing rolls back to a half-removed one) and returns where it now is, to be removed.
 */
export function retireRelease(distDir: string, id: string): string {
  const to = path.join(releasesDir(distDir), `${PRUNING}${id}`);
  fs.renameSync(releasePath(distDir, id), to);
  return to;
}

/**
 * What dead builds left: half-written `.building-*` folders (and their shard and user-file
 * folders), `.pruning-*` folders, temporary links beside `<DIST_DIR>`. Only call it holding the
 * build lock. Returns the paths, to be removed (in a thread of their own: they can be big).
 */
export function leftovers(distDir: string): string[] {
  const dir = releasesDir(distDir);
  const found = safeReaddir(dir).filter((name) => !isReleaseId(name) && !name.startsWith(LOCK_FILE)).map((name) => path.join(dir, name));
  const base = `${path.basename(distDir)}.switch-`;
  for (const name of safeReaddir(path.dirname(distDir))) if (name.startsWith(base)) found.push(path.join(path.dirname(distDir), name));
  return found;
}

/** Makes a rename in `dir` durable: without it a power cut can undo the switch after the build said it was done. */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Not every platform can sync a folder (Windows); the rename itself is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function isPlainDir(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
