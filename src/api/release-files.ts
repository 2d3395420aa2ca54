// What the on-demand handler reads: the files of one build's public output (`dist/client`), by
// their path there. Each deploy target supplies its own reader (src/server/disk-files.ts on Node,
// src/edge/asset-files.ts on Cloudflare, `IndexFiles` below under `astro dev` and in tests), so the
// handler holds no index of the directory: its memory does not grow with the number of profiles.
import { IMAGE_TYPES } from '../schemas/common.ts';
import type { IndexColumns, SiteIndex } from '../model/site-index.ts';
import type { CreatorRow } from '../model/creators-list.ts';
import { nameFilterBytes, parseNameFilter, type NameFilter } from './name-filter.ts';

export interface ReleaseFiles {
  /**
   * A file of the build's public output by its path there, without a leading slash
   * (`api/v1/users/alice`, `p/alice.html`, `_lookup/creators.json`), or undefined when there is
   * none. Callers pass only paths made by this project's own rules (`filesAt`, the lookup tables),
   * never a request's bytes as they came. A reader may answer at once (DiskFiles does for small
   * files): the handler then answers without a promise; with DiskFiles' other changes of that
   * commit, a query lookup went from 13.7 to 10.7 µs in-process (docs/scale.md, "Lookups from the files").
   */
  read(file: string): MaybePromise<Uint8Array | undefined>;
  /**
   * The body of `file` if the reader holds it in memory now (counted as a use, as `read` would),
   * else undefined: never a read. The handler asks this before the filter of user names, so a
   * lookup of a kept profile does not pay for the filter's hashing (0.3-0.5 µs in-process).
   */
  kept?(file: string): Uint8Array | undefined;
  /**
   * The runtime compresses an answer's body itself when its Content-Encoding is set (Workers): the
   * handler then names the coding of every compressible answer (response.ts `runtimeEncoded`)
   * rather than reading compressed siblings, which a Cloudflare build does not write.
   */
  readonly runtimeEncodes?: boolean;
}

/** A value now, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/** The folder of the data files only the handler reads (lookup tables, the creators rows); never served as they are. */
export const LOOKUP_DIR = '_lookup';
export const CREATORS_ROWS_FILE = `${LOOKUP_DIR}/creators.json`;
/** The Bloom filter of the names with a user file (name-filter.ts). */
export const USER_NAMES_FILE = `${LOOKUP_DIR}/users.bloom`;

/** Lookup tables of the handler: key → value, split in buckets so that a lookup reads one small file. */
export type LookupTable = 'avatars' | 'domains';

/**
 * Buckets per table. Fixed, so a reader needs no manifest: 100,000 avatars are 256 files of ~12 KB,
 * and a small site writes only the buckets it fills.
 */
export const LOOKUP_BUCKETS = 256;

/** FNV-1a over the key's UTF-16 units: the same on every runtime. */
export function fnv1a(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The bucket of a lookup table a key is in. */
export const bucketOf = (key: string): number => fnv1a(key) % LOOKUP_BUCKETS;

const bucketFile = (table: LookupTable, bucket: number) => `${LOOKUP_DIR}/${table}/${bucket.toString(16).padStart(2, '0')}.json`;
export const lookupFile = (table: LookupTable, key: string) => bucketFile(table, bucketOf(key));

/** The bucket files of a table: path → JSON text of `{ key: value }` (keys sorted, so the bytes are reproducible). */
export function lookupTableFiles(table: LookupTable, entries: Iterable<readonly [string, string]>): Map<string, string> {
  // Each bucket's name made once, not once a key: a million keys at 1,000,000 profiles.
  const files = Array.from({ length: LOOKUP_BUCKETS }, (_, bucket) => bucketFile(table, bucket));
  return bucketFiles(entries, (key) => files[bucketOf(key)]!);
}

/**
 * `entries` in the files `fileOf` puts their keys in: path → JSON text of `{ key: value }`, files
 * and keys in code-unit order. The text is written pair by pair, not through an object, which put
 * integer-like keys (a user named `123`) first and cost 2x the time (`lookupFiles` at 1,000,000
 * profiles: BENCHMARKS.md, "Finishing the API files at 1,000,000").
 */
export function bucketFiles<V>(entries: Iterable<readonly [string, V]>, fileOf: (key: string) => string): Map<string, string> {
  const buckets = new Map<string, (readonly [string, V])[]>();
  // Entries in key order (the columns' names) stay in order in their buckets: no sort, which at a
  // million keys was a third of the time, each comparison reading two strings far apart in memory.
  let inOrder = true;
  let last: string | undefined;
  for (const entry of entries) {
    const key = entry[0];
    if (last !== undefined && key < last) inOrder = false;
    last = key;
    const file = fileOf(key);
    const list = buckets.get(file);
    if (list) list.push(entry);
    else buckets.set(file, [entry]);
  }
  const out = new Map<string, string>();
  for (const [file, list] of [...buckets].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!inOrder) list.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    let text = '{';
    for (let i = 0; i < list.length; i++) {
      // A key twice (never from valid content): the last value, as JSON.parse would take it from an object's text.
      if (i + 1 < list.length && list[i + 1]![0] === list[i]![0]) continue;
      text += `${text.length > 1 ? ',' : ''}${JSON.stringify(list[i]![0])}:${JSON.stringify(list[i]![1])}`;
    }
    out.set(file, `${text}}`);
  }
  return out;
}

