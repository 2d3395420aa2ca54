// The one header policy: every header of every answer is decided here, for the API, static files,
// pages, images, redirects and errors, and for the `_headers` file static hosts read. Everything
// else asks this module; nothing else names a header value.

/** An edge cache keeps answers 30 s and may serve a stale copy 60 s more while it refreshes (RFC 5861). */
export const CACHE_CONTROL = 'public, max-age=30, s-maxage=30, stale-while-revalidate=60';
/** Fingerprinted build assets (`/_astro/*`) never change under the same name. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/**
 * For answers that depend on more than the method and URL a shared cache keys on (a request's
 * headers, its framing) or on a failure of ours: a stored copy would be handed to everyone asking
 * that URL (RFC 9111 §5.2.2.5).
 */
export const NO_STORE = 'no-store';
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const HTML_TYPE = 'text/html; charset=utf-8';
export const SVG_TYPE = 'image/svg+xml; charset=utf-8';

/**
 * Content Security Policy of our HTML: scripts, styles and images from us only (the one script is
 * the lookup box's on static builds, public/lookup.js; never inline), forms (the lookup box) sent to us only.
 */
export const HTML_CSP = "default-src 'none'; script-src 'self'; img-src 'self' data:; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/** A generated SVG can never run script, even opened on its own. */
export const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

type Headers = Readonly<Record<string, string>>;

/**
 * What a script on another origin may read beyond the CORS-safelisted headers (Cache-Control,
 * Content-Language, Content-Length, Content-Type, Expires, Last-Modified, Pragma: Fetch standard):
 * ETag for conditional requests, Link for the next and previous page, Allow on a 405.
 */
export const EXPOSED_HEADERS = 'ETag, Link, Allow';

/** Sent on every answer, static files and errors included. */
export const COMMON_HEADERS: Headers = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED_HEADERS,
  'cache-control': CACHE_CONTROL,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
});

/**
 * Preflight answer. A `*` in Access-Control-Allow-Headers does not cover `Authorization` (Fetch
 * standard, CORS-safelisted rules), so it is named; the `*` lets any other header through.
 */
export const PREFLIGHT_HEADERS: Headers = Object.freeze({
  ...COMMON_HEADERS,
  'access-control-allow-methods': ALLOWED_METHODS,
  'access-control-allow-headers': 'Authorization, *',
  'access-control-max-age': '86400',
});

const HTML_ONLY: Headers = { 'content-security-policy': HTML_CSP, 'x-frame-options': 'DENY' };

/** A JSON answer of the API, success or a URL's own 4xx (the same for everyone who asks). */
export const JSON_HEADERS: Headers = Object.freeze({ ...COMMON_HEADERS, 'content-type': JSON_TYPE });
/** A page (the 404 page included). */
export const HTML_HEADERS: Headers = Object.freeze({ ...COMMON_HEADERS, 'content-type': HTML_TYPE, ...HTML_ONLY });
/** A generated SVG image. */
export const SVG_HEADERS: Headers = Object.freeze({ ...COMMON_HEADERS, 'content-type': SVG_TYPE, 'content-security-policy': SVG_CSP });

/** A failure of ours: never kept by an edge, so a transient error is not handed to everyone for 90 s. */
export const SERVER_ERROR_HEADERS: Headers = Object.freeze({ ...JSON_HEADERS, 'cache-control': NO_STORE });

/**
 * An error about the request's own bytes (unparseable, oversized headers or target): a cache keys
 * on the URL alone, so storing it would answer everyone's normal request for that URL with it.
 */
export const REQUEST_ERROR_HEADERS: Headers = Object.freeze({ ...JSON_HEADERS, 'cache-control': NO_STORE, connection: 'close' });

/** A 405: the methods we answer. */
export const METHOD_NOT_ALLOWED_HEADERS: Headers = Object.freeze({ ...JSON_HEADERS, allow: ALLOWED_METHODS });

/**
 * A 405 on a connection that cannot carry another request, which is closed: `CONNECT` (the client
 * asked for a tunnel), a method Node's parser does not know (it stops reading). Never stored,
 * since a cache keys on the URL, not the method.
 */
export const CLOSING_METHOD_NOT_ALLOWED_HEADERS: Headers = Object.freeze({ ...METHOD_NOT_ALLOWED_HEADERS, 'cache-control': NO_STORE, connection: 'close' });

/** The neighbouring pages of a paginated answer: full addresses, or null at the ends. */
export interface PageLinks {
  next: string | null;
  prev: string | null;
}

