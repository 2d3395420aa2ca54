// Abusive clients against the real `npm run serve` script (its node flags included) and a release
// made here (no Astro build needed): pipelined requests nobody reads, headers sent a byte at a
// time, requests HTTP says are malformed, and the served release deleted from disk (issue 29).
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { prerenderedUserBody, userData } from '../../src/api/prerendered.ts';
import { ALLOWED_METHODS, NO_STORE } from '../../src/http/headers.ts';
import { ErrorBodySchema } from '../../src/schemas/api.ts';
import { MAX_PIPELINED, boundPipelining } from '../../src/server/lifecycle.ts';
import { serve, type RunningServer } from '../../scripts/support/serve-build.ts';
import { fixtureSite } from '../support/helpers.ts';
import { workDir } from '../support/built-server.ts';
import { parseResponse, rawExchange, rawRequest, type RawResponse } from '../support/raw-http.ts';

const made: string[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** An OpenAPI-sized JSON file (the real one is about 135 KB): each pipelined answer is that big. */
const OPENAPI = JSON.stringify({ openapi: '3.1.0', padding: 'x'.repeat(135_000) });

/** Writes a release with alice's answer and page, /openapi.json and the 404 page. */
function writeRelease(dir: string): void {
  fs.mkdirSync(path.join(dir, 'server'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'client', 'api', 'v1', 'users'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'client', 'p'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'release.json'), JSON.stringify({ builtAt: new Date().toISOString() }));
  fs.writeFileSync(path.join(dir, 'client', '404.html'), '<!doctype html><title>Not found</title>');
  fs.writeFileSync(path.join(dir, 'client', 'openapi.json'), OPENAPI);
  fs.writeFileSync(path.join(dir, 'client', 'p', 'alice.html'), '<!doctype html><title>alice</title>');
  const { index } = fixtureSite();
  const alice = index.users.find((u) => u.username === 'alice')!;
  fs.writeFileSync(path.join(dir, 'client', 'api', 'v1', 'users', 'alice'), prerenderedUserBody(index.builtAt, userData(alice)));
}

async function serveRelease(env: Record<string, string> = {}) {
  const dir = workDir(`hostile-sockets-${made.length}`);
  made.push(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  writeRelease(dir);
  const server = await serve({ env: { DIST_DIR: dir, ...env } });
  servers.push(server);
  return { server, dir, port: Number(new URL(server.base).port) };
}

/** A JSON error answer with the policy's headers for errors about the request itself (headers.ts REQUEST_ERROR_HEADERS). */
function expectRequestError(r: RawResponse, status: number) {
  expect(r.status).toBe(status);
  expect(r.header('content-type')).toBe('application/json; charset=utf-8');
  expect(r.header('cache-control')).toBe(NO_STORE);
  expect(r.header('connection')).toBe('close');
  expect(r.header('access-control-allow-origin')).toBe('*');
  const body = ErrorBodySchema.parse(JSON.parse(r.text));
  expect(Number(r.header('content-length'))).toBe(r.body.length);
  return body;
}

/** Splits `count` pipelined answers with a Content-Length each; fails on anything else. */
function splitAnswers(raw: Buffer): { status: number; body: Buffer }[] {
  const out: { status: number; body: Buffer }[] = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = raw.subarray(at, end).toString('latin1');
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
    if (end + 4 + length > raw.length) break;
    out.push({ status: Number(head.slice(9, 12)), body: raw.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

/** The resident memory of a process in MB, or undefined where /proc cannot tell (not Linux). */
function rssMb(pid: number): number | undefined {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return undefined;
  }
}
const hasProc = rssMb(process.pid) !== undefined;
if (!hasProc) console.warn('hostile-sockets.test.ts: the memory check is skipped: /proc/<pid>/status is not readable here (not Linux).');

describe('pipelined requests', () => {
  // 4.4 MB of requests per connection: more than the kernel's buffers hold, so the attacker's write
  // is still pending when the server closes the connection, and fails: the event waited on. On
  // main at ffcfef8 the server stopped reading without closing: the writes hung, the test timed out.
  test.skipIf(!hasProc)('48 connections pipelining GET /openapi.json and reading nothing: closed, the server grows < 100 MB, others are answered', async () => {
    const { server, port } = await serveRelease();
    const pid = server.child.pid!;
    for (let i = 0; i < 20; i++) expect((await fetch(`${server.base}/openapi.json`)).status).toBe(200);
    const before = rssMb(pid)!;
    let peak = before;
    const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid) ?? peak); }, 20);
    const flood = Buffer.from('GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(110_000));
    const closed = await Promise.all(Array.from({ length: 48 }, () => new Promise<string>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.pause(); // reads nothing, ever
        s.write(flood);
      });
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      s.once('close', () => resolve('closed'));
    })));
    // While the attackers' last bytes are still being refused, a normal client is answered.
    const normal = await fetch(`${server.base}/api/v1/users/alice`);
    clearInterval(sampler);
    peak = Math.max(peak, rssMb(pid)!);
    expect(closed.every((c) => c === 'ECONNRESET' || c === 'EPIPE' || c === 'closed')).toBe(true);
    expect(normal.status).toBe(200);
    expect((await normal.json()).data.username).toBe('alice');
    // On main at ffcfef8, 5,000 requests on each of 48 connections grew it by 551 MB.
    expect(peak - before).toBeLessThan(100);
  }, 60_000);

  test(`a client that reads gets every answer of ${MAX_PIPELINED - 28} pipelined requests, whole and in order`, async () => {
    const { port } = await serveRelease();
    const n = MAX_PIPELINED - 28;
    const targets = Array.from({ length: n }, (_, i) => (i % 2 ? '/openapi.json' : `/api/v1/users/alice?i=${i}`));
    const raw = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      const s = net.connect(port, '127.0.0.1', () => {
        s.write(targets.map((t, i) => `GET ${t} HTTP/1.1\r\nHost: x\r\n${i === n - 1 ? 'Connection: close\r\n' : ''}\r\n`).join(''));
      });
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('close', () => resolve(Buffer.concat(chunks)));
    });
    const answers = splitAnswers(raw);
    expect(answers).toHaveLength(n);
    answers.forEach((a, i) => {
      expect(a.status).toBe(200);
      if (i % 2) expect(a.body.toString()).toBe(OPENAPI);
      else expect(JSON.parse(a.body.toString()).data.username).toBe('alice');
    });
  }, 60_000);
});

