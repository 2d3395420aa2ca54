// The files of one release on disk, as the handler reads them (src/api/release-files.ts), with the
// most recently used bodies kept in memory. No index of the folder: a file is opened by the path
// the handler asks for, which its own rules made (`filesAt`, the lookup tables), never a request's
// bytes as they came.
import fs from 'node:fs';
import path from 'node:path';
import type { ReleaseFiles } from '../api/release-files.ts';

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

/** Bytes of file bodies kept in memory by default: the hot profiles of a large site, well under the memory of holding them all. */
export const DEFAULT_FILE_CACHE_BYTES = 128 << 20; // FILE_CACHE_MB (src/config.ts)

const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EISDIR']);

/** Files above this are read without blocking the event loop, and never kept. */
const SYNC_READ_BYTES = 1 << 20;

interface Cached {
  bytes: Buffer;
  /** Used since the cache last considered evicting it. */
  used: boolean;
}

export class DiskFiles implements ReleaseFiles {
  readonly root: string;
  readonly #cache = new Map<string, Cached>();
  readonly #budget: number;
  #cachedBytes = 0;

  /** @param root the release's `client` folder, by its real path (a request pinned to a release never reads through the `dist` link) */
  constructor(root: string, budget = DEFAULT_FILE_CACHE_BYTES) {
    this.root = root;
    this.#budget = budget;
  }

  /** Bytes of file bodies held in memory now: at most the budget. */
  get cachedBytes(): number {
    return this.#cachedBytes;
  }

  read(file: string): Promise<Uint8Array | undefined> {
    const hit = this.#cache.get(file);
    if (hit) {
      hit.used = true;
      return Promise.resolve(hit.bytes);
    }
    // Small files are read at once: from the page cache that is a few microseconds, cheaper than a
    // trip through libuv's thread pool, and a miss (an unknown name) costs one failed open.
    let fd: number;
    try {
      fd = fs.openSync(path.join(this.root, file), fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      // No such file (or a link, refused by O_NOFOLLOW). Anything else (out of descriptors, a disk
      // error) is a failure of ours, answered as a 500 no cache keeps, never as a 404 it would.
      if (ABSENT.has((e as NodeJS.ErrnoException).code!)) return Promise.resolve(undefined);
      return Promise.reject(e as Error);
    }
    let size: number;
    try {
      const st = fs.fstatSync(fd);
      // Only regular files: the build writes nothing else, and a FIFO must never hang a request.
      if (!st.isFile()) { fs.closeSync(fd); return Promise.resolve(undefined); }
      size = st.size;
      if (size > SYNC_READ_BYTES) return this.#readLarge(fd, size);
      const bytes = Buffer.allocUnsafeSlow(size);
      let at = 0;
      for (let n; at < size && (n = fs.readSync(fd, bytes, at, size - at, at)) > 0;) at += n;
      fs.closeSync(fd);
      const body = at === size ? bytes : bytes.subarray(0, at);
      this.#keep(file, body);
      return Promise.resolve(body);
    } catch (e) {
      try { fs.closeSync(fd); } catch { /* closed already */ }
      return Promise.reject(e as Error);
    }
  }

  async #readLarge(fd: number, size: number): Promise<Uint8Array> {
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

  #keep(file: string, bytes: Buffer): void {
    if (bytes.length > this.#budget / 16) return;
    this.#cache.set(file, { bytes, used: false });
    this.#cachedBytes += bytes.length;
    // Second chance: the oldest entry leaves unless it was used since it last came round, so hits
    // cost a flag, not a reorder, and files in use stay.
    while (this.#cachedBytes > this.#budget) {
      const [oldest, entry] = this.#cache.entries().next().value!;
      this.#cache.delete(oldest);
      if (entry.used) {
        entry.used = false;
        this.#cache.set(oldest, entry);
      } else {
        this.#cachedBytes -= entry.bytes.length;
      }
    }
  }
}
