// Layered releases: a rebuild that changed a few profiles writes a release holding only what
// changed. Three folders hold a file per profile (pages, user answers) or per image; a release
// whose `layers` are set holds only the files of those folders that changed and reads the others
// from its base, a whole release, or from the release named for them. Every other file (the home
// page, the creators list, the lookup tables, ...) is in every release. So a rebuild at 100,000
// profiles writes and links a few hundred files instead of 200,000, and the switch is the same
// one rename (docs/reliability.md). Releases that a kept release reads from are kept with it.
//
// A file's compressed siblings (`p/alice.html.br`: src/build/files/compress.ts) are layered with it: they
// are where it is, and `from` names only the file.
import fs from 'node:fs';
import path from 'node:path';
import { ENCODINGS, compressedBaseOf } from '../http/headers.ts';

/** The profile pages' folder. */
export const PAGES_DIR = 'p/';
/** The folders (under `client/`) whose files a layered release may leave to its base. */
export const LAYERED_DIRS = [PAGES_DIR, 'api/v1/users/', 'media/'] as const;

export const isLayered = (file: string): boolean => LAYERED_DIRS.some((dir) => file.startsWith(dir));

export interface Layers {
  /** A whole release: the layered folders' files not named in `from` are read from it. */
  base: string;
  /** Layered file (relative to `client/`, with `/`) → the release holding it, or null: removed since `base`. */
  from: Record<string, string | null>;
}

/**
 * Past this many files named in `from`, a build writes a whole release again instead: the list is
 * read by every server that loads the release, and the layers save little once so much changed.
 */
export const maxLayeredFiles = (profiles: number): number => Math.max(2_000, Math.ceil(profiles / 20));

/** The releases `layers` reads from. */
export const layerReleases = (layers: Layers | undefined): string[] =>
  layers ? [...new Set([layers.base, ...Object.values(layers.from).filter((id): id is string => id !== null)])] : [];

/**
 * Where a file of the release `ownClient` (its `client` folder) is: the `client` folder to read it
 * from, or null when the release has no such file. Without layers, always its own folder.
 */
export function locator(releasesDir: string, ownClient: string, layers: Layers | undefined): (file: string) => string | null {
  if (!layers) return () => ownClient;
  const clients = new Map<string, string>();
  const clientOf = (id: string) => {
    let dir = clients.get(id);
    if (!dir) clients.set(id, dir = path.join(releasesDir, id, 'client'));
    return dir;
  };
  const base = clientOf(layers.base);
  const from = new Map(Object.entries(layers.from));
  return (file) => {
    const id = from.get(compressedBaseOf(file) ?? file);
    if (id !== undefined) return id === null ? null : clientOf(id);
    return isLayered(file) ? base : ownClient;
  };
}

/** A hard link of `from` at `to`, or a copy where the file system has none; never over a file at `to`. */
export function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return;
    fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
  }
}

/**
 * Brings into the release `id` (its `client` folder `ownClient`) the files its layers read from
 * releases other than its base, itself and `keep` (the release served as it is built, its rollback),
 * as hard links, and names itself for them. A release then reads from its base, itself and the one
 * served before it, so releases kept to be read from stay a few: named as they were, every edit
 * build's release stayed while a later one read one file of it (31 releases after 30 edits).
 * Returns how many files it brought.
 */
export function gatherLayers(releasesDir: string, ownClient: string, id: string, layers: Layers, keep: string | undefined): number {
  let brought = 0;
  const made = new Set<string>();
  for (const [file, from] of Object.entries(layers.from)) {
    if (from === null || from === id || from === layers.base || from === keep) continue;
    const source = path.join(releasesDir, from, 'client', file);
    const to = path.join(ownClient, file);
    const dir = path.dirname(to);
    if (!made.has(dir)) fs.mkdirSync(dir, { recursive: true });
    made.add(dir);
    // Layered releases are the Node server's, whose codings are inside each file: no siblings to bring.
    linkOrCopy(source, to);
    layers.from[file] = id;
    brought++;
  }
  return brought;
}

/**
 * The names of the files of one layered folder (`dir` as in LAYERED_DIRS, any depth) as the release
 * sees them, in no particular order.
 */
export function layeredFiles(releasesDir: string, ownClient: string, layers: Layers | undefined, dir: string): string[] {
  if (!layers) return listFiles(path.join(ownClient, dir)).map((f) => `${dir}${f}`);
  // The base's files but those this release removes or takes from elsewhere, then those: a few
  // changes to 100,000 names, so no Set of all of them.
  const changed = new Set<string>();
  const added: string[] = [];
  for (const [file, id] of Object.entries(layers.from)) {
    if (!file.startsWith(dir)) continue;
    changed.add(file);
    if (id === null) continue;
    added.push(file);
    // Its siblings, from where it is: a stat each, for the few files named.
    const client = path.join(releasesDir, id, 'client');
    for (const e of ENCODINGS) if (fs.existsSync(path.join(client, file + e.suffix))) added.push(file + e.suffix);
  }
  const base = listBase(path.join(releasesDir, layers.base, 'client', dir), dir);
  return changed.size ? [...base.filter((f) => !changed.has(compressedBaseOf(f) ?? f)), ...added] : [...base];
}

/** Every file of a release (relative to `client/`, with `/`), those it reads from other releases included. */
export function releaseFiles(releasesDir: string, ownClient: string, layers: Layers | undefined): string[] {
  const own = listFiles(ownClient);
  if (!layers) return own;
  return [...own.filter((f) => !isLayered(f)), ...LAYERED_DIRS.flatMap((dir) => layeredFiles(releasesDir, ownClient, layers, dir))];
}

/**
 * Files under `dir`, relative to it with `/`; none when it does not exist. A folder per level, names
 * joined by hand: the recursive readdir and a `path.relative` per file took 1.3 s for 100,000 pages.
 * `skip`: folders (relative, ending in `/`) not walked, such as LAYERED_DIRS: at 1,000,000 profiles
 * listing the pages alone took 13 s and 500 MB.
 */
export function listFiles(dir: string, skip: readonly string[] = []): string[] {
  const files: string[] = [];
  const walk = (abs: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isFile()) files.push(rel + e.name);
      else if (e.isDirectory() && !skip.includes(`${rel}${e.name}/`)) walk(`${abs}/${e.name}`, `${rel}${e.name}/`);
    }
  };
  walk(dir, '');
  return files;
}

/**
 * A base release's files of a layered folder, each with `prefix`, listed once per process: a base
 * is a whole release, never written again, and a build lists its pages twice (page reuse, `_headers`).
 */
const baseListings = new Map<string, string[]>();
function listBase(dir: string, prefix: string): string[] {
  const key = `${dir}\0${prefix}`;
  let files = baseListings.get(key);
  if (!files) baseListings.set(key, files = listFiles(dir).map((f) => `${prefix}${f}`));
  return files;
}
