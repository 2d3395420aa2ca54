// The server's own access log (`ACCESS_LOG`, off by default), in the combined format nginx and
// Apache write and `npm run views:import` reads (src/tools/access-log.ts):
//
//   %h %l %u [%d/%b/%Y:%H:%M:%S %z] "%r" %>s %b "%{Referer}i" "%{User-agent}i"
//
// One line per answer, written when the answer is out: the status and the body bytes sent after
// the headers (a HEAD or a 304 sends none: `-`; chunked framing counts, as in nginx), the time in
// the server's time zone as nginx's `$time_local`. An answer cut short (client gone, drain timeout)
// logs the bytes handed to the connection, which can be more than the client received; a client
// gone before any answer went out is 499, as in nginx. Requests Node cannot parse, which the server
// answers itself (400, 414, 431), are logged with `"-"` for the request line.
// The request line, referer and user agent are escaped as nginx escapes them (`"` is `\x22`, `\`
// is `\x5C`, control bytes and bytes from 0x7F as `\xHH`), so no client can end a field or a
// line early. Lines are joined and written once per turn of the event loop through a stream, never
// with a blocking write per request; `close` flushes them, `reopen` (SIGHUP) opens the file again
// after logrotate has moved it.
import fs from 'node:fs';
import type http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';

/** What one line says. */
export interface AccessLogEntry {
  /** The client address (`%h`); undefined is logged as `-`. */
  client: string | undefined;
  /** When the answer was out, in milliseconds since 1970. */
  time: number;
  /** `GET /p/alice HTTP/1.1`, as received; undefined for a request that could not be parsed (`"-"`). */
  requestLine: string | undefined;
  status: number;
  /** Bytes of the body sent, after the headers; 0 is logged as `-`. */
  bytes: number;
  referer: string | undefined;
  userAgent: string | undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/**
 * `21/Nov/2026:10:00:00 +0100`: the time at `offsetMinutes` east of UTC, the server's own zone by
 * default (nginx's `$time_local`, Apache's `%t`).
 */
export function formatLogTime(ms: number, offsetMinutes = -new Date(ms).getTimezoneOffset()): string {
  const d = new Date(Math.floor(ms / 1000) * 1000 + offsetMinutes * 60_000);
  const abs = Math.abs(offsetMinutes);
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} `
    + `${offsetMinutes < 0 ? '-' : '+'}${two(Math.floor(abs / 60))}${two(abs % 60)}`;
}

// Node gives header values and the request target one character per byte (latin1); a character
// above 0xFF (never from the parser) is escaped as its UTF-8 bytes.
const UNSAFE = /[\x00-\x1f"\\\x7f-\xff]|[^\x00-\xff]+/g;
const hex = (byte: number) => `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/** A value as nginx logs it between quotes: `"`, `\`, control bytes and bytes from 0x7F as `\xHH`. */
export function escapeLogValue(value: string): string {
  return value.replace(UNSAFE, (c) => (c.length === 1 && c.charCodeAt(0) <= 0xff ? hex(c.charCodeAt(0)) : [...Buffer.from(c, 'utf8')].map(hex).join('')));
}

/** One line, newline included. */
export function formatAccessLogLine(e: AccessLogEntry, offsetMinutes?: number): string {
  const quoted = (v: string | undefined) => (v ? escapeLogValue(v) : '-');
  return `${e.client || '-'} - - [${formatLogTime(e.time, offsetMinutes)}] "${quoted(e.requestLine)}" ${e.status} ${e.bytes > 0 ? e.bytes : '-'} "${quoted(e.referer)}" "${quoted(e.userAgent)}"\n`;
}

/** Lines waiting for the disk beyond this are dropped (and counted) rather than fill memory. */
const MAX_BUFFERED = 64 << 20;

export interface AccessLog {
  /** The file (absolute), or `-` for stdout. */
  readonly target: string;
  /** Logs every request of `server` once its answer is out (or its connection is gone). */
  watch(server: http.Server): void;
  /** Logs an answer written straight to the socket, to a request Node could not parse (`"-"`). */
  rawAnswer(socket: Duplex, answer: { status: number; body: string | Uint8Array | null }): void;
  /** Opens the file again (SIGHUP, after logrotate moved it); false for stdout. Throws if it cannot. */
  reopen(): boolean;
  /** Logs the answers still under way as they stand (cut), writes what is buffered and closes the file. */
  close(): Promise<void>;
}

type Out = NodeJS.WritableStream & { writableLength: number };

/**
 * Opens `target` (a file, appended to, or `-` for stdout) for the access log. Throws, with the
 * file's name, when it cannot be opened: the server refuses to start rather than run unlogged.
 */
export function openAccessLog(target: string): AccessLog {
  let out: Out | undefined = openOut(target);
  let pending: string[] = [];
  let scheduled = false;
  let dropped = 0;
  // Bytes written for the responses before this one on each connection: what a response sent is
  // the connection's bytes since, less its header block.
  const sentBefore = new WeakMap<net.Socket, number>();
  // The answers not logged yet, so `close` can log those a drain has just cut: their connections'
  // 'close' events come after the server's own, too late for a process that exits then.
  const underWay = new Set<() => void>();

  const flush = () => {
    scheduled = false;
    if (!pending.length) return;
    const lines = pending;
    pending = [];
    if (!out || out.writableLength > MAX_BUFFERED) {
      if (out && !dropped) console.error(`access log: over ${MAX_BUFFERED >> 20} MB waiting to be written to ${target}; dropping lines until the disk catches up.`);
      dropped += lines.length;
      return;
    }
    if (dropped) {
      console.error(`access log: ${dropped} line(s) were dropped.`);
      dropped = 0;
    }
    out.write(lines.join(''));
  };
  const log = (entry: AccessLogEntry) => {
    pending.push(formatAccessLogLine(entry));
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  function openOut(file: string): Out {
    let stream: Out;
    if (file === '-') {
      stream = process.stdout;
    } else {
      let fd: number;
      try {
        fd = fs.openSync(file, 'a');
      } catch (e) {
        throw new Error(`cannot open the access log ${file} (ACCESS_LOG): ${openProblem(e as NodeJS.ErrnoException)}`);
      }
      stream = fs.createWriteStream(file, { fd });
    }
    // A full disk or a closed pipe: say so once; lines are dropped (and counted) until a reopen.
    stream.on('error', (e: Error) => {
      if (out !== stream) return;
      out = undefined;
      console.error(`access log: cannot write ${file}: ${e.message}; dropping lines${file === '-' ? '' : ' until SIGHUP reopens it'}.`);
    });
    return stream;
  }

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    // Read now: the handler may change `req.url`, and a closed socket has no address.
    const client = socket.remoteAddress;
    const requestLine = `${req.method} ${req.url} HTTP/${req.httpVersion}`;
    const { referer, 'user-agent': userAgent } = req.headers;
    const done = () => {
      if (!underWay.delete(done)) return;
      // A pipelined answer still queued behind another when the connection closed never had it:
      // nothing of it went out, whatever Node says of its headers.
      const answered = res.headersSent && res.socket !== null;
      let bytes = 0;
      if (answered) {
        const written = socket.bytesWritten;
        // `_header` is the header block Node wrote (not in its types, but there since Node 0.x).
        const head = (res as unknown as { _header?: unknown })._header;
        bytes = Math.max(0, written - (sentBefore.get(socket) ?? 0) - (typeof head === 'string' ? head.length : 0));
        sentBefore.set(socket, written);
      }
      // 499 (nginx's): the connection closed before any answer went out.
      log({ client, time: Date.now(), requestLine, status: answered ? res.statusCode : 499, bytes, referer, userAgent });
    };
    underWay.add(done);
    // Before Node's own 'finish' listener, which hands the connection to the next pipelined answer.
    res.prependOnceListener('finish', done);
    res.once('close', done);
  };

  return {
    target,
    watch(server) {
      server.prependListener('request', onRequest);
    },
    rawAnswer(socket, { status, body }) {
      const bytes = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
      log({ client: (socket as net.Socket).remoteAddress, time: Date.now(), requestLine: undefined, status, bytes, referer: undefined, userAgent: undefined });
    },
    reopen() {
      if (target === '-') return false;
      const next = openOut(target);
      flush();
      const old = out;
      out = next;
      old?.end();
      return true;
    },
    close() {
      for (const done of underWay) done();
      flush();
      const last = out;
      out = undefined;
      if (!last) return Promise.resolve();
      return new Promise((resolve) => {
        if (last === process.stdout) last.write('', () => resolve());
        else last.end(() => resolve());
      });
    },
  };
}

function openProblem(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ENOENT': return 'its folder does not exist';
    case 'EACCES': case 'EPERM': return 'no permission to write it';
    case 'EISDIR': return 'it is a folder';
    case 'EROFS': return 'the file system is read-only';
    default: return e.message;
  }
}