/**
 * The `Link` header of a page of a list (RFC 8288 §3, the relations of RFC 8288 §6.2.2 / HTML):
 * the same addresses as the body's `links`, so clients that page by headers (GitHub's and
 * Mastodon's conventions) and those that read the body agree. None on a page with no neighbours.
 */
export function pageLinkHeaders(links: PageLinks): Record<string, string> {
  const parts: string[] = [];
  // Our addresses are built with URLSearchParams, so they hold no `>` or `,` to escape.
  if (links.next) parts.push(`<${links.next}>; rel="next"`);
  if (links.prev) parts.push(`<${links.prev}>; rel="prev"`);
  return parts.length ? { link: parts.join(', ') } : {};
}

/** Added to an answer still being written when the server drains (SIGTERM): the client reconnects elsewhere. */
export const DRAINING_HEADER = ['connection', 'close'] as const;

/** A redirect to our own address of a page: permanent (a canonical address) or the lookup box's, cached as briefly as any answer. */
export const redirectHeaders = (location: string): Record<string, string> => ({ ...COMMON_HEADERS, location });

/** What answers from Astro's own request handler start with; Astro adds its content type. */
export const ASTRO_PAGE_HEADERS = COMMON_HEADERS;

/** Content types by extension, for static files and content images. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
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

const isApiAddress = (address: string) => address.startsWith('/api/') || address.startsWith('/service-api/');

/**
 * The address a static host serves a build file at (path relative to the client folder, with `/`):
 * `p/alice.html` at `/p/alice`, `index.html` at `/`. Files in NOT_SERVED have none.
 */
export function addressOf(file: string): string {
  if (file === 'index.html') return '/';
  if (file.endsWith('/index.html')) return `/${file.slice(0, -'/index.html'.length)}`;
  if (file.endsWith('.html')) return `/${file.slice(0, -'.html'.length)}`;
  return `/${file}`;
}

/** Files a static host uses itself rather than serving at their own address. */
export const NOT_SERVED: ReadonlySet<string> = new Set(['_headers', '_redirects', '.assetsignore', '.nojekyll', '404.html', '500.html']);

/**
 * Folders of the build only a server reads: the on-demand handler's lookup files (src/api/release-files.ts
 * `LOOKUP_DIR`), a static build's JSON 404s (src/build/hosts/static-host-files.ts `ERRORS_DIR`).
 */
const NOT_SERVED_DIRS = ['_lookup/', '_errors/'];

/** Whether a build file (relative to the client folder, with `/`) is served at its address. */
export const isServedFile = (file: string) =>
  !NOT_SERVED.has(file) && !NOT_SERVED_DIRS.some((d) => file.startsWith(d)) && compressedBaseOf(file) === undefined;

// ---------------------------------------------------------------------------------------------
// Compression: the build keeps a brotli and a gzip coding of each file worth compressing
// (src/build/files/compress.ts), as `<file>.br` and `<file>.gz` beside it or, in a `node` release,
// inside the file (src/release/coded-file.ts); the server sends one of them, by the request's
// Accept-Encoding, at the file's own address. A coding is never served at an address of its own.

/** A content coding we send, the suffix of its sibling file, and the tag its ETag carries. */
export interface Encoding {
  readonly name: 'br' | 'gzip';
  readonly suffix: '.br' | '.gz';
  readonly tag: 'br' | 'gz';
}
export const BROTLI: Encoding = Object.freeze({ name: 'br', suffix: '.br', tag: 'br' });
export const GZIP: Encoding = Object.freeze({ name: 'gzip', suffix: '.gz', tag: 'gz' });
/** In the order preferred when the client weighs them alike: brotli is smaller (docs/scale.md, "Compression"). */
export const ENCODINGS: readonly Encoding[] = Object.freeze([BROTLI, GZIP]);

/** The file a compressed sibling belongs to (`p/alice.html` for `p/alice.html.br`), or undefined for any other file. */
export function compressedBaseOf(file: string): string | undefined {
  for (const e of ENCODINGS) if (file.endsWith(e.suffix)) return file.slice(0, -e.suffix.length);
  return undefined;
}

/** Extensions of the text files worth compressing; images other than SVG and fonts are compressed already. */
const COMPRESSIBLE_EXTS = new Set(['.html', '.css', '.js', '.mjs', '.json', '.txt', '.xml', '.svg', '.webmanifest']);

