// How the Node server treats connections: limits, so idle or slow sockets cannot take every
// descriptor and lock other clients out, and a graceful drain on SIGTERM (stop accepting, let the
// requests under way finish within a bound, then exit).
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import { DRAINING_HEADER } from '../http/headers.ts';

export interface ConnectionLimits {
  /** Connections beyond this are closed as soon as they are accepted: descriptors stay for the files and the rest. */
  maxConnections: number;
  /** A request's headers must arrive within this (slowloris): a 408, and the connection closed. */
  headersTimeout: number;
  /** A whole request must arrive within this. */
  requestTimeout: number;
  /**
   * How often Node looks for connections past those two: a timeout is enforced up to this late
   * (Node's default is 30 s, which let 10 s headers run to 36 s).
   */
  checkingInterval: number;
  /** A kept-alive connection with no request is closed after this. */
  keepAliveTimeout: number;
  /** A socket with no traffic either way is closed after this: a client that connects and says nothing, or stops reading. */
  idleTimeout: number;
  /** SIGTERM: how long requests under way may take before their connections are cut. */
  drainTimeout: number;
}

/**
 * The limits, from the environment where set (`MAX_CONNECTIONS`, `SOCKET_IDLE_MS`,
 * `SHUTDOWN_TIMEOUT_MS`, `HEADERS_TIMEOUT_MS`, `REQUEST_TIMEOUT_MS`). By default at most 8,192 connections, and fewer when the process may
 * open fewer files (the soft limit, less 256 for files and the rest): without a limit, ~20,000 idle
 * sockets took every descriptor of a 20,000 limit and locked everyone else out (issue 12).
 */
export function connectionLimits(env: NodeJS.ProcessEnv = process.env): ConnectionLimits {
  const num = (name: string, fallback: number) => {
    const v = Number(env[name]);
    return Number.isInteger(v) && v > 0 ? v : fallback;
  };
  const descriptors = openFileLimit();
  const requestTimeout = num('REQUEST_TIMEOUT_MS', 30_000);
  const headersTimeout = Math.min(num('HEADERS_TIMEOUT_MS', 10_000), requestTimeout);
  return {
    maxConnections: num('MAX_CONNECTIONS', Math.max(64, Math.min(8192, descriptors ? descriptors - 256 : 8192))),
    headersTimeout,
    requestTimeout,
    // A tenth of the headers' limit, at most 1 s: slow headers are cut between 10 and 11 s.
    checkingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 10))),
    keepAliveTimeout: 5_000,
    idleTimeout: num('SOCKET_IDLE_MS', 15_000),
    drainTimeout: num('SHUTDOWN_TIMEOUT_MS', 10_000),
  };
}

/**
 * The options `http.createServer` needs for the limits (the checking interval can be set nowhere
 * else), then `applyConnectionLimits` for the rest.
 */
export const serverOptions = (limits: ConnectionLimits): http.ServerOptions => ({ connectionsCheckingInterval: limits.checkingInterval });

export function applyConnectionLimits(server: http.Server, limits: ConnectionLimits): void {
  // Node closes a connection past its own limit before anyone sees it; ours (`evictWhenFull`) is
  // kept a little below, so the connection that arrives when all are taken can take a slot.
  server.maxConnections = limits.maxConnections + EVICTION_ROOM;
  evictWhenFull(server, limits.maxConnections);
  // Its count of answers under way also tells `evictWhenFull` which connections wait.
  boundPipelining(server);
  server.headersTimeout = Math.min(limits.headersTimeout, limits.requestTimeout);
  server.requestTimeout = limits.requestTimeout;
  server.keepAliveTimeout = limits.keepAliveTimeout;
  // Without a 'timeout' listener Node destroys the socket when it fires.
  server.timeout = limits.idleTimeout;
}

/** Connections Node itself accepts beyond MAX_CONNECTIONS while the evicted ones close. */
const EVICTION_ROOM = 16;

