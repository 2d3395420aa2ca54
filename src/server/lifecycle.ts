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
  /** A request's headers must arrive within this (slowloris). */
  headersTimeout: number;
  /** A whole request must arrive within this. */
  requestTimeout: number;
  /** A kept-alive connection with no request is closed after this. */
  keepAliveTimeout: number;
  /** A socket with no traffic either way is closed after this: a client that connects and says nothing, or stops reading. */
  idleTimeout: number;
  /** SIGTERM: how long requests under way may take before their connections are cut. */
  drainTimeout: number;
}

/**
 * The limits, from the environment where set (`MAX_CONNECTIONS`, `SOCKET_IDLE_MS`,
 * `SHUTDOWN_TIMEOUT_MS`). By default at most 8,192 connections, and fewer when the process may
 * open fewer files (the soft limit, less 256 for files and the rest): without a limit, ~20,000 idle
 * sockets took every descriptor of a 20,000 limit and locked everyone else out (issue 12).
 */
export function connectionLimits(env: NodeJS.ProcessEnv = process.env): ConnectionLimits {
  const num = (name: string, fallback: number) => {
    const v = Number(env[name]);
    return Number.isInteger(v) && v > 0 ? v : fallback;
  };
  const descriptors = openFileLimit();
  return {
    maxConnections: num('MAX_CONNECTIONS', Math.max(64, Math.min(8192, descriptors ? descriptors - 256 : 8192))),
    headersTimeout: 10_000,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    idleTimeout: num('SOCKET_IDLE_MS', 15_000),
    drainTimeout: num('SHUTDOWN_TIMEOUT_MS', 10_000),
  };
}

export function applyConnectionLimits(server: http.Server, limits: ConnectionLimits): void {
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = Math.min(limits.headersTimeout, limits.requestTimeout);
  server.requestTimeout = limits.requestTimeout;
  server.keepAliveTimeout = limits.keepAliveTimeout;
  // Without a 'timeout' listener Node destroys the socket when it fires.
  server.timeout = limits.idleTimeout;
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
