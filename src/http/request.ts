// What a handler needs of a request, made from a Node request or a Web `Request`, and the limits
// on a request's size.

/**
 * The longest request target answered (RFC 9112 §3 asks for at least 8,000 octets); a longer one
 * is a 414. Node's own limit on the request line and headers together is 16 KiB: over it, a 431.
 */
export const MAX_TARGET_BYTES = 8192;

/** What a handler needs of a request; Web `Request` headers and Node's both fit. */
export interface ApiRequest {
  method: string;
  /** The path without the query, percent-encoded but for unreserved characters (`normalizePercentEncoding`). */
  path: string;
  /** The raw query, without `?` ('' when there is none). */
  search: string;
  /** The query, parsed when first read. */
  readonly query: URLSearchParams;
  header(name: string): string | undefined;
  /** `performance.now()` when the request arrived, for `meta.executionTimeMs`. */
  startedAt: number;
  /**
   * The host and port of an absolute-form target (`GET http://alice.example.com/`), which the
   * server uses in place of `Host` (RFC 9112 §3.2.2); undefined for the usual origin form.
   */
  readonly authority?: string;
}

/** Adapts a Web `Request` (Astro routes) to an ApiRequest. */
export function fromWebRequest(request: Request, startedAt = performance.now()): ApiRequest {
  const url = request.url;
  const afterOrigin = url.indexOf('/', url.indexOf('//') + 2);
  // On Cloudflare the Worker sees Accept-Encoding normalised (`br, gzip`); the client's own is `cf.clientAcceptEncoding`.
  const clientAccept = (request as { cf?: { clientAcceptEncoding?: string } }).cf?.clientAcceptEncoding;
  const header = (n: string) => (n === 'accept-encoding' && clientAccept !== undefined ? clientAccept : request.headers.get(n) ?? undefined);
  return splitTarget(request.method, afterOrigin < 0 ? '/' : url.slice(afterOrigin), header, startedAt);
}

/** `%XX`, an escape of one byte. */
const ESCAPE = /%[0-9A-Fa-f]{2}/g;
/** An unreserved character (RFC 3986 §2.3): letters, digits, `-`, `.`, `_`, `~`. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * The path with escapes of unreserved characters decoded: `/%61pi/v1/%75sers/x` is the URI
 * `/api/v1/users/x` (RFC 3986 §6.2.2.2), which a CDN that normalises URLs and a static host that
 * decodes paths both take it for. Routed raw, it was no API address: the creators list's first
 * page for any query, an HTML 404 under `/api/`. Other escapes (`%2F`, `%20`, UTF-8) stay.
 */
export function normalizePercentEncoding(path: string): string {
  return path.replace(ESCAPE, (escape) => {
    const char = String.fromCharCode(Number.parseInt(escape.slice(1), 16));
    return UNRESERVED.test(char) ? char : escape;
  });
}

/** A `.` or `..` segment, written plain or as `%2e` (WHATWG URL's dot segments). */
const DOT_SEGMENT = /\/(?:\.|%2e)(?:\.|%2e)?(?:\/|$)/i;
const SINGLE_DOT = /^(?:\.|%2e)$/i;
const DOUBLE_DOT = /^(?:\.|%2e){2}$/i;

/**
 * The path with its dot segments resolved as the WHATWG URL parser does (`/x/../p/alice` is
 * `/p/alice`, `%2e` counts as `.`, never above `/`): what Cloudflare's runtime, nginx and a
 * browser's `fetch` see, so every host answers the same address.
 */
export function removeDotSegments(path: string): string {
  const segments = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i]!;
    const last = i === segments.length - 1;
    if (DOUBLE_DOT.test(s)) {
      out.pop();
      if (last) out.push('');
    } else if (SINGLE_DOT.test(s)) {
      if (last) out.push('');
    } else {
      out.push(s);
    }
  }
  return `/${out.join('/')}`;
}

/** `http://host` at the start of an absolute-form request target (RFC 9112 §3.2.2), its authority without user info. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/i;

/**
 * Splits a request target (`/path?query#frag`) without the URL parser, which reads `//host` as a
 * host. An absolute-form target (`http://host/path`, which a server must accept) is the same
 * request as its path: the host in it is ignored like the Host header.
 */
export function splitTarget(method: string, target: string, header: (name: string) => string | undefined, startedAt: number): ApiRequest {
  return new TargetRequest(method, target, startedAt, header);
}

/**
 * An ApiRequest made from a method and a request target. A class rather than an object literal:
 * a literal with a getter is built on V8's slow path, and this is made once per request.
 */
export class TargetRequest implements ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly search: string;
  readonly startedAt: number;
  readonly authority: string | undefined;
  readonly #header: ((name: string) => string | undefined) | undefined;
  #query: URLSearchParams | undefined;

  /** Without `header`, a subclass reads headers itself (`header` overridden). */
  constructor(method: string, target: string, startedAt: number, header?: (name: string) => string | undefined) {
    let authority: string | undefined;
    if (target.charCodeAt(0) !== 47 /* / */) {
      const origin = ABSOLUTE_FORM.exec(target);
      if (origin) {
        authority = origin[1];
        target = target.slice(origin[0].length);
        if (target.charCodeAt(0) !== 47) target = `/${target}`;
      }
    }
    const hash = target.indexOf('#');
    if (hash >= 0) target = target.slice(0, hash);
    const q = target.indexOf('?');
    // Node's parser gives the common methods in capitals already.
    this.method = method === 'GET' || method === 'HEAD' ? method : method.toUpperCase();
    let path = q < 0 ? target : target.slice(0, q);
    if (path.includes('%')) path = normalizePercentEncoding(path);
    this.path = DOT_SEGMENT.test(path) ? removeDotSegments(path) : path;
    this.search = q < 0 ? '' : target.slice(q + 1);
    this.startedAt = startedAt;
    this.authority = authority;
    this.#header = header;
  }

  /** The query, parsed when first read. */
  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.search));
  }

  header(name: string): string | undefined {
    return this.#header?.(name);
  }
}
