// The one place that builds answers: the JSON envelope, status, ETag and conditional GET, with the
// headers of the policy in headers.ts. Handlers return plain `ApiResponse` objects, so tests call
// them without a port and the server writes them without building Web `Response` objects.
import { createHash } from 'node:crypto';
import { API_VERSION, type ErrorCode } from '../schemas/api.ts';
import { MAX_TARGET_BYTES, type ApiRequest } from './request.ts';
import {
  ALLOWED_METHODS, CLOSING_METHOD_NOT_ALLOWED_HEADERS, HTML_HEADERS, JSON_HEADERS, METHOD_NOT_ALLOWED_HEADERS, PREFLIGHT_HEADERS, REQUEST_ERROR_HEADERS,
  SERVER_ERROR_HEADERS, SVG_HEADERS, COMMON_HEADERS, VARY_ACCEPT_ENCODING, namedEncodings, isCompressibleType, pageLinkHeaders,
  redirectHeaders, type PageLinks,
} from './headers.ts';

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array | null;
}

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
 * the same while `meta.timestamp` moves: weak, since the bytes differ (RFC 9110 §8.8.1). A page of
 * a list has `links` in the body and the same addresses in a `Link` header.
 */
export function successJson(
  dataJson: string | Buffer,
  opts: { etag?: string; timestamp: string; executionTimeMs: number; metaExtra?: string; links?: PageLinks },
): ApiResponse {
  const links = opts.links ? `,"links":${JSON.stringify(opts.links)}` : '';
  const body = successBody(dataJson, opts);
  // The length too, so the server sends these headers as they are, without a copy to add it.
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  const etag = opts.etag ?? `W/${etagOf(`${dataJson}${opts.metaExtra ?? ''}${links}`)}`;
  // Without links, one plain spread: a query lookup makes one of these per request.
  const headers = opts.links
    ? { ...JSON_HEADERS, ...pageLinkHeaders(opts.links), etag, 'content-length': String(length) }
    : { ...JSON_HEADERS, etag, 'content-length': String(length) };
  return { status: 200, headers, body };
}

const SUCCESS_HEAD = '{"success":true,"data":';
const SUCCESS_HEAD_BYTES = Buffer.from(SUCCESS_HEAD);

/**
 * The bytes of a success answer: `{"success":true,"data":…,"meta":…,"links":…}`. With `data` as
 * UTF-8 bytes, the answer is bytes too (a copy, no string encoding).
 */
export function successBody(dataJson: string | Buffer, opts: { timestamp: string; executionTimeMs: number; metaExtra?: string; links?: PageLinks }): string | Buffer {
  const tail = `,"meta":${meta(opts.timestamp, opts.executionTimeMs, opts.metaExtra)}${opts.links ? `,"links":${JSON.stringify(opts.links)}` : ''}}`;
  if (typeof dataJson === 'string') return `${SUCCESS_HEAD}${dataJson}${tail}`;
  // One buffer, the tail written into it: no Buffer of the tail, no list to concatenate.
  const head = SUCCESS_HEAD_BYTES.length;
  const body = Buffer.allocUnsafe(head + dataJson.length + Buffer.byteLength(tail));
  body.set(SUCCESS_HEAD_BYTES, 0);
  // `set`, not `copy`: on Workers `data` is a plain Uint8Array.
  body.set(dataJson, head);
  body.write(tail, head + dataJson.length);
  return body;
}

/** A JSON error answer; `headers` is one of the policy's (headers.ts), by what caused the error. */
export function errorJson(status: number, code: ErrorCode, message: string, req?: ApiRequest, headers: Readonly<Record<string, string>> = JSON_HEADERS): ApiResponse {
  // Written out rather than JSON.stringify of an object: 404s of unknown names are as fast as lookups.
  const body = `{"success":false,"error":{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}},"meta":${meta(nowIso(), req ? elapsed(req) : 0)}}`;
  return { status, headers, body };
}

export const notFound = (req?: ApiRequest, message = 'There is nothing at this address.') => errorJson(404, 'NOT_FOUND', message, req);