/**
 * Whether a served build file has compressed siblings (when they save enough: src/build/files/compress.ts)
 * and so whether its answers carry `Vary: Accept-Encoding`: text by extension, and the extensionless
 * JSON files of the API.
 */
export function isCompressible(file: string): boolean {
  if (!isServedFile(file)) return false;
  const slash = file.lastIndexOf('/');
  const dot = file.lastIndexOf('.');
  if (dot > slash) return COMPRESSIBLE_EXTS.has(file.slice(dot));
  return isApiAddress(`/${file}`);
}

/** Whether an answer of this content type is worth compressing: text, JSON, XML and SVG. */
export const isCompressibleType = (type: string): boolean =>
  type.startsWith('text/') || type.startsWith('application/json') || type.startsWith('application/xml') || type.startsWith('image/svg+xml')
  || type.startsWith('application/manifest+json');

/** Answers whose body depends on the request's Accept-Encoding say so, identity answers too (RFC 9110 §12.5.5). */
export const VARY_ACCEPT_ENCODING = 'Accept-Encoding';

/**
 * The ETag of a representation in `encoding`: the identity ETag with the coding's tag inside the
 * quotes (`"abc"` → `"abc-br"`), so every encoding has its own and If-None-Match tells them apart
 * (RFC 9110 §8.8.3: a strong ETag names one representation's bytes).
 */
export function encodedEtag(etag: string, encoding: Encoding): string {
  return `${etag.slice(0, -1)}-${encoding.tag}"`;
}

const varyHeadersOf = new WeakMap<Headers, Headers>();
const encodedHeadersOf = { br: new WeakMap<Headers, Headers>(), gzip: new WeakMap<Headers, Headers>() };

/** `headers` of an identity answer of a compressible file: with Vary (one frozen object per `headers`). */
export function identityHeaders(headers: Headers): Headers {
  let out = varyHeadersOf.get(headers);
  if (!out) varyHeadersOf.set(headers, out = Object.freeze({ ...headers, vary: VARY_ACCEPT_ENCODING }));
  return out;
}

/** `headers` of an answer sent in `encoding`: Content-Encoding and Vary (one frozen object per `headers` and encoding). */
export function encodedHeaders(headers: Headers, encoding: Encoding): Headers {
  const made = encodedHeadersOf[encoding.name];
  let out = made.get(headers);
  if (!out) made.set(headers, out = Object.freeze({ ...headers, vary: VARY_ACCEPT_ENCODING, 'content-encoding': encoding.name }));
  return out;
}

/** The q-value of one Accept-Encoding member (`;q=0.5`), 1 without one; NaN when malformed. */
function qOf(params: string): number {
  const m = /^\s*;\s*q\s*=\s*([0-9.]+)\s*$/i.exec(params);
  if (!params.trim()) return 1;
  if (!m) return NaN;
  const q = Number(m[1]);
  return q >= 0 && q <= 1 ? q : NaN;
}

/** Accept-Encoding values seen lately → their codings: clients send a handful of distinct strings. */
const acceptedCache = new Map<string, readonly Encoding[]>();
const ACCEPTED_CACHE_SIZE = 64;

/**
 * The codings of ours a client accepts, most wanted first (RFC 9110 §12.5.3): by q-value, ties
 * to brotli; `*` stands for any coding not named; q=0 refuses. Identity is always sent when none
 * fits, even under `identity;q=0` (a 415 for a GET helps no one; §12.5.3 allows either). Without
 * the header, none: a client that asks for nothing gets the bytes as they are.
 */
export function acceptedEncodings(header: string | undefined): readonly Encoding[] {
  if (!header) return [];
  const known = acceptedCache.get(header);
  if (known) return known;
  const q = new Map<string, number>();
  for (const member of header.split(',')) {
    const semi = member.indexOf(';');
    const name = (semi < 0 ? member : member.slice(0, semi)).trim().toLowerCase();
    if (!name) continue;
    const value = qOf(semi < 0 ? '' : member.slice(semi));
    // A malformed weight is ignored with its member; the highest of repeated ones counts.
    if (!Number.isNaN(value)) q.set(name, Math.max(q.get(name) ?? 0, value));
  }
  const star = q.get('*');
  const weight = (e: Encoding) => q.get(e.name) ?? (e === GZIP ? q.get('x-gzip') : undefined) ?? star ?? 0;
  const out = Object.freeze(ENCODINGS.filter((e) => weight(e) > 0).sort((a, b) => weight(b) - weight(a)));
  if (acceptedCache.size >= ACCEPTED_CACHE_SIZE) acceptedCache.clear();
  acceptedCache.set(header, out);
  return out;
}