/**
 * When every one of `max` connections is taken, the newest takes the slot of the one that has
 * waited longest without a request under way: a client sending its headers a byte at a time
 * (slowloris), or one kept alive with nothing to ask. Before, 100 such sockets under
 * `MAX_CONNECTIONS=100` locked every other client out until the headers timeout cut them (12 s).
 * A client whose request is being answered is never evicted; when all are, the newcomer is refused,
 * as Node refused it. The oldest waiting connection is the first of a Map kept in waiting order,
 * which `boundPipelining`'s count of answers under way keeps (no listener of its own per request).
 */
export function evictWhenFull(server: http.Server, max: number): void {
  const open = new Set<net.Socket>();
  /** Connections with no request under way, oldest wait first. */
  const idle = new Map<net.Socket, true>();
  server.on('connection', (socket: WaitingSocket) => {
    open.add(socket);
    idle.set(socket, true);
    socket[idleOf] = idle;
    socket.once('close', () => {
      open.delete(socket);
      idle.delete(socket);
    });
    if (open.size <= max) return;
    const oldest = idle.keys().next().value;
    (oldest !== undefined && oldest !== socket ? oldest : socket).destroy();
  });
}

/** The waiting order a connection belongs to (`evictWhenFull`). */
const idleOf = Symbol('idleOf');
type WaitingSocket = net.Socket & { [idleOf]?: Map<net.Socket, true> };

/**
 * Pipelined requests a connection may have waiting for their answers before the server stops
 * reading it (resumed when they are down to half): an answer waits while the client does not read.
 */
export const PIPELINE_PAUSE = 16;
/**
 * Beyond this many waiting, the connection is closed, and the rest of what it sent is not parsed.
 * Node parses every request of a chunk it has read (64 KiB: 1,600 short requests) before a pause
 * can act, each waiting request holding about 6 KB: 48 connections pipelining 5,000 requests each
 * and reading nothing grew the server by 582 MB (issue 29).
 */
export const MAX_PIPELINED = 128;

/** Per connection: requests answered or being answered, not yet handed to the kernel whole. */
const waiting = Symbol('waiting');
/** Set when `boundPipelining` paused the connection. */
const pausedByUs = Symbol('pausedByUs');
/** The connection's last request, and what to do once every answer is out (`afterAnswers`). */
const lastRequest = Symbol('lastRequest');
const whenAnswered = Symbol('whenAnswered');
type Counted = WaitingSocket & {
  [waiting]?: number; [pausedByUs]?: boolean; [lastRequest]?: http.IncomingMessage; [whenAnswered]?: () => void;
};

/** The last request Node's parser made on `socket` (`boundPipelining` keeps it), if any. */
export const lastRequestOf = (socket: net.Socket): http.IncomingMessage | undefined => (socket as Counted)[lastRequest];

/**
 * Calls `then` once every answer under way on `socket` is handed to it (at once when none is):
 * what is written after them reaches a pipelining client after their answers, in order.
 */
export function afterAnswers(socket: net.Socket, then: () => void): void {
  const counted = socket as Counted;
  if (!counted[waiting]) return then();
  counted[whenAnswered] = then;
}

/** The part of Node's per-connection HTTP parser (`socket.parser`, internal to node:http) used here. */
interface NodeParser {
  onIncoming?: (req: http.IncomingMessage & { upgrade: boolean }, keepAlive: boolean) => number;
}

/**
 * Backpressure on pipelined requests: counts each connection's requests whose answers are not
 * written yet; past PIPELINE_PAUSE it stops reading the connection, at MAX_PIPELINED it closes it.
 */
