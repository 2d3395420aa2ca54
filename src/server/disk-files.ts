// The files of one release on disk, as the handler reads them (src/api/release-files.ts), with the
// most recently used bodies kept in memory. No index of the folder: a file is opened by the path
// the handler asks for, which its own rules made (`filesAt`, the lookup tables), never a request's
// bytes as they came. A file of a `node` release may hold its compressed codings
// (src/release/coded-file.ts): the reader answers `p/alice.html.br` from `p/alice.html` then, and
// `<file>.br` beside it otherwise (a `static` build's siblings).
import fs from 'node:fs';
import type { MaybePromise, ReleaseFiles } from '../api/release-files.ts';
import { ENCODINGS, isCompressible, type Encoding } from '../http/headers.ts';
import { isPacked, partOf } from '../release/coded-file.ts';

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

/** Bytes of file bodies kept in memory by default: the hot profiles of a large site, well under the memory of holding them all. */
export const DEFAULT_FILE_CACHE_BYTES = 128 << 20; // FILE_CACHE_MB (src/config.ts)

/** lstat's options: an absent file is `undefined`, not an exception. */
const NO_THROW = { throwIfNoEntry: false } as const;

const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EISDIR']);

/** Files above this are read without blocking the event loop, and never kept. */
const SYNC_READ_BYTES = 1 << 20;

/** Where small files are read before they are copied to where they stay. */
const scratch = Buffer.allocUnsafeSlow(SYNC_READ_BYTES);

/**
 * Kept bodies are copied into slabs of this size rather than each allocated on its own: at 100,000
 * profiles, the 74 MB of user files took 174 MB of RSS allocated one by one, 146 MB in slabs.
 */
const SLAB_BYTES = 1 << 20;

interface Slab {
  buffer: Buffer;
  /** Bytes written so far. */
  used: number;
  /** Files whose parts were copied here (one may since have moved to a newer slab). */
  files: string[];
}

/**
 * A file as kept: one entry for the file and its codings, all in one slab, so that at 1,000,000
 * profiles the map holds a million entries, not three (with three million, path lookups cost 11%
 * more CPU: 29.4-30.8 against 26.7 µs an answer, docs/scale.md).
 */
interface Cached {
  /**
   * The file itself, then its codings in ENCODINGS' order, side by side from `at` in `slab`: a
   * part's bytes once asked for (the same object every time: the handler's memo of ETags rests on
   * it), its length before (a view made for every body would be two million objects more for the
   * collector at 1,000,000 profiles); undefined where not kept.
   */
  parts: (Buffer | number | undefined)[];
  slab: Slab;
  at: number;
  /** Used since its slab was last considered for eviction. */
  used: boolean;
}

const sizeOf = (part: Buffer | number | undefined): number => (typeof part === 'number' ? part : part?.length ?? 0);

/** Bytes of all the parts kept. */
function sizeOfParts(parts: readonly (Buffer | number | undefined)[]): number {
  let size = 0;
  for (const part of parts) size += sizeOf(part);
  return size;
}

/** Every part of `entry` as bytes (views of its slab), to be copied elsewhere. */
const allPartBytes = (entry: Cached): (Buffer | undefined)[] => entry.parts.map((_, k) => partBytes(entry, k));

/** Part `k` of `entry` as bytes, made once from its place in the slab; undefined when not kept. */
function partBytes(entry: Cached, k: number): Buffer | undefined {
  const part = entry.parts[k];
  if (typeof part !== 'number') return part;
  let at = entry.at;
  for (let j = 0; j < k; j++) at += sizeOf(entry.parts[j]);
  const bytes = entry.slab.buffer.subarray(at, at + part);
  entry.parts[k] = bytes;
  return bytes;
}

/** Where `file` is kept: the entry of the file it is a coding of, and which part; or its own entry, part 0. */
function partName(file: string): [string, number] {
  for (let k = 0; k < ENCODINGS.length; k++) {
    const suffix = ENCODINGS[k]!.suffix;
    if (!file.endsWith(suffix)) continue;
    const base = file.slice(0, -suffix.length);
    return isCompressible(base) ? [base, k + 1] : [file, 0];
  }
  return [file, 0];
}

