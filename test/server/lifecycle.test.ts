// The server's connection handling (src/server/lifecycle.ts), on the real `npm run serve` script and
// a release made here (no Astro build needed): a drain on SIGTERM, and idle-socket limits.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { prerenderedUserBody, userData } from '../../src/api/prerendered.ts';
import { parseCombinedLogLine } from '../../src/tools/access-log.ts';
import { fixtureSite, ROOT } from '../support/helpers.ts';
import { workDir } from '../support/built-server.ts';

const BIG = 32 << 20;
const made: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A release with one big static file and alice's answer, served on a free port. */
async function serveRelease(env: Record<string, string> = {}, { ipc = false } = {}) {
  const dir = workDir(`lifecycle-${made.length}`);
  made.push(dir);
  fs.mkdirSync(path.join(dir, 'server'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'client'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'release.json'), '{}');
  fs.writeFileSync(path.join(dir, 'client', 'big.bin'), Buffer.alloc(BIG, 7));
  fs.writeFileSync(path.join(dir, 'client', '404.html'), '<!doctype html><title>Not found</title>');
  const { index } = fixtureSite();
  const alice = index.users.find((u) => u.username === 'alice')!;
  fs.mkdirSync(path.join(dir, 'client', 'api', 'v1', 'users'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'client', 'api', 'v1', 'users', 'alice'), prerenderedUserBody(index.builtAt, userData(alice)));
  const child = spawn(process.execPath, ['src/server/main.ts'], { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DIST_DIR: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe', ...ipc ? ['ipc' as const] : []] });
  children.push(child);
  let out = '';
  child.stderr!.on('data', (d) => { out += d; });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  const printed = (text: string) => new Promise<void>((resolve) => {
    const look = () => { if (out.includes(text)) resolve(); else child.stdout!.once('data', look); };
    look();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, port, printed, exited, output: () => out };
}

/** Connects and sends `GET path`; resolves once the first bytes of the answer arrived, the socket paused. */
function startDownload(port: number, target: string) {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const ended = new Promise<Buffer>((resolve) => socket.once('close', () => resolve(Buffer.concat(chunks))));
  const started = new Promise<void>((resolve) => {
    socket.once('data', (d: Buffer) => { chunks.push(d); socket.pause(); resolve(); socket.on('data', (more: Buffer) => chunks.push(more)); });
  });
  socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return { socket, started, ended };
}

const refused = (port: number) => new Promise<string>((resolve) => {
  const s = net.connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve('connected'); });
  s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
});

describe('started by npm start', () => {
  test('the server ends with the process that started it: its IPC channel closed, it drains and exits 0 as on SIGTERM', async () => {
    const srv = await serveRelease({}, { ipc: true });
    // What the channel's other end being killed does.
    srv.child.disconnect();
    expect(await srv.exited).toBe(0);
    expect(srv.output()).toMatch(/SIGTERM: no new connections/);
    expect(await refused(srv.port)).toBe('ECONNREFUSED');
  });
});

describe('SIGTERM', () => {
  test('stops accepting, lets a request under way finish whole, then exits 0', async () => {
    const srv = await serveRelease();
    const download = startDownload(srv.port, '/big.bin');
    await download.started;
    srv.child.kill('SIGTERM');
    await srv.printed('SIGTERM: no new connections; finishing 1 request(s)');
    expect(await refused(srv.port)).toBe('ECONNREFUSED');
    download.socket.resume();
    // `ended` is the socket's close: the server ends the kept-alive connection once the answer is out.
    const bytes = await download.ended;
    const head = bytes.subarray(0, bytes.indexOf('\r\n\r\n')).toString();
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toContain(`content-length: ${BIG}`);
    expect(bytes.length - head.length - 4).toBe(BIG);
    expect(await srv.exited).toBe(0);
    expect(srv.output()).toContain('Stopped: every request finished.');
  }, 60_000);

  test('a request that does not finish within SHUTDOWN_TIMEOUT_MS is cut, and the server still exits 0', async () => {
    const srv = await serveRelease({ SHUTDOWN_TIMEOUT_MS: '200' });
    const download = startDownload(srv.port, '/big.bin');
    await download.started;
    srv.child.kill('SIGTERM');
    expect(await srv.exited).toBe(0);
    expect(srv.output()).toContain('Stopped: 1 connection(s) still open after 0.2 s were cut.');
    download.socket.resume();
    expect((await download.ended).length).toBeLessThan(BIG);
  }, 60_000);
  test('with ACCESS_LOG, the line of a request cut by the drain is written before the server exits', async () => {
    const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'lifecycle-log-'));
    made.push(logs);
    const file = path.join(logs, 'access.log');
    const srv = await serveRelease({ SHUTDOWN_TIMEOUT_MS: '200', ACCESS_LOG: file });
    const download = startDownload(srv.port, '/big.bin');
    await download.started;
    srv.child.kill('SIGTERM');
    expect(await srv.exited).toBe(0);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('');
    expect(parseCombinedLogLine(lines[0]!)).toMatchObject({ client: '127.0.0.1', method: 'GET', target: '/big.bin', status: 200 });
    // The bytes handed to the connection before it was cut: more than the client read, at most the file.
    const bytes = Number(/" 200 (\d+) "-" "-"$/.exec(lines[0]!)?.[1]);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(BIG);
  }, 60_000);
});

describe('idle sockets', () => {
  test('beyond MAX_CONNECTIONS they are closed at once, the others after SOCKET_IDLE_MS; then clients are served', async () => {
    const srv = await serveRelease({ MAX_CONNECTIONS: '20', SOCKET_IDLE_MS: '500' });
    const sockets = await Promise.all(Array.from({ length: 30 }, () => new Promise<net.Socket>((resolve) => {
      const s = net.connect(srv.port, '127.0.0.1', () => resolve(s));
      s.on('error', () => {});
    })));
    // Every one of them closes (the server's doing: they never send a byte); the first over the limit at once.
    await Promise.all(sockets.map((s) => new Promise((resolve) => (s.destroyed ? resolve(null) : s.once('close', resolve)))));
    const r = await fetch(`http://127.0.0.1:${srv.port}/api/v1/users/alice`);
    expect(r.status).toBe(200);
  }, 60_000);
});
