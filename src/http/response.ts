// The one place that builds API responses: envelope, status, Content-Type, CORS, Cache-Control,
// ETag and conditional GET. Handlers return plain `ApiResponse` objects, so tests call them without
// a port and the server writes them without building Web `Response` objects on the hot path.
import { createHash } from 'node:crypto';
import { API_VERSION, type ErrorCode } from '../schemas/api.ts';

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array | null;
}

/** What a handler needs of a request; Web `Request` headers and Node's both fit. */
export interface ApiRequest {
  method: string;
  /** The raw path, still percent-encoded, without the query. */
  path: string;
  /** The raw query, without `?` ('' when there is none). */
  search: string;
  /** The query, parsed when first read. */
  readonly query: URLSearchParams;
  header(name: string): string | undefined;
  /** `performance.now()` when the request arrived, for `meta.executionTimeMs`. */
  startedAt: number;
}

/** An edge cache keeps answers 30 s and may serve a stale copy 60 s more while it refreshes (RFC 5861). */
export const CACHE_CONTROL = 'public, max-age=30, s-maxage=30, stale-while-revalidate=60';
/** Fingerprinted build assets (`/_astro/*`) never change under the same name. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

/** Sent on every response, static files and errors included. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag',
  'cache-control': CACHE_CONTROL,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
};

/**
 * Preflight answer. A `*` in Access-Control-Allow-Headers does not cover `Authorization` (Fetch
 * standard, CORS-safelisted rules), so it is named; the `*` lets any other header through.
 */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  ...COMMON_HEADERS,
  'access-control-allow-methods': ALLOWED_METHODS,
  'access-control-allow-headers': 'Authorization, *',
  'access-control-max-age': '86400',
};

export const JSON_TYPE = 'application/json; charset=utf-8';
export const HTML_TYPE = 'text/html; charset=utf-8';

/** Content Security Policy of our HTML: no script at all, styles and images from us only. */
export const HTML_CSP = "default-src 'none'; img-src 'self' data:; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** A generated SVG can never run script, even opened on its own. */
export const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

export const isReadMethod = (method: string) => method === 'GET' || method === 'HEAD';

/** A strong ETag from the bytes. */
export function etagOf(body: string | Uint8Array): string {
  return `"${createHash('sha1').update(body).digest('base64url').slice(0, 27)}"`;
}

/** RFC 9110 §13.1.2: weak comparison, a list of tags or `*`. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

export function meta(timestamp: string, executionTimeMs: number, extra = '') {
  return `{"timestamp":${JSON.stringify(timestamp)},"version":"${API_VERSION}","executionTimeMs":${executionTimeMs}${extra}}`;
}

let isoMs = NaN;
let iso = '';
/** Now as an ISO 8601 string, made once per millisecond: a busy server answers many in each. */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    iso = new Date(ms).toISOString();
  }
  return iso;
}

/** Milliseconds since the request arrived, to the microsecond. */
export const elapsed = (req: ApiRequest) => Math.max(0, Math.round((performance.now() - req.startedAt) * 1000) / 1000);

/**
 * A success answer around an already-serialised `data`. The ETag covers `data` only, so it stays
 * the same while `meta.timestamp` moves: weak, since the bytes differ (RFC 9110 §8.8.1).
 */
export function successJson(
  dataJson: string | Buffer,
  opts: { etag?: string; timestamp: string; executionTimeMs: number; metaExtra?: string; linksJson?: string },
): ApiResponse {
  const links = opts.linksJson ? `,"links":${opts.linksJson}` : '';
  return {
    status: 200,
    headers: { ...COMMON_HEADERS, 'content-type': JSON_TYPE, etag: opts.etag ?? `W/${etagOf(`${dataJson}${opts.metaExtra ?? ''}${links}`)}` },
    body: successBody(dataJson, opts),
  };
}

const SUCCESS_HEAD = '{"success":true,"data":';
const SUCCESS_HEAD_BYTES = Buffer.from(SUCCESS_HEAD);