/** How long a check that a release's folder exists holds: misses in a burst pay for one stat, not one each (3.8 µs on a 9 µs 404). */
export const ROOT_CHECK_MS = 100;

/**
 * A file was not found because the release's folder itself is gone (deleted from disk while
 * served): the server answers a 503 no cache keeps, never a 404 as if the data were gone.
 */
export class ReleaseMissingError extends Error {
  readonly root: string;
  constructor(root: string) {
    super(`The release folder ${root} is gone from disk: answering 503 until a release is back.`);
    this.root = root;
  }
}

export class DiskFiles implements ReleaseFiles {
  readonly root: string;
  readonly #cache = new Map<string, Cached>();
  /** Oldest first; the last one is being filled. */
  readonly #slabs: Slab[] = [];
  readonly #budget: number;
  readonly #slabBytes: number;
  readonly #locate: ((file: string) => string | null) | undefined;
  #cachedBytes = 0;
  /** Folders found present (or absent) lately, and when: see `#miss`. */
  readonly #rootChecks = new Map<string, { at: number; present: boolean }>();

  /**
   * @param root the release's `client` folder, by its real path (a request pinned to a release never reads through the `dist` link)
   * @param locate for a layered release (src/release/layers.ts): the `client` folder holding a file, or null when there is none
   */
  constructor(root: string, budget = DEFAULT_FILE_CACHE_BYTES, locate?: (file: string) => string | null) {
    this.root = root;
    this.#locate = locate;
    this.#budget = budget;
    // At least 16 slabs, so evicting one drops at most a sixteenth of what is kept.
    this.#slabBytes = Math.min(SLAB_BYTES, Math.floor(budget / 16));
  }

  /** Bytes of file bodies held in memory now: at most the budget (the slabs holding them are too). */
  get cachedBytes(): number {
    return this.#cachedBytes;
  }

  /** The body of `file` if it is kept in memory, counted as a use; never a read (ReleaseFiles.kept). */
  kept(file: string): Uint8Array | undefined {
    const [name, k] = partName(file);
    const hit = this.#cache.get(name);
    if (hit === undefined || hit.parts[k] === undefined) return undefined;
    hit.used = true;
    return partBytes(hit, k);
  }