/**
 * The codings of `acceptedEncodings` the header names itself (`br`, `gzip`), most wanted first: not
 * through `*` or `x-gzip`. What a runtime whose edge re-encodes by the codings named (Workers: wrangler
 * dev's imitation of Cloudflare's front line ignores `*`) will send as it was told.
 */
export function namedEncodings(header: string | undefined): readonly Encoding[] {
  if (!header) return [];
  const named = new Set(header.toLowerCase().split(',').map((m) => m.split(';')[0]!.trim()));
  return acceptedEncodings(header).filter((e) => named.has(e.name));
}

// A segment of an address that may name a build file: no `.` or `..`, no hidden name, no
// separator, control character or NUL, at most 255 bytes (a file name's limit).
const SAFE_SEGMENT = /^[^./\\\u0000-\u001f\u007f][^/\\\u0000-\u001f\u007f]{0,254}$/;

/**
 * The build files (paths relative to the client folder) that could be served at a decoded
 * `address`, most likely first: the inverse of `addressOf`, and nothing else. A file is served only
 * at its own address (`p/alice.html` at `/p/alice`, never at `/p/alice.html`), so every page has
 * one address; an address with an unsafe segment has no file, so no request reaches outside the
 * folder whatever it holds.
 */
export function filesAt(address: string): string[] {
  if (address === '/') return ['index.html'];
  const rel = address.slice(1);
  if (address.charCodeAt(0) !== 47 || !rel.split('/').every((s) => SAFE_SEGMENT.test(s))) return [];
  const candidates = isApiAddress(address) ? [rel] : [`${rel}.html`, rel, `${rel}/index.html`];
  const own = candidates.filter((f) => addressOf(f) === address);
  // The address of a file kept from the public (`/404`, of `404.html`) is nobody's: Cloudflare's
  // asset binding, asked for a file `404`, would answer with `404.html`.
  if (own.some((f) => NOT_SERVED.has(f))) return [];
  return own.filter(isServedFile);
}

/** One frozen object per kind of file: 200,000 files share a handful. */
const STATIC_BY_KIND = new Map<string, Headers>();

/** The headers a static file of the build is served with, by its address and extension (ETag and length aside). */
export function staticFileHeaders(address: string, ext: string): Headers {
  const asset = address.startsWith('/_astro/');
  const api = isApiAddress(address);
  const kind = `${ext}\0${asset}\0${api}`;
  let headers = STATIC_BY_KIND.get(kind);
  if (!headers) {
    // API files have no extension (`/api/v1/users/alice`): they are JSON.
    const type = CONTENT_TYPES[ext] ?? (ext === '' && api ? JSON_TYPE : 'application/octet-stream');
    const h: Record<string, string> = { ...COMMON_HEADERS, 'content-type': type };
    if (asset) h['cache-control'] = IMMUTABLE_CACHE_CONTROL;
    if (type === HTML_TYPE) Object.assign(h, HTML_ONLY);
    if (ext === '.svg') h['content-security-policy'] = SVG_CSP;
    STATIC_BY_KIND.set(kind, headers = Object.freeze(h));
  }
  return headers;
}

/**
 * The headers of an answer the server makes in memory for a pre-rendered file that the file's own
 * headers (`staticFileHeaders`) lack, ETag and length aside: the creators list's `Link`. A static
 * host sends them through a `_headers` rule for that address.
 */
export function answerOnlyHeaders(address: string, headers: Headers): Record<string, string> {
  const slash = address.lastIndexOf('/');
  const dot = address.lastIndexOf('.');
  const file = staticFileHeaders(address, dot > slash ? address.slice(dot) : '');
  return Object.fromEntries(Object.entries(headers).filter(([k, v]) => k !== 'etag' && k !== 'content-length' && file[k] !== v));
}

/**
 * What a `_headers` rule must set for a file beyond `/*` and its Cache-Control rule: the headers of
 * `staticFileHeaders` that differ from the common ones, and the content type only where a host
 * cannot tell it from the extension.
 */
export function staticHostRuleHeaders(file: string): Record<string, string> {
  const dot = file.lastIndexOf('.');
  const ext = dot > file.lastIndexOf('/') ? file.slice(dot) : '';
  const all = staticFileHeaders(addressOf(file), ext);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(all)) {
    if (k === 'cache-control' || COMMON_HEADERS[k] === v) continue;
    if (k === 'content-type' && ext !== '') continue;
    out[k] = v;
  }
  return out;
}