const decoder = new TextDecoder();

/** The value of `key` in a lookup table, or undefined. `Object.hasOwn`: a key named `__proto__` or `constructor` is only data. */
export async function lookup(files: ReleaseFiles, table: LookupTable, key: string): Promise<string | undefined> {
  const bytes = await files.read(lookupFile(table, key));
  if (!bytes) return undefined;
  const map = JSON.parse(decoder.decode(bytes)) as Record<string, string>;
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** A release's filter of user names, read once per release files; null when it has none (an older release) or it could not be read. */
const userNamesOf = new WeakMap<ReleaseFiles, MaybePromise<NameFilter | null>>();

/**
 * The filter of the user names of a release: at once after its first read (DiskFiles reads it at
 * once too), so a lookup waits for nothing more than before. A failed read is not remembered: that
 * request reads the user file, and the next one tries the filter again.
 */
export function userNames(files: ReleaseFiles): MaybePromise<NameFilter | null> {
  let known = userNamesOf.get(files);
  if (known === undefined) {
    const bytes = files.read(USER_NAMES_FILE);
    known = bytes instanceof Promise
      ? bytes.then(
        (b) => { const filter = parseNameFilter(b) ?? null; userNamesOf.set(files, filter); return filter; },
        () => { userNamesOf.delete(files); return null; },
      )
      : parseNameFilter(bytes) ?? null;
    userNamesOf.set(files, known);
  }
  return known;
}

/** The creators rows file: the site's address and every active creator's summary and creation time, in the default order. */
export interface CreatorsRows {
  siteUrl: string;
  rows: CreatorRow[];
}

export function creatorsRows(index: SiteIndex): CreatorsRows {
  if (index.creatorRows) return { siteUrl: index.siteUrl, rows: index.creatorRows };
  // Parsed for the creators only: a few thousand of 100,000 users.
  const creators = new Set(index.creators.map((c) => c.username));
  const createdAt = new Map<string, number>();
  for (const u of index.users) if (creators.has(u.username)) createdAt.set(u.username, Date.parse(u.createdAt));
  return { siteUrl: index.siteUrl, rows: index.creators.map((summary) => ({ summary, createdAt: createdAt.get(summary.username)! })) };
}

/**
 * The lookup files of a build: which avatar file each profile has, which profile each custom domain
 * serves, the creators rows, and which names have a user file. Made from the index's columns, the
 * same in a cold build and an edit build (src/build/derived.ts), which makes only the parts whose
 * columns changed (`parts`).
 */
export function lookupFiles(c: IndexColumns, parts: { tables: boolean; creators: boolean; names: boolean } = { tables: true, creators: true, names: true }): Map<string, string | Uint8Array> {
  const files = new Map<string, string | Uint8Array>();
  if (parts.tables) {
    const avatars: [string, string][] = [];
    const domains: [string, string][] = [];
    for (let i = 0; i < c.names.length; i++) {
      if (c.avatars[i] !== null) avatars.push([c.names[i]!, c.avatars[i]!]);
      if (c.domains[i] !== null) domains.push([c.domains[i]!, c.names[i]!]);
    }
    for (const [file, text] of lookupTableFiles('avatars', avatars)) files.set(file, text);
    for (const [file, text] of lookupTableFiles('domains', domains)) files.set(file, text);
  }
  if (parts.creators) files.set(CREATORS_ROWS_FILE, JSON.stringify({ siteUrl: c.siteUrl, rows: c.creatorRows as CreatorRow[] } satisfies CreatorsRows));
  if (parts.names) files.set(USER_NAMES_FILE, nameFilterBytes(c.names));
  return files;
}

/** Whether a file name may be an image the handler serves: a plain name with an image extension. */
export function imageTypeOf(file: string): string | undefined {
  if (file.includes('/') || file.includes('\\') || file.startsWith('.')) return undefined;
  return IMAGE_TYPES[file.slice(file.lastIndexOf('.') + 1).toLowerCase()];
}