export function boundPipelining(server: http.Server): void {
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket as Counted;
    const n = (socket[waiting] ?? 0) + 1;
    socket[waiting] = n;
    socket[lastRequest] = req;
    socket[idleOf]?.delete(socket);
    // A shared function, no closure per answer: it reads the connection from the request.
    res.on('finish', answered);
    if (n > MAX_PIPELINED) socket.destroy();
    else if (n > PIPELINE_PAUSE && !socket[pausedByUs]) {
      socket[pausedByUs] = true;
      socket.pause();
    }
  });
  // After Node's own 'connection' listener, which gives the socket its parser. A pause acts only
  // once the parser is done with the chunk it was given, so the request over the bound is made to
  // stop the parser where it stands: Node's parser stops on a request it takes for an upgrade, and
  // with no 'upgrade' listener Node closes the connection (src/server/server.ts adds none). No
  // request object is made for the rest of the chunk. Node is pinned (package.json): the test of
  // this bound (test/server/hostile-sockets.test.ts) fails if Node's internals move.
  server.on('connection', (socket: Counted) => {
    const parser = (socket as { parser?: NodeParser }).parser;
    const onIncoming = parser?.onIncoming;
    if (parser === undefined || typeof onIncoming !== 'function') return;
    parser.onIncoming = (req, keepAlive) => {
      if ((socket[waiting] ?? 0) < MAX_PIPELINED) return onIncoming(req, keepAlive);
      req.upgrade = true;
      socket.destroy();
      return 2; // llhttp: an upgrade, stop parsing
    };
  });
}

function answered(this: http.ServerResponse): void {
  const socket = this.req.socket as Counted;
  const n = (socket[waiting] ?? 1) - 1;
  socket[waiting] = n;
  // Every answer out: a kept-alive connection waits again, at the end of the order.
  if (n === 0 && !socket.destroyed) socket[idleOf]?.set(socket, true);
  if (n === 0 && socket[whenAnswered]) {
    const then = socket[whenAnswered];
    socket[whenAnswered] = undefined;
    then();
  }
  if (socket[pausedByUs] && n <= PIPELINE_PAUSE / 2) {
    socket[pausedByUs] = false;
    socket.resume();
  }
}

/** Every open connection, with its last response (under way unless `writableFinished`). */
export type Connections = Map<net.Socket, http.ServerResponse | undefined>;

/**
 * Tracks the connections `drain` waits for. Call once, before the server listens. A finished
 * response stays in the map until the next request or the close: `drain` reads `writableFinished`,
 * so no listener is added to each response.
 */
export function trackConnections(server: http.Server): Connections {
  const open: Connections = new Map();
  server.on('connection', (socket: net.Socket) => {
    open.set(socket, undefined);
    socket.once('close', () => open.delete(socket));
  });
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    open.set(req.socket, res);
  });
  return open;
}

/**
 * Stops accepting; closes each connection once its answer is out, bytes still in the socket's
 * buffer included (http.Server#close would destroy a connection whose response Node counts as
 * finished while a slow client still reads it: measured, a 32 MB answer cut at 3.9 MB); resolves
 * when every connection is gone, or, after `timeoutMs`, destroys those left and says how many.
 */
export function drain(server: http.Server, open: Connections, timeoutMs: number): Promise<{ cut: number }> {
  return new Promise((resolve) => {
    let cut = 0;
    const timer = setTimeout(() => {
      cut = open.size;
      for (const socket of open.keys()) socket.destroy();
    }, timeoutMs);
    // net.Server's close: stop listening, call back once every connection has closed.
    net.Server.prototype.close.call(server, () => {
      clearTimeout(timer);
      resolve({ cut });
    });
    const closeWhenDone = (socket: net.Socket, res: http.ServerResponse | undefined) => {
      if (res && !res.writableFinished) {
        if (!res.headersSent) res.setHeader(...DRAINING_HEADER);
        res.once('finish', () => closeWhenDone(socket, undefined));
      } else if (socket.writableLength === 0) {
        socket.destroy();
      } else {
        socket.end(() => socket.destroy());
      }
    };
    for (const [socket, res] of open) closeWhenDone(socket, res);
    // A request already arriving on an open connection gets its answer, then the connection closes.
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => closeWhenDone(req.socket, res));
  });
}

/** The soft limit on open files (Linux), or undefined where it cannot be read. */
function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
