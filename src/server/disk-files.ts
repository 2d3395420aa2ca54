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
  /** Files whose body was copied here (one may since have moved to a newer slab). */
  files: string[];
}

interface Cached {
  bytes: Buffer;
  slab: Slab;
  /** Used since its slab was last considered for eviction. */
  used: boolean;
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
    const hit = this.#cache.get(file);
    if (hit === undefined) return undefined;
    hit.used = true;
    return hit.bytes;
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
      return this.#keep(file, part) ?? Buffer.from(part);
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
    let wanted: Buffer | undefined;
    for (const c of [undefined, ...ENCODINGS]) {
      const part = partOf(bytes, c) as Buffer | undefined;
      if (!part) continue;
      const name = c ? stored + c.suffix : stored;
      if (c === coding) wanted = this.#keep(name, part) ?? Buffer.from(part);
      else if (!this.#cache.has(name) && this.#cachedBytes + part.length <= this.#budget / 2) this.#keep(name, part);
    }
    return wanted;
  }

  /** A copy of `bytes` in the newest slab, remembered for `file`; undefined when too large to keep. */
  #keep(file: string, bytes: Buffer): Buffer | undefined {
    if (bytes.length > this.#slabBytes) return undefined;
    const kept = this.#copy(file, bytes);
    this.#cache.set(file, { bytes: kept.bytes, slab: kept.slab, used: false });
    this.#cachedBytes += bytes.length;
    return kept.bytes;
  }

  #copy(file: string, bytes: Buffer): { bytes: Buffer; slab: Slab } {
    for (;;) {
      const slab = this.#slabs.at(-1);
      const copied = slab && this.#copyInto(slab, file, bytes);
      if (copied) return { bytes: copied, slab: slab! };
      this.#slabs.push({ buffer: Buffer.allocUnsafeSlow(this.#slabBytes), used: 0, files: [] });
      // After the new slab is in place, so that bodies in use move there (they may fill it: then once more,
      // and the bodies moved have had their second chance).
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
      if (entry.used && this.#slabs.length) {
        const moved = this.#copyInto(this.#slabs.at(-1)!, file, entry.bytes);
        if (moved) {
          entry.bytes = moved;
          entry.slab = this.#slabs.at(-1)!;
          entry.used = false;
          continue;
        }
      }
      this.#cache.delete(file);
      this.#cachedBytes -= entry.bytes.length;
    }
  }

  /** A copy in `slab` if it has room. */
  #copyInto(slab: Slab, file: string, bytes: Buffer): Buffer | undefined {
    if (slab.used + bytes.length > slab.buffer.length) return undefined;
    const at = slab.used;
    bytes.copy(slab.buffer, at);
    slab.used += bytes.length;
    slab.files.push(file);
    return slab.buffer.subarray(at, at + bytes.length);
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