export const methodNotAllowed = (req: ApiRequest) =>
  errorJson(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed: this API is read-only (${ALLOWED_METHODS}).`, req, METHOD_NOT_ALLOWED_HEADERS);

/** A failure of ours (a bug, a disk error): never stored by a cache. */
export const serverError = () => errorJson(500, 'INTERNAL_ERROR', 'The server failed to answer this request.', undefined, SERVER_ERROR_HEADERS);

/**
 * The release being served is gone from disk (its folder deleted): a fault of ours, not an absent
 * file, so a 503 no cache keeps rather than a 404 an edge would hand out for 90 s.
 */
export const releaseMissing = () =>
  errorJson(503, 'INTERNAL_ERROR', 'The site\'s files are missing on the server: try again shortly.', undefined, SERVER_ERROR_HEADERS);

/**
 * An error about the request's own bytes or timing (400 unparseable, 408 headers too slow, 414,
 * 417 an expectation we cannot meet, 431): never stored by a cache, and the connection is closed.
 */
export const requestError = (status: 400 | 408 | 414 | 417 | 431, message: string, req?: ApiRequest) =>
  errorJson(status, 'BAD_REQUEST', message, req, REQUEST_ERROR_HEADERS);

/** A request target over MAX_TARGET_BYTES: Node's parser stops there, and the Worker says the same. */
export const targetTooLong = () => requestError(414, `The request target is longer than ${MAX_TARGET_BYTES} bytes.`);

/** `CONNECT host:port`: we are no proxy; a JSON 405 naming the methods we answer, and the connection closed. */
export const connectRefused = () =>
  errorJson(405, 'METHOD_NOT_ALLOWED', `CONNECT is not allowed: this server is no proxy, and its API is read-only (${ALLOWED_METHODS}).`, undefined, CLOSING_METHOD_NOT_ALLOWED_HEADERS);

/**
 * A method HTTP does not define (`FOO`, `get`: methods are case-sensitive), which Node's parser
 * refuses before any handler: the 405 any other method gets, on a connection that then closes.
 */
export const unknownMethod = () => errorJson(405, 'METHOD_NOT_ALLOWED', METHOD_NOT_ALLOWED_MESSAGE, undefined, CLOSING_METHOD_NOT_ALLOWED_HEADERS);

/** The 405's message where the method cannot be named (`methodNotAllowed` names it). */
export const METHOD_NOT_ALLOWED_MESSAGE = `This method is not allowed: this API is read-only (${ALLOWED_METHODS}).`;

export const preflight = (): ApiResponse => ({ status: 204, headers: PREFLIGHT_HEADERS, body: null });

/** An image file (an avatar or a decoration) of a known type. */
export function imageResponse(body: Uint8Array, contentType: string, etag = etagOf(body)): ApiResponse {
  return { status: 200, headers: { ...COMMON_HEADERS, 'content-type': contentType, etag }, body };
}

/** An SVG we generated, served so that it can never run script. */
export const svgResponse = (svg: string): ApiResponse => ({ status: 200, headers: { ...SVG_HEADERS, etag: etagOf(svg) }, body: svg });

/** A JSON document that is not an API answer (`/openapi.json`). */
export const jsonDocument = (json: string): ApiResponse => ({ status: 200, headers: { ...JSON_HEADERS, etag: etagOf(json) }, body: json });

/** The HTML 404 page, for any address that is neither a file nor an API route. */
export const notFoundPage = (html: Uint8Array | string): ApiResponse => ({ status: 404, headers: HTML_HEADERS, body: html });

/** The lookup box's answer: the profile page it found, for now (a profile can be removed), so not permanent. */
export const lookupRedirect = (location: string): ApiResponse => ({ status: 302, headers: redirectHeaders(location), body: null });

/** A page that says the request was wrong (the lookup page, for no or no valid username). */
export const badRequestPage = (html: Uint8Array | string): ApiResponse => ({ status: 400, headers: HTML_HEADERS, body: html });

/** A permanent redirect to the canonical address of a page (`/p/ALICE` to `/p/alice`). */
export const permanentRedirect = (location: string): ApiResponse => ({ status: 308, headers: redirectHeaders(location), body: null });

/**
 * An answer for a runtime that compresses a body itself when its Content-Encoding says so
 * (Workers' default `encodeBody: "automatic"`): a compressible answer gets the coding the client
 * wants most, Vary, and a weak ETag, the same for every coding: the edge in front re-encodes by
 * its own choice (wrangler dev's imitation sent gzip to `gzip, deflate, br` where the Worker named
 * br), so no ETag may name one coding's bytes; weak ones stand for the content in any coding (RFC
 * 9110 §8.8.1), as Cloudflare makes them of strong ones it compresses. Its length is the runtime's
 * to set. Before `finish`, so If-None-Match is compared with the ETag sent.
 */
export function runtimeEncoded(req: ApiRequest, res: ApiResponse): ApiResponse {
  const type = res.headers['content-type'];
  // A redirect has no Content-Type, which the edge (wrangler dev's imitation of
  // Cloudflare's front line) takes for a type it compresses: its empty body may go out in a
  // coding, so a cache must know the answer varies.
  if (res.body === null && type === undefined) return { ...res, headers: { ...res.headers, vary: VARY_ACCEPT_ENCODING } };
  if (res.body === null || res.headers['content-encoding'] !== undefined || type === undefined || !isCompressibleType(type)) return res;
  // Only a coding the client names: for `*` or `x-gzip` alone the edge sends identity bytes, which a coding named would misdescribe.
  const [encoding] = namedEncodings(req.header('accept-encoding'));
  const headers: Record<string, string> = { ...res.headers, vary: VARY_ACCEPT_ENCODING };
  if (encoding) {
    headers['content-encoding'] = encoding.name;
    delete headers['content-length'];
  }
  if (headers.etag !== undefined && !headers.etag.startsWith('W/')) headers.etag = `W/${headers.etag}`;
  return { status: res.status, headers, body: res.body };
}

/**
 * Applies what every GET/HEAD answer shares: 304 when If-None-Match matches, and no body on HEAD.
 * Handlers call nothing else to get this right.
 */
export function finish(req: ApiRequest, res: ApiResponse, { keepType = false } = {}): ApiResponse {
  const etag = res.headers.etag;
  if (res.status === 200 && etag && matchesIfNoneMatch(req.header('if-none-match'), etag)) {
    const headers = { ...res.headers };
    // Kept where an edge encodes what has no type (Workers): a 304 with none went out with a Content-Encoding.
    if (!keepType) delete headers['content-type'];
    delete headers['content-length'];
    return { status: 304, headers, body: null };
  }
  if (req.method === 'HEAD') {
    // A body the runtime compresses (`runtimeEncoded`) has a length only the runtime knows.
    if (res.headers['content-encoding'] !== undefined && res.headers['content-length'] === undefined) return { ...res, body: null };
    const len = res.body === null ? 0 : typeof res.body === 'string' ? Buffer.byteLength(res.body) : res.body.byteLength;
    return { status: res.status, headers: { ...res.headers, 'content-length': String(len) }, body: null };
  }
  return res;
}

/** For Astro routes (dev server and on-demand fallback). */
export function toWebResponse(res: ApiResponse): Response {
  return new Response(res.body as BodyInit | null, { status: res.status, headers: res.headers });
}
