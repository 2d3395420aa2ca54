// The build's static files, indexed once at start-up. A request is served only when its path is a
// key of this index: no request path is ever joined onto a folder, so `..`, encoded slashes or NUL
// cannot reach a file outside dist/client.
import fs from 'node:fs';
import path from 'node:path';
import { NOT_SERVED, addressOf, staticFileHeaders } from '../http/headers.ts';
import { etagOf } from '../http/response.ts';

export interface StaticFile {
  /** Relative to the root: 200,000 absolute paths were ~20 MB of heap at 100,000 profiles. */
  rel: string;
  /** Shared by every file of one kind (`staticFileHeaders`): never modified. */
  headers: Readonly<Record<string, string>>;
}

export interface LoadedFile {
  body: Buffer;
  headers: Record<string, string>;
  /** Used since the cache last considered evicting it. */
  used: boolean;
}

export class StaticFiles {
  readonly #files = new Map<string, StaticFile>();
  readonly #cache = new Map<string, LoadedFile>();
  #cachedBytes = 0;
  readonly #cacheBudget: number;
  readonly root: string;
  readonly notFoundPage: string | undefined;

  /** @param cacheBudget bytes of file bodies kept in memory (the most recently used) */
  constructor(root: string, cacheBudget = 64 << 20) {
    this.root = root;
    this.#cacheBudget = cacheBudget;
    for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const rel = path.relative(root, file);
      const posix = rel.split(path.sep).join('/');
      if (NOT_SERVED.has(posix)) continue;
      const urlPath = addressOf(posix);
      this.#files.set(urlPath, { rel, headers: staticFileHeaders(urlPath, path.extname(entry.name)) });
    }
    const notFound = path.join(root, '404.html');
    this.notFoundPage = fs.existsSync(notFound) ? notFound : undefined;
  }

  has(urlPath: string): boolean {
    return this.#files.has(urlPath);
  }

  get size() {
    return this.#files.size;
  }

  /** A file already in memory, without waiting: the hot path of a lookup. */
  cached(urlPath: string): LoadedFile | undefined {
    const hit = this.#cache.get(urlPath);
    if (hit) hit.used = true;
    return hit;
  }

  /** The file's bytes and headers (ETag and Content-Length included), read into memory when it fits the budget. */
  async load(urlPath: string): Promise<LoadedFile | undefined> {
    const hit = this.cached(urlPath);
    if (hit) return hit;
    const entry = this.#files.get(urlPath);
    if (!entry) return undefined;
    const body = await fs.promises.readFile(path.join(this.root, entry.rel));
    const loaded: LoadedFile = { body, headers: { ...entry.headers, etag: etagOf(body), 'content-length': String(body.length) }, used: false };
    if (body.length <= this.#cacheBudget / 16) {
      this.#cache.set(urlPath, loaded);
      this.#cachedBytes += body.length;
      // Second chance: the oldest entry leaves unless it was used since it last came round, so
      // hits cost a flag, not a reorder, and files in use stay.
      while (this.#cachedBytes > this.#cacheBudget) {
        const [oldest, file] = this.#cache.entries().next().value!;
        this.#cache.delete(oldest);
        if (file.used) {
          file.used = false;
          this.#cache.set(oldest, file);
        } else {
          this.#cachedBytes -= file.body.length;
        }
      }
    }
    return loaded;
  }
}
