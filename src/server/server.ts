// The server for a build folder: the request limits of a Node server (target length, Host, what
// Node's parser refuses), then the on-demand handler (src/api/handler.ts), which answers every
// request from the release's files: static files with the contract's headers, the API, redirects,
// custom domains and the 404 page. Every answer gets the common headers, errors included.
import http from 'node:http';
import type { Socket } from 'node:net';
import { answer } from '../api/handler.ts';
import { connectRefused, releaseMissing, requestError, serverError, targetTooLong, unknownMethod, type ApiResponse } from '../http/response.ts';
import { MAX_TARGET_BYTES, TargetRequest } from '../http/request.ts';
import { loadRelease, releaseKey, watchRelease, type LoadedRelease } from './release.ts';
import { ReleaseMissingError } from './disk-files.ts';
import { afterAnswers, applyConnectionLimits, connectionLimits, lastRequestOf, serverOptions, type ConnectionLimits } from './lifecycle.ts';
import type { AccessLog } from './access-log.ts';

export interface SiteServer {
  server: http.Server;
  /** The release being served now: it changes when a new build is swapped in. */
  readonly release: LoadedRelease;
  /** Stops watching for new builds (the server itself is closed by its owner). */
  unwatch(): void;
}

export interface SiteServerOptions {
  /** Bytes of file bodies kept in memory per release (src/server/disk-files.ts). */
  fileCacheBytes?: number;
  /** Where to log each answer in the combined format (src/server/access-log.ts); none by default. */
  accessLog?: AccessLog;
  /** Connection limits and timeouts (src/server/lifecycle.ts); from the environment by default. */
  limits?: ConnectionLimits;
}

export async function createSiteServer(distDir: string, options: SiteServerOptions = {}): Promise<SiteServer> {
  const { accessLog } = options;
  let current = await loadRelease(distDir, options.fileCacheBytes);
  const stopWatching = watchRelease(distDir, () => void switchRelease());
  let loading: Promise<void> | undefined;
  let again = false;

  // `npm run build` switches the link to a new release; the server opens it, then switches to it
  // between requests (requests under way keep the one they started with). A release that fails to
  // open leaves the running one in place.
  async function switchRelease(): Promise<void> {
    if (loading) { again = true; return; }
    const key = releaseKey(distDir);
    if (!key || key === current.key) return;
    loading = loadRelease(distDir, options.fileCacheBytes)
      .then((next) => {
        current = next;
        console.log(`Now serving the build of ${next.builtAt} from ${next.dir}.`);
      })
      .catch((e: unknown) => console.error(`A new build could not be loaded; still serving the build of ${current.builtAt}: ${(e as Error).message}`))
      .finally(() => {
        loading = undefined;
        if (again) { again = false; void switchRelease(); }
      });
  }

  /** Sends the answer at once when the handler has it at once (no promise: the lookups' hot path). */
  function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | void {
    const target = req.url ?? '/';
    if (target.length > MAX_TARGET_BYTES) return send(res, targetTooLong());
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
      return send(res, requestError(400, 'An HTTP/1.1 request must have a Host header (RFC 9112 §3.2).'));
    }
    // Node keeps the first of two Host headers; RFC 9112 §3.2 asks for a 400 (the two may name different sites).
    if (hostHeaders(req.rawHeaders) > 1) return send(res, requestError(400, 'A request must have one Host header, not several (RFC 9112 §3.2).'));
    // And for one that is no host (`a b`, `x/y`): Node takes any value.
    if (req.headers.host !== undefined && !HOST_VALUE.test(req.headers.host)) return send(res, requestError(400, 'The Host header is no host[:port] (RFC 9112 §3.2).'));
    // Node makes the request before it finds it cannot read such a body (then a 'clientError').
    const coding = req.headers['transfer-encoding'];
    if (coding !== undefined && !FINAL_CHUNKED.test(coding)) return send(res, requestError(400, 'A Transfer-Encoding must end in chunked: the body\'s length cannot be known otherwise (RFC 9112 §6.3).'));
    // Pinned: the whole request is answered from this release, even if another is switched in meanwhile.
    const answered = answer(new NodeRequest(req, target), current.files);
    if (answered instanceof Promise) return answered.then((r) => send(res, r)).catch((error: unknown) => failed(req, res, error));
    send(res, answered);
  }

  const limits = options.limits ?? connectionLimits();
  // A missing Host is answered by us (a JSON 400 with our headers), not by Node's bare 400.
  const server = http.createServer({ requireHostHeader: false, ...serverOptions(limits) }, (req, res) => {
    // Closed by `boundPipelining` (too many answers waiting): nothing more is made for it.
    if (req.socket.destroyed) return;
    try {
      handle(req, res);
    } catch (error) {
      failed(req, res, error);
    }
  });
  applyConnectionLimits(server, limits);
  accessLog?.watch(server);
  // A request Node cannot even parse still gets a JSON answer with the common headers (and a log line).
  server.on('clientError', (err: NodeJS.ErrnoException, duplex) => {
    const socket = duplex as Socket & { [failedOnce]?: true };
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    // The parser stays failed: every chunk the client sends after is this error again.
    if (socket[failedOnce]) return;
    socket[failedOnce] = true;
    // Failed in the body of the last request (a bad chunk): that request is answered, or being
    // answered; a second answer to it would be read as the answer to the client's next one.
    const last = lastRequestOf(socket);
    const answer = last !== undefined && !last.complete ? undefined : parseFailure(err);
    // Answers to the requests before it go first: a pipelining client reads answers by position.
    afterAnswers(socket, () => {
      if (!answer) return socket.end();
      socket.end(rawAnswer(answer));
      accessLog?.rawAnswer(socket, answer);
      // Headers too slow: the connection goes once the 408 is out, so its MAX_CONNECTIONS slot is free at once.
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.destroySoon();
    });
  });
  // `Expect` other than 100-continue (which Node answers itself, then the request is ours as usual).
  server.on('checkExpectation', (_req: http.IncomingMessage, res: http.ServerResponse) =>
    send(res, requestError(417, 'Expect: only 100-continue is understood.')));
  // CONNECT asks for a tunnel; without this listener Node drops the connection without a word.
  server.on('connect', (_req: http.IncomingMessage, socket: import('node:stream').Duplex) => {
    if (socket.destroyed) return; // closed by `boundPipelining`
    const answer = connectRefused();
    socket.end(rawAnswer(answer));
    accessLog?.rawAnswer(socket, answer);
  });
  return {
    server,
    get release() { return current; },
    unwatch: stopWatching,
  };
}