  /** A kept body or a small file at once (no promise to wait for), a large file later; failures reject. */
  read(file: string): MaybePromise<Uint8Array | undefined> {
    const hit = this.kept(file);
    if (hit !== undefined) return hit;
    const coding = ENCODINGS.find((e) => file.endsWith(e.suffix));
    const base = coding && file.slice(0, -coding.suffix.length);
    // The file itself (never null: that is for codings).
    if (!base || !isCompressible(base)) return this.#readStored(file, file, undefined) as MaybePromise<Uint8Array | undefined>;
    // A coding: inside its file when packed, else a sibling file beside it.
    const packed = this.#readStored(file, base, coding);
    const orSibling = (part: Uint8Array | undefined | null) => (part === null ? this.#readStored(file, file, undefined) as MaybePromise<Uint8Array | undefined> : part);
    return packed instanceof Promise ? packed.then(orSibling) : orSibling(packed);
  }

  /**
   * `coding` (undefined: the file itself) of the file stored at `stored`, kept as `file`: the part
   * of a packed file, the bytes of any other; null when `coding` was asked of a file that is not
   * packed (then a sibling file may hold it).
   */
  #readStored(file: string, stored: string, coding: Encoding | undefined): MaybePromise<Uint8Array | undefined | null> {
    // Small files are read at once: from the page cache that is a few microseconds, cheaper than a
    // trip through libuv's thread pool. A miss (an unknown name) costs one lstat, which reports an
    // absent file without the exception a failed open makes: an unknown name's answer went from 23.4 to 9.3 µs in-process.
    const root = this.#locate ? this.#locate(stored) : this.root;
    if (root === null) return this.#miss(this.root);
    // Joined, not `path.join`: the handler's paths are relative and made by its own rules (no `.`
    // segments to resolve), and a 404 of an unknown name spent a tenth of its in-process time there.
    const where = `${root}/${stored}`;
    let fd: number;
    try {
      const st = fs.lstatSync(where, NO_THROW);
      // Only regular files: the build writes nothing else, a link is refused, and a FIFO must never hang a request.
      if (!st?.isFile()) return this.#miss(root);
      fd = fs.openSync(where, fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      // No such file (or a link, refused by O_NOFOLLOW). Anything else (out of descriptors, a disk
      // error) is a failure of ours, answered as a 500 no cache keeps, never as a 404 it would.
      if (ABSENT.has((e as NodeJS.ErrnoException).code!)) return this.#miss(root);
      return Promise.reject(e as Error);
    }
    try {
      // fstat of what was opened: the lstat above saw the name, this is the file.
      const st = fs.fstatSync(fd);
      if (!st.isFile()) { fs.closeSync(fd); return undefined; }
      const size = st.size;
      const unpack = coding || isCompressible(stored);
      if (size > SYNC_READ_BYTES) return this.#readLarge(fd, size).then((bytes) => (unpack ? partOrNull(bytes, coding) : bytes));
      let at = 0;
      for (let n; at < size && (n = fs.readSync(fd, scratch, at, size - at, at)) > 0;) at += n;
      fs.closeSync(fd);
      const bytes = scratch.subarray(0, at);
      // A packed file is read once for all its codings: each part is kept under its own name, so the
      // client asking for brotli after one that asked for none (or the other way) reads no disk.
      if (unpack && isPacked(bytes)) return this.#keepParts(stored, bytes, coding);
      const part = unpack ? partOrNull(bytes, coding) : bytes;
      if (!part) return part;
      const [name, k] = partName(file);
      const kept = this.#keep(name, [[k, part]]);
      return kept ? partBytes(kept, k) : Buffer.from(part);
    } catch (e) {
      try { fs.closeSync(fd); } catch { /* closed already */ }
      return Promise.reject(e as Error);
    }
  }

  /**
   * A file that is not there: absent (undefined) while the folder it was looked for in exists, a
   * ReleaseMissingError once that folder is gone. Only misses pay for the check, memoised for ROOT_CHECK_MS.
   */
  #miss(root: string): undefined | Promise<never> {
    const now = performance.now();
    let check = this.#rootChecks.get(root);
    if (check === undefined || now - check.at > ROOT_CHECK_MS) {
      check = { at: now, present: fs.statSync(root, NO_THROW)?.isDirectory() === true };
      this.#rootChecks.set(root, check);
    }
    return check.present ? undefined : Promise.reject(new ReleaseMissingError(root));
  }

