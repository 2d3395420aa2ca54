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

/**
 * The bucket files of a table: path → JSON text of `{ key: value }`. Entry `i` is `keys[i]` →
 * `values[i]`, where neither is null: parallel columns, not a pair per entry (lookupFiles).
 */
export function lookupTableFiles(table: LookupTable, keys: readonly (string | null)[], values: readonly (string | null)[]): Map<string, string> {
  // Each bucket's name made once, not once a key: a million keys at 1,000,000 profiles.
  const files = Array.from({ length: LOOKUP_BUCKETS }, (_, bucket) => bucketFile(table, bucket));
  return bucketFiles(keys, values, (key) => files[bucketOf(key)]!);
}

/**
 * Entries `keys[i]` → `values[i]` (both not null) in the files `fileOf` puts their keys in: path →
 * JSON text of `{ key: value }`, files and keys in code-unit order, a key given twice its last
 * value (as JSON.parse would take it from an object's text; never from valid content). Each file's
 * text is written as bytes, entry after entry in the keys' order: at 1,000,000 profiles, pairs,
 * lists and strings made per entry outlived V8's young generation and were copied by each
 * collection (BENCHMARKS.md, "The lookup tables without an object per entry").
 */
export function bucketFiles<V>(keys: readonly (string | null)[], values: readonly (V | null)[], fileOf: (key: string) => string): Map<string, string> {
  // The entries' indices in key order: as they come when the keys are sorted already (the
  // columns' names); sorted otherwise (custom domains), equal keys in the order given.
  const indices = new Uint32Array(keys.length);
  let count = 0;
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] == null || values[i] == null) continue;
    if (count > 0 && keys[i]! < keys[indices[count - 1]!]!) inOrder = false;
    indices[count++] = i;
  }
  const order = indices.subarray(0, count);
  if (!inOrder) order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
  const texts = new Map<string, JsonBytes>();
  for (let p = 0; p < count; p++) {
    const i = order[p]!;
    const key = keys[i]!;
    if (p + 1 < count && keys[order[p + 1]!] === key) continue;
    const file = fileOf(key);
    let text = texts.get(file);
    if (text) text.ascii(',');
    else texts.set(file, text = new JsonBytes('{'));
    text.string(key);
    text.ascii(':');
    text.json(values[i]);
  }
  const out = new Map<string, string>();
  for (const file of [...texts.keys()].sort()) {
    const text = texts.get(file)!;
    text.ascii('}');
    out.set(file, text.toString());
  }
  return out;
}

/** Printable ASCII but `"` and `\`: a string JSON writes as it is, between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const encoder = new TextEncoder();

/** JSON text written as UTF-8 into one growing buffer, for `bucketFiles`. */
class JsonBytes {
  #bytes = new Uint8Array(1024);
  #length = 0;
  constructor(start: string) { this.ascii(start); }
  #room(more: number) {
    if (this.#length + more <= this.#bytes.length) return;
    const bigger = new Uint8Array(Math.max(this.#bytes.length * 2, this.#length + more));
    bigger.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = bigger;
  }
  /** `s` of ASCII characters only, as they are. */
  ascii(s: string) {
    this.#room(s.length);
    this.#copy(s);
  }
  /** A string as JSON writes it. */
  string(s: string) {
    if (!PLAIN.test(s)) return this.#utf8(JSON.stringify(s));
    // Byte by byte, not through `"${s}"`: no string made per entry (5% of the time at 1,000,000).
    this.#room(s.length + 2);
    this.#bytes[this.#length++] = 0x22;
    this.#copy(s);
    this.#bytes[this.#length++] = 0x22;
  }
  /** Any value as JSON writes it. */
  json(v: unknown) {
    if (typeof v === 'string') this.string(v);
    else this.#utf8(JSON.stringify(v));
  }
  #copy(ascii: string) {
    for (let i = 0; i < ascii.length; i++) this.#bytes[this.#length++] = ascii.charCodeAt(i);
  }
  #utf8(s: string) {
    this.#room(s.length * 3);
    this.#length += encoder.encodeInto(s, this.#bytes.subarray(this.#length)).written;
  }
  toString() { return decoder.decode(this.#bytes.subarray(0, this.#length)); }
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
    for (const [file, text] of lookupTableFiles('avatars', c.names, c.avatars)) files.set(file, text);
    for (const [file, text] of lookupTableFiles('domains', c.domains, c.names)) files.set(file, text);
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
