// Usage: npm run serve            (HOST, PORT, DIST_DIR from the environment; default localhost:4321, ./dist)
//
// Serves the last good build. On SIGTERM/SIGINT stops accepting, lets the requests under way finish
// (at most SHUTDOWN_TIMEOUT_MS, default 10 s), then exits 0 (src/server/lifecycle.ts).
import { accessLogFromEnv, distDirFromEnv, fileCacheBytesFromEnv } from '../config.ts';
import { openAccessLog, type AccessLog } from './access-log.ts';
import { connectionLimits, drain, trackConnections } from './lifecycle.ts';
import { createSiteServer } from './server.ts';
import { parseCli } from '../cli.ts';

parseCli({
  name: 'serve',
  usage: 'Usage: npm run serve            (HOST, PORT, DIST_DIR from the environment; default localhost:4321, ./dist)',
  env: {
    HOST: 'the address to listen on (default localhost; 0.0.0.0 for every interface)',
    PORT: 'the port (default 4321; 0 for any free port)',
    DIST_DIR: 'the build to serve (default ./dist); a new build swapped in there is served at once',
    FILE_CACHE_MB: 'megabytes of file bodies kept in memory (default 128; 0 reads every answer from disk)',
    ACCESS_LOG: 'a file to append an access log to, in the combined format (`-`: stdout); SIGHUP reopens it (default: no log)',
    MAX_CONNECTIONS: 'connections open at once; past it a newcomer takes the slot of the one waiting longest with no request (default 8192, or the open-file limit less 256)',
    SOCKET_IDLE_MS: 'a socket silent either way this long is closed (default 15000)',
    HEADERS_TIMEOUT_MS: 'a request\'s headers must arrive within this, else a 408 and the connection closed (default 10000)',
    REQUEST_TIMEOUT_MS: 'a whole request must arrive within this (default 30000)',
    SHUTDOWN_TIMEOUT_MS: 'on SIGTERM, how long requests under way may take before they are cut (default 10000)',
  },
});

const host = process.env.HOST || 'localhost';
const port = Number(process.env.PORT || 4321);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`serve: PORT must be a port number, not \`${process.env.PORT}\``);
  process.exit(2);
}

let fileCacheBytes: number;
try {
  fileCacheBytes = fileCacheBytesFromEnv();
} catch (e) {
  console.error(`serve: ${(e as Error).message}`);
  process.exit(2);
}

// Opened first, so a log that cannot be written stops the start at once (exit 2, like a bad PORT).
let accessLog: AccessLog | undefined;
const accessLogTarget = accessLogFromEnv();
if (accessLogTarget) {
  try {
    accessLog = openAccessLog(accessLogTarget);
  } catch (e) {
    console.error(`serve: ${(e as Error).message}`);
    process.exit(2);
  }
}

const limits = connectionLimits();
let app;
try {
  app = await createSiteServer(distDirFromEnv(), { fileCacheBytes, accessLog, limits });
} catch (e) {
  console.error(`serve: ${(e as Error).message}`);
  process.exit(1);
}
const { server } = app;
const connections = trackConnections(server);
// A port in use or a host that is not this machine's: one clear line, not an unhandled 'error' event.
server.once('error', (e: NodeJS.ErrnoException) => {
  const why = e.code === 'EADDRINUSE' ? `${host}:${port} is already in use (another server running? set PORT)`
    : e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' ? `${host} is not an address of this machine (set HOST)`
    : e.code === 'EACCES' ? `no permission to listen on ${host}:${port} (ports below 1024 need privileges)`
    : e.message;
  console.error(`serve: ${why}`);
  process.exit(1);
});
server.listen(port, host, () => {
  // The bound port, so PORT=0 (any free port) can be used by tests.
  const bound = (server.address() as import('node:net').AddressInfo).port;
  console.log(`Serving the build of ${app.release.builtAt} on http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    app.unwatch();
    const underWay = [...connections.values()].filter((res) => res && !res.writableFinished).length;
    const drained = drain(server, connections, limits.drainTimeout);
    console.log(`${signal}: no new connections; finishing ${underWay} request(s) under way (at most ${limits.drainTimeout / 1000} s).`);
    const { cut } = await drained;
    console.log(cut ? `Stopped: ${cut} connection(s) still open after ${limits.drainTimeout / 1000} s were cut.` : 'Stopped: every request finished.');
    await accessLog?.close();
    process.exit(0);
  });
}
// Under `npm start`, which gives it an IPC channel: the server ends with the process that started
// it. Killed (SIGKILL, the OOM killer), that process left the server serving, nothing watching the
// content, and the next `npm start` found the port taken.
if (process.channel) process.once('disconnect', () => process.emit('SIGTERM', 'SIGTERM'));
// logrotate's convention: after moving the file away, `kill -HUP` makes the server open a new one.
// Only with a log file: otherwise SIGHUP ends the server as it always did.
if (accessLog && accessLog.target !== '-') {
  const log = accessLog;
  process.on('SIGHUP', () => {
    try {
      log.reopen();
      console.log(`SIGHUP: reopened the access log ${log.target}.`);
    } catch (e) {
      console.error(`SIGHUP: ${(e as Error).message}; still writing to the file opened before.`);
    }
  });
}