/**
 * The bytes of a success answer: `{"success":true,"data":…,"meta":…,"links":…}`. With `data` as
 * UTF-8 bytes, the answer is bytes too (a copy, no string encoding).
 */
export function successBody(dataJson: string | Buffer, opts: { timestamp: string; executionTimeMs: number; metaExtra?: string; linksJson?: string }): string | Buffer {
  const tail = `,"meta":${meta(opts.timestamp, opts.executionTimeMs, opts.metaExtra)}${opts.linksJson ? `,"links":${opts.linksJson}` : ''}}`;
  return typeof dataJson === 'string' ? `${SUCCESS_HEAD}${dataJson}${tail}` : Buffer.concat([SUCCESS_HEAD_BYTES, dataJson, Buffer.from(tail)]);
}

export function errorJson(status: number, code: ErrorCode, message: string, req?: ApiRequest, extraHeaders: Record<string, string> = {}): ApiResponse {
  // Written out rather than JSON.stringify of an object: 404s of unknown names are as fast as lookups.
  const body = `{"success":false,"error":{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}},"meta":${meta(nowIso(), req ? elapsed(req) : 0)}}`;
  return { status, headers: { ...COMMON_HEADERS, 'content-type': JSON_TYPE, ...extraHeaders }, body };
}

export const notFound = (req: ApiRequest, message = 'There is nothing at this address.') => errorJson(404, 'NOT_FOUND', message, req);

export const methodNotAllowed = (req: ApiRequest) =>
  errorJson(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed: this API is read-only (${ALLOWED_METHODS}).`, req, { allow: ALLOWED_METHODS });

export const preflight = (): ApiResponse => ({ status: 204, headers: { ...PREFLIGHT_HEADERS }, body: null });

/** A file or generated image, with the common headers. */
export function fileResponse(body: Uint8Array | string, contentType: string, extra: Record<string, string> = {}): ApiResponse {
  return { status: 200, headers: { ...COMMON_HEADERS, 'content-type': contentType, etag: extra.etag ?? etagOf(body), ...extra }, body };
}

/**
 * Applies what every GET/HEAD answer shares: 304 when If-None-Match matches, and no body on HEAD.
 * Handlers call nothing else to get this right.
 */
export function finish(req: ApiRequest, res: ApiResponse): ApiResponse {
  const etag = res.headers.etag;
  if (res.status === 200 && etag && matchesIfNoneMatch(req.header('if-none-match'), etag)) {
    const headers = { ...res.headers };
    delete headers['content-type'];
    delete headers['content-length'];
    return { status: 304, headers, body: null };
  }
  if (req.method === 'HEAD') {
    const len = res.body === null ? 0 : typeof res.body === 'string' ? Buffer.byteLength(res.body) : res.body.byteLength;
    return { status: res.status, headers: { ...res.headers, 'content-length': String(len) }, body: null };
  }
  return res;
}

/** For Astro routes (dev server and on-demand fallback). */
export function toWebResponse(res: ApiResponse): Response {
  return new Response(res.body as BodyInit | null, { status: res.status, headers: res.headers });
}

/** Adapts a Web `Request` (Astro routes) to an ApiRequest. */
export function fromWebRequest(request: Request, startedAt = performance.now()): ApiRequest {
  const url = request.url;
  const afterOrigin = url.indexOf('/', url.indexOf('//') + 2);
  return splitTarget(request.method, afterOrigin < 0 ? '/' : url.slice(afterOrigin), (n) => request.headers.get(n) ?? undefined, startedAt);
}

/** Splits a request target (`/path?query#frag`) without the URL parser, which reads `//host` as a host. */
export function splitTarget(method: string, target: string, header: (name: string) => string | undefined, startedAt: number): ApiRequest {
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  const q = target.indexOf('?');
  const search = q < 0 ? '' : target.slice(q + 1);
  let query: URLSearchParams | undefined;
  return {
    method: method.toUpperCase(),
    path: q < 0 ? target : target.slice(0, q),
    search,
    get query() {
      return (query ??= new URLSearchParams(search));
    },
    header,
    startedAt,
  };
}