  async #readLarge(fd: number, size: number): Promise<Buffer> {
    const read = (b: Buffer, off: number, len: number, pos: number) => new Promise<number>((resolve, reject) =>
      fs.read(fd, b, off, len, pos, (err, n) => (err ? reject(err) : resolve(n))));
    try {
      const buf = Buffer.allocUnsafe(size);
      let at = 0;
      for (let n; at < size && (n = await read(buf, at, size - at, at)) > 0;) at += n;
      return buf.subarray(0, at);
    } finally {
      fs.close(fd, () => {});
    }
  }

  /**
   * Keeps `coding`'s part of the packed file `stored` (undefined: the file itself) under its name and
   * returns it, or undefined when the file has none; its other parts too while the cache is less
   * than half full, so that codings no one asked for yet never take the room of those asked for.
   */
  #keepParts(stored: string, bytes: Buffer, coding: Encoding | undefined): Buffer | undefined {
    const wanted = coding ? 1 + ENCODINGS.indexOf(coding) : 0;
    const have = this.#cache.get(stored)?.parts;
    const add: [number, Buffer][] = [];
    let extra = 0;
    for (let k = 0; k <= ENCODINGS.length; k++) {
      const part = partOf(bytes, k === 0 ? undefined : ENCODINGS[k - 1]) as Buffer | undefined;
      if (!part || have?.[k] !== undefined) continue;
      if (k === wanted) add.push([k, part]);
      else if (this.#cachedBytes + extra + part.length <= this.#budget / 2) {
        add.push([k, part]);
        extra += part.length;
      }
    }
    // Too large to keep together: the part asked for alone, if it fits.
    let kept = add.length ? this.#keep(stored, add) : undefined;
    if (!kept && add.length > 1) kept = this.#keep(stored, add.filter(([k]) => k === wanted));
    if (kept) return partBytes(kept, wanted);
    const part = partOf(bytes, coding) as Buffer | undefined;
    return part && Buffer.from(part);
  }

  /**
   * Copies `add` (parts by their place) into the newest slab, beside the parts of `name` kept
   * already (moved there with them), and remembers them; returns the new entry, or undefined when
   * they are too large to keep together.
   */
  #keep(name: string, add: [number, Buffer][]): Cached | undefined {
    const entry = this.#cache.get(name);
    const parts = entry ? allPartBytes(entry) : new Array<Buffer | undefined>(1 + ENCODINGS.length).fill(undefined);
    for (const [k, bytes] of add) parts[k] = bytes;
    const total = sizeOfParts(parts);
    if (total > this.#slabBytes) return undefined;
    // Evicting for room may drop or move the entry itself: its parts are copied from `parts`, views
    // of the slab it was in, which they keep alive until then.
    const slab = this.#room(total);
    const kept: Cached = { parts, slab, at: slab.used, used: false };
    this.#copyInto(slab, name, kept);
    const before = sizeOfParts(this.#cache.get(name)?.parts ?? []);
    this.#cache.set(name, kept);
    this.#cachedBytes += total - before;
    return kept;
  }

  /** The newest slab, with at least `bytes` free: a new one when it has not, the oldest evicted past the budget. */
  #room(bytes: number): Slab {
    for (;;) {
      const slab = this.#slabs.at(-1);
      if (slab && slab.used + bytes <= slab.buffer.length) return slab;
      this.#slabs.push({ buffer: Buffer.allocUnsafeSlow(this.#slabBytes), used: 0, files: [] });
      // After the new slab is in place, so that files in use move there (they may fill it: then once more,
      // and the files moved have had their second chance).
      while (this.#slabs.length * this.#slabBytes > this.#budget && this.#slabs.length > 1) this.#evictOldest();
    }
  }

  /**
   * Second chance, a slab at a time: the oldest slab goes; a body used since it last came round is
   * copied to the newest slab, others leave. Hits cost a flag, not a reorder, and files in use stay.
   */
  #evictOldest(): void {
    const oldest = this.#slabs.shift()!;
    for (const file of oldest.files) {
      const entry = this.#cache.get(file);
      if (!entry || entry.slab !== oldest) continue;
      const newest = this.#slabs.at(-1);
      const size = sizeOfParts(entry.parts);
      if (entry.used && newest && newest.used + size <= newest.buffer.length) {
        entry.parts = allPartBytes(entry);
        entry.slab = newest;
        entry.at = newest.used;
        entry.used = false;
        this.#copyInto(newest, file, entry);
        continue;
      }
      this.#cache.delete(file);
      this.#cachedBytes -= size;
    }
  }

  /**
   * Copies the parts of `entry` (bytes, elsewhere) into `slab` from `entry.at`, its end, which has
   * room for them, one after the other; each is then its length, made into bytes when asked for.
   */
  #copyInto(slab: Slab, file: string, entry: Cached): void {
    const { parts } = entry;
    for (let k = 0; k < parts.length; k++) {
      const bytes = parts[k];
      if (bytes === undefined || typeof bytes === 'number') continue;
      bytes.copy(slab.buffer, slab.used);
      slab.used += bytes.length;
      parts[k] = bytes.length;
    }
    slab.files.push(file);
  }
}

/**
 * `coding` of stored bytes (undefined: the file itself): its part of a packed file, undefined when
 * that file has no such coding; null when a coding was asked of a file that is not packed.
 */
function partOrNull(bytes: Buffer, coding: Encoding | undefined): Buffer | undefined | null {
  if (coding && !isPacked(bytes)) return null;
  return partOf(bytes, coding) as Buffer | undefined;
}