describe('the bound on waiting answers, on a bare node:http server', () => {
  // The bound stops Node's parser mid-chunk (src/server/lifecycle.ts `boundPipelining`): exactly
  // MAX_PIPELINED requests are made however many one read holds. Were Node's internals to move,
  // every request of the chunk would be made (1,000 here) and this fails.
  test(`1,000 requests in one write, none answered: ${MAX_PIPELINED} requests made, then the connection closed`, async () => {
    const server = http.createServer(() => { /* never answers */ });
    boundPipelining(server);
    let made = 0;
    server.on('request', () => { made++; });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await new Promise<void>((resolve) => {
        const s = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1', () => {
          s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(1000));
        });
        s.resume();
        s.on('error', () => {});
        s.on('close', () => resolve());
      });
      expect(made).toBe(MAX_PIPELINED);
    } finally {
      server.close();
    }
  });
});

describe('slow headers', () => {
  // With HEADERS_TIMEOUT_MS=400 the sockets are cut in well under a second; on main at ffcfef8 the
  // limit was fixed at 10 s and checked every 30 s (cut after ~36 s with a 400): past the timeout.
  test('a byte at a time: a JSON 408, the connection closed, and MAX_CONNECTIONS slots freed for others', async () => {
    const { port, server } = await serveRelease({ HEADERS_TIMEOUT_MS: '400', MAX_CONNECTIONS: '4' });
    const head = 'GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(10_000);
    const answers = await Promise.all(Array.from({ length: 4 }, () => new Promise<{ raw: Buffer; sent: number }>((resolve) => {
      const chunks: Buffer[] = [];
      let sent = 0;
      const s = net.connect(port, '127.0.0.1');
      // A byte every 50 ms: never idle long enough for SOCKET_IDLE_MS, never a whole header.
      const timer = setInterval(() => { if (s.writable) s.write(head[sent++ % head.length]!); }, 50);
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('error', () => {});
      s.on('close', () => { clearInterval(timer); resolve({ raw: Buffer.concat(chunks), sent }); });
    })));
    for (const { raw, sent } of answers) {
      expect(sent).toBeLessThan(head.length); // cut before its headers could have ended
      const r = parseResponse(raw);
      const body = expectRequestError(r, 408);
      expect(body.error.code).toBe('BAD_REQUEST');
      expect(body.error.message).toMatch(/did not arrive in time/);
    }
    // Every slot was taken by them: a normal client gets in only because they were freed.
    const r = await fetch(`${server.base}/api/v1/users/alice`);
    expect(r.status).toBe(200);
  }, 30_000);
});