/** Release folders already reported gone, so a deleted release is one log line, not one per request. */
const reportedMissing = new Set<string>();

/**
 * A request the handler could not answer: a 500, or a cut connection when the answer had begun;
 * a 503 when the release's folder is gone from disk.
 */
function failed(req: http.IncomingMessage, res: http.ServerResponse, error: unknown): void {
  if (error instanceof ReleaseMissingError) {
    if (!reportedMissing.has(error.root)) {
      reportedMissing.add(error.root);
      console.error(error.message);
    }
    if (!res.headersSent) send(res, releaseMissing());
    else res.destroy();
    return;
  }
  console.error(`error answering ${req.method} ${req.url}:`, error);
  if (!res.headersSent) send(res, serverError());
  else res.destroy();
}

/** How many Host headers a request has (`rawHeaders` is name, value, name, value…). */
function hostHeaders(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') n++;
  }
  return n;
}

function send(res: http.ServerResponse, r: ApiResponse): void {
  let headers = r.headers;
  // Static files come with their length; other answers get it here (a copy, so shared header objects stay as they are).
  if (headers['content-length'] === undefined && r.status !== 204 && r.status !== 304) {
    const length = r.body === null ? 0 : typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.byteLength;
    headers = { ...headers, 'content-length': String(length) };
  }
  res.writeHead(r.status, headers);
  res.end(r.body ?? undefined);
}

/** What the handler reads of a Node request: its headers are read from Node's, with no closure made per request. */
class NodeRequest extends TargetRequest {
  readonly #incoming: http.IncomingMessage;

  constructor(incoming: http.IncomingMessage, target: string) {
    super(incoming.method ?? 'GET', target, performance.now());
    this.#incoming = incoming;
  }

  override header(name: string): string | undefined {
    const v = this.#incoming.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }
}

/** A Host value: `uri-host [ ":" port ]` (RFC 3986 §3.2.2: a reg-name, IPv4, or an IP literal in brackets), or empty (HTTP/1.0 proxies send one). */
const HOST_VALUE = /^(?:\[[0-9A-Za-z:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::\d*)?$/;

/** A Transfer-Encoding whose last coding is chunked (RFC 9112 §6.3). */
const FINAL_CHUNKED = /(?:^|,)[ \t]*chunked[ \t]*$/i;

/** Marks a connection whose parser failed: answered once. */
const failedOnce = Symbol('failedOnce');

/** `METHOD target HTTP/x.y`, the method a token (RFC 9110 §9.1). */
const REQUEST_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^ \r\n]+ HTTP\/\d\.\d\r\n/;

/**
 * What to answer a request Node's parser refused. Over its 16 KiB limit on the request line and
 * headers together, the status says which was too long: 414 if the request line alone is.
 */
function parseFailure(err: ParseError): ApiResponse {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return requestError(408, 'The request did not arrive in time: send its headers within the time the server allows.');
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const request = failedRequest(err, '\r\n\r\n');
    const lineEnd = request?.indexOf('\r\n') ?? -1;
    if (lineEnd < 0 || lineEnd > MAX_TARGET_BYTES) return targetTooLong();
    return requestError(431, 'The request headers are too large: send fewer or shorter headers (16 KiB in all at most).');
  }
  // A well-formed request line with a method Node does not know; garbage (`NOT HTTP`) stays a 400.
  if (err.code === 'HPE_INVALID_METHOD' && REQUEST_LINE.test(failedRequest(err, '\n')?.subarray(0, MAX_TARGET_BYTES + 64).toString('latin1') ?? '')) return unknownMethod();
  return requestError(400, 'The request could not be parsed.');
}

/** A parse error of Node's: the chunk it was parsing (requests before the failed one included) and where in it it failed. */
type ParseError = NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number };

/**
 * The failed request's bytes in the chunk: from after the last `boundary` that ends before the
 * point of failure (the blank line that ended the request before it, or, for a method, the line
 * before). Over the header limit, that point is the end of a header line, maybe the last one.
 */
function failedRequest(err: ParseError, boundary: string): Buffer | undefined {
  const raw = err.rawPacket;
  if (!raw) return undefined;
  const at = typeof err.bytesParsed === 'number' ? Math.min(err.bytesParsed, raw.length) : 0;
  const before = at >= boundary.length ? raw.lastIndexOf(boundary, at - boundary.length) : -1;
  return raw.subarray(before < 0 ? 0 : before + boundary.length);
}

/** An answer as the bytes of an HTTP/1.1 message, for a socket Node's parser gave up on. */
function rawAnswer(r: ApiResponse): string {
  const body = typeof r.body === 'string' ? r.body : '';
  const headers = Object.entries({ ...r.headers, 'content-length': String(Buffer.byteLength(body)) }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `HTTP/1.1 ${r.status} ${http.STATUS_CODES[r.status]}\r\n${headers}\r\n${body}`;
}
