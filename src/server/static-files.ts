// The build's static files, indexed once at start-up. A request is served only when its path is a
// key of this index: no request path is ever joined onto a folder, so `..`, encoded slashes or NUL
// cannot reach a file outside dist/client.
import fs from 'node:fs';
import path from 'node:path';
import { COMMON_HEADERS, HTML_CSP, HTML_TYPE, IMMUTABLE_CACHE_CONTROL, JSON_TYPE, SVG_CSP, etagOf } from '../http/response.ts';

const TYPES: Record<string, string> = {
  '.html': HTML_TYPE,
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': JSON_TYPE,
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

export interface StaticFile {
  /** Relative to the root: 200,000 absolute paths were ~20 MB of heap at 100,000 profiles. */
  rel: string;
  /** Shared by every file of one kind (see `staticHeaders`): never modified. */
  headers: Readonly<Record<string, string>>;
}

export interface LoadedFile {
  body: Buffer;
  headers: Record<string, string>;
  /** Used since the cache last considered evicting it. */
  used: boolean;
}

/** The headers a static file is served with: the same a `_headers` file gives a static host. */
export function staticHeaders(urlPath: string, ext: string): Readonly<Record<string, string>> {
  const kind = `${ext}\0${urlPath.startsWith('/_astro/')}\0${urlPath.startsWith('/api/') || urlPath.startsWith('/service-api/')}`;
  let headers = HEADERS_BY_KIND.get(kind);
  if (!headers) HEADERS_BY_KIND.set(kind, headers = Object.freeze(headersFor(urlPath, ext)));
  return headers;
}

/** One frozen object per kind of file: 200,000 files share a handful. */
const HEADERS_BY_KIND = new Map<string, Readonly<Record<string, string>>>();

function headersFor(urlPath: string, ext: string): Record<string, string> {
  // API files have no extension (`/api/v1/users/alice`): they are JSON.
  const type = TYPES[ext] ?? (ext === '' && (urlPath.startsWith('/api/') || urlPath.startsWith('/service-api/')) ? JSON_TYPE : 'application/octet-stream');
  const headers: Record<string, string> = { ...COMMON_HEADERS, 'content-type': type };
  if (urlPath.startsWith('/_astro/')) headers['cache-control'] = IMMUTABLE_CACHE_CONTROL;
  if (type === HTML_TYPE) {
    headers['content-security-policy'] = HTML_CSP;
    headers['x-frame-options'] = 'DENY';
  }
  if (ext === '.svg') headers['content-security-policy'] = SVG_CSP;
  return headers;
}

/** Maps each file to the address it is served at: `p/alice.html` at `/p/alice`, `index.html` at `/`. */
export function urlPathOf(rel: string): string | undefined {
  const posix = rel.split(path.sep).join('/');
  if (posix === '404.html' || posix === '500.html' || posix === '_headers') return undefined;
  if (posix === 'index.html') return '/';
  if (posix.endsWith('/index.html')) return `/${posix.slice(0, -'/index.html'.length)}`;
  if (posix.endsWith('.html')) return `/${posix.slice(0, -'.html'.length)}`;
  return `/${posix}`;
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
      const urlPath = urlPathOf(rel);
      if (!urlPath) continue;
      this.#files.set(urlPath, { rel, headers: staticHeaders(urlPath, path.extname(entry.name)) });
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