describe('every slot taken by slow headers', () => {
  test('a new client takes the slot of the one waiting longest for its headers, at once, not after the headers timeout', async () => {
    // The headers timeout far away: only the eviction can let the client in.
    const { port, server } = await serveRelease({ HEADERS_TIMEOUT_MS: '60000', MAX_CONNECTIONS: '4' });
    const closed: number[] = [];
    const slow: net.Socket[] = [];
    // One at a time, each accepted and its first bytes written before the next: an order of waiting.
    for (let i = 0; i < 4; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      s.on('close', () => closed.push(i));
      await new Promise((resolve) => s.write('GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nX-Slow: a', resolve));
      slow.push(s);
    }
    const r = await fetch(`${server.base}/api/v1/users/alice`, { signal: AbortSignal.timeout(5_000) });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: { username: string } }).data.username).toBe('alice');
    // The oldest slow one made room; the others still wait.
    await new Promise<void>((resolve) => { const check = () => (closed.length ? resolve() : setTimeout(check, 5)); check(); });
    expect(closed).toEqual([0]);
    for (const s of slow) s.destroy();
  }, 30_000);
});

describe('malformed requests get well-formed answers', () => {
  test('two Host headers: a JSON 400 (RFC 9112 §3.2), whichever comes first', async () => {
    const { server } = await serveRelease();
    for (const hosts of [['a.example', 'b.example'], ['x', 'x']]) {
      const bytes = Buffer.from(`GET /api/v1/users/alice HTTP/1.1\r\nHost: ${hosts[0]}\r\nAccept: */*\r\nhOsT: ${hosts[1]}\r\nConnection: close\r\n\r\n`);
      const body = expectRequestError(await rawExchange(server.base, bytes), 400);
      expect(body.error.message).toMatch(/one Host header/);
    }
    // One Host is still served.
    expect((await rawRequest(server.base, '/api/v1/users/alice')).status).toBe(200);
  });

  test('a Host that is no host[:port]: a JSON 400 (RFC 9112 §3.2); any host name, address or an empty one is served', async () => {
    const { server } = await serveRelease();
    for (const host of ['a b', 'x/y', 'alice.example.com:x', 'a@b', '[::1', 'é.example']) {
      const body = expectRequestError(await rawRequest(server.base, '/api/v1/users/alice', { headers: { host } }), 400);
      expect(body.error.message, host).toMatch(/Host header is no host/);
    }
    for (const host of ['', 'localhost', 'ALICE.example.com.:8080', '127.0.0.1:4321', '[::1]:8080', 'xn--bcher-kva.example', 'constructor']) {
      expect((await rawRequest(server.base, '/api/v1/users/alice', { headers: { host } })).status, host).toBe(200);
    }
  });

  test('CONNECT: a JSON 405 with Allow, and the connection closed', async () => {
    const { server } = await serveRelease();
    const r = await rawExchange(server.base, Buffer.from('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
    expect(r.status).toBe(405);
    expect(r.header('allow')).toBe(ALLOWED_METHODS);
    expect(r.header('content-type')).toBe('application/json; charset=utf-8');
    expect(r.header('cache-control')).toBe(NO_STORE);
    expect(r.header('connection')).toBe('close');
    const body = ErrorBodySchema.parse(JSON.parse(r.text));
    expect(body.error.code).toBe('METHOD_NOT_ALLOWED');
    expect(body.error.message).toMatch(/CONNECT is not allowed/);
  });

  test('a method HTTP does not define (methods are case-sensitive): the same JSON 405 with Allow, and the connection closed', async () => {
    const { server } = await serveRelease();
    for (const method of ['FOO', 'get', 'BREW']) {
      const r = await rawExchange(server.base, Buffer.from(`${method} /api/v1/users/alice HTTP/1.1\r\nHost: x\r\n\r\n`));
      expect(r.status, method).toBe(405);
      expect(r.header('allow'), method).toBe(ALLOWED_METHODS);
      expect(r.header('cache-control'), method).toBe(NO_STORE);
      expect(r.header('connection'), method).toBe('close');
      expect(r.header('access-control-allow-origin'), method).toBe('*');
      expect(ErrorBodySchema.parse(JSON.parse(r.text)).error.code, method).toBe('METHOD_NOT_ALLOWED');
    }
    // What is no request line is still the 400 it was.
    for (const bytes of ['GET /api/v1/users/alice HTTP/9\r\nHost: x\r\n\r\n', 'NOT HTTP\r\n\r\n', 'FOO /a b HTTP/1.1\r\nHost: x\r\n\r\n']) {
      expectRequestError(await rawExchange(server.base, Buffer.from(bytes)), 400);
    }
  });

  test('Expect: 200-ok is a JSON 417 with the policy\'s headers; Expect: 100-continue still works', async () => {
    const { server } = await serveRelease();
    const body = expectRequestError(await rawRequest(server.base, '/api/v1/users/alice', { headers: { expect: '200-ok' } }), 417);
    expect(body.error.message).toMatch(/100-continue/);
    // 100 Continue first, then the answer.
    const raw = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      const s = net.connect(Number(new URL(server.base).port), '127.0.0.1', () => {
        s.write('GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
      });
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('close', () => resolve(Buffer.concat(chunks).toString()));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(raw.slice(raw.lastIndexOf('\r\n\r\n') + 4)).data.username).toBe('alice');
  });
});

/** Writes `bytes` on one connection and reads until the server closes it. */
function exchangeAll(port: number, bytes: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', () => {});
    s.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

describe('a request Node cannot parse after others on the same connection', () => {
  // A pipelining client reads answers by position. On main at 7e37ac4 the error's answer was
  // written at once: before the answers still being made (`GET /p/alice` then garbage: only a 405,
  // read as the page's answer), and judged by the chunk's first request (a 405 for garbage).
  const get = (target: string) => `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`;
  const statusesAndBodies = (raw: Buffer) => splitAnswers(raw).map((a) => ({ status: a.status, body: a.body.toString() }));

  test('garbage: the answers to the requests before it, in order, then a JSON 400, and the connection closed', async () => {
    const { port } = await serveRelease();
    const answers = statusesAndBodies(await exchangeAll(port, get('/p/alice') + get('/api/v1/users/alice') + 'NOT HTTP\r\n\r\n'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 400]);
    expect(answers[0]!.body).toBe('<!doctype html><title>alice</title>');
    expect(JSON.parse(answers[1]!.body).data.username).toBe('alice');
    expect(ErrorBodySchema.parse(JSON.parse(answers[2]!.body)).error.message).toMatch(/could not be parsed/);
  });

  test('a method HTTP does not define: the answer before it, then the 405; headers over the limit: then the 431', async () => {
    const { port } = await serveRelease();
    const unknown = statusesAndBodies(await exchangeAll(port, get('/p/alice') + 'BREW /api/v1/users/alice HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(unknown.map((a) => a.status)).toEqual([200, 405]);
    expect(ErrorBodySchema.parse(JSON.parse(unknown[1]!.body)).error.code).toBe('METHOD_NOT_ALLOWED');
    // Many short headers: no line of them is as long as a request line over the target's limit.
    const many = Array.from({ length: 400 }, (_, i) => `X-Header-${i}: ${'v'.repeat(40)}\r\n`).join('');
    const big = statusesAndBodies(await exchangeAll(port, get('/p/alice') + `GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\n${many}\r\n`));
    expect(big.map((a) => a.status)).toEqual([200, 431]);
  });

  test('a Transfer-Encoding that does not end in chunked: one JSON 400 (RFC 9112 §6.3), nothing more, the connection closed', async () => {
    const { port } = await serveRelease();
    for (const coding of ['gzip', 'identity', 'chunked, gzip']) {
      for (const target of ['/api/v1/users/alice', '/p/alice']) {
        const raw = await exchangeAll(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ${coding}\r\n\r\n`);
        const answers = splitAnswers(raw);
        expect(answers.map((a) => a.status), `${coding} ${target}`).toEqual([400]);
        expect(raw.length, `${coding} ${target}: nothing after the answer`).toBe(raw.indexOf('\r\n\r\n') + 4 + answers[0]!.body.length);
        const r = parseResponse(raw);
        expect(r.header('connection')).toBe('close');
        // Node's parser refuses some itself (`chunked, gzip`), before any request is made.
        expect(ErrorBodySchema.parse(JSON.parse(r.text)).error.message, coding).toMatch(/Transfer-Encoding must end in chunked|could not be parsed/);
      }
    }
    // Ending in chunked, with its body: answered as any request.
    const ok = splitAnswers(await exchangeAll(port, 'GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n0\r\n\r\n'));
    expect(ok.map((a) => a.status)).toEqual([200]);
  });

  test('a broken chunked body after the request was answered: that answer alone, then the connection closed', async () => {
    const { port } = await serveRelease();
    const raw = await exchangeAll(port, 'GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    const answers = splitAnswers(raw);
    expect(answers.map((a) => a.status)).toEqual([200]);
    expect(JSON.parse(answers[0]!.body.toString()).data.username).toBe('alice');
    expect(raw.length).toBe(raw.indexOf('\r\n\r\n') + 4 + answers[0]!.body.length);
  });
});

describe('a release deleted from disk', () => {
  // On main at ffcfef8 these were 404s an edge keeps for 90 s (Cache-Control of CACHE_CONTROL).
  test('is a no-store JSON 503, not a 404; a new release is served again', async () => {
    const { server, dir } = await serveRelease();
    // Nothing is read before: a file read once is kept in memory, and answered from there.
    fs.rmSync(dir, { recursive: true, force: true });
    for (const target of ['/p/alice', '/api/v1/users/alice', '/api/v1/users?username=alice', '/openapi.json', '/no-such-page']) {
      const r = await fetch(`${server.base}${target}`);
      expect(r.status, target).toBe(503);
      expect(r.headers.get('cache-control'), target).toBe(NO_STORE);
      expect(r.headers.get('content-type'), target).toBe('application/json; charset=utf-8');
      const body = ErrorBodySchema.parse(await r.json());
      expect(body.error.message).toMatch(/files are missing/);
    }
    expect(server.output()).toContain(`The release folder ${dir}/client is gone from disk`);
    // One line for the whole outage, not one per request.
    expect(server.output().split('is gone from disk').length - 1).toBe(1);
    const back = server.nextOutput(/Now serving the build of/);
    writeRelease(dir);
    await back;
    expect((await fetch(`${server.base}/p/alice`)).status).toBe(200);
  });
});
