// The server's access log (src/server/access-log.ts, `ACCESS_LOG`): the combined-format line,
// nginx's escaping, and the real `npm run serve` writing it: to stdout, to a file the views
// importer counts, reopened on SIGHUP, refused at start when it cannot be opened, absent when unset.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { accessLogFromEnv } from '../../src/config.ts';
import { escapeLogValue, formatAccessLogLine, formatLogTime, type AccessLogEntry } from '../../src/server/access-log.ts';
import { parseCombinedLogLine, ViewCounter } from '../../src/tools/access-log.ts';
import { serve, type RunningServer } from '../../scripts/support/serve-build.ts';
import { ownBuild, sharedBuild, type OwnBuild } from '../support/built-server.ts';
import { ROOT } from '../support/helpers.ts';
import { rawExchange, rawRequest } from '../support/raw-http.ts';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
const FIXED = Date.UTC(2026, 0, 15, 12, 0, 0, 999);

let logDir = '';
beforeAll(() => { logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-log-test-')); });
afterAll(() => fs.rmSync(logDir, { recursive: true, force: true }));

describe('the line', () => {
  const entry = (more: Partial<AccessLogEntry> = {}): AccessLogEntry => ({
    client: '203.0.113.7', time: FIXED, requestLine: 'GET /p/alice HTTP/1.1', status: 200, bytes: 5897, referer: 'https://example.com/', userAgent: FIREFOX, ...more,
  });

  test('the combined format, `-` for no bytes and for missing fields', () => {
    expect(formatAccessLogLine(entry(), 60)).toBe(`203.0.113.7 - - [15/Jan/2026:13:00:00 +0100] "GET /p/alice HTTP/1.1" 200 5897 "https://example.com/" "${FIREFOX}"\n`);
    expect(formatAccessLogLine(entry({ requestLine: 'HEAD /p/alice HTTP/1.1', bytes: 0, referer: undefined }), 0))
      .toBe(`203.0.113.7 - - [15/Jan/2026:12:00:00 +0000] "HEAD /p/alice HTTP/1.1" 200 - "-" "${FIREFOX}"\n`);
    expect(formatAccessLogLine(entry({ client: undefined, requestLine: undefined, status: 414, bytes: 189, referer: undefined, userAgent: undefined }), 0))
      .toBe('- - - [15/Jan/2026:12:00:00 +0000] "-" 414 189 "-" "-"\n');
  });

  test('the time in the given zone, west of UTC across midnight too; by default the server\'s own', () => {
    expect(formatLogTime(Date.UTC(2026, 0, 1, 2, 0, 0), -300)).toBe('31/Dec/2025:21:00:00 -0500');
    expect(formatLogTime(Date.UTC(2026, 10, 21, 10, 0, 0), 330)).toBe('21/Nov/2026:15:30:00 +0530');
    const line = formatAccessLogLine(entry());
    expect(parseCombinedLogLine(line.trimEnd())?.time).toBe(FIXED - 999);
  });

  test('quotes, backslashes, control and non-ASCII bytes are escaped as nginx does', () => {
    expect(escapeLogValue('a"b\\c\n\r\t\x00\x1b[31m\x7f')).toBe('a\\x22b\\x5Cc\\x0A\\x0D\\x09\\x00\\x1B[31m\\x7F');
    // Node reads header bytes one character each (latin1): é arrives as the byte 0xE9.
    expect(escapeLogValue('caf\xe9')).toBe('caf\\xE9');
    // Above U+00FF (never from Node's parser): its UTF-8 bytes.
    expect(escapeLogValue('😀 ü')).toBe('\\xF0\\x9F\\x98\\x80 \\xFC');
    expect(escapeLogValue(FIREFOX)).toBe(FIREFOX);
  });

  test('whatever a client sends, the line is one line and reads back with the real status and bytes', () => {
    const hostile = fc.string({ unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\r', ' ', '[', ']', '-', '\\x22'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 30 });
    fc.assert(fc.property(hostile, hostile, hostile, fc.integer({ min: 100, max: 599 }), fc.nat(), (target, referer, userAgent, status, bytes) => {
      const line = formatAccessLogLine(entry({ requestLine: `GET /p/${target} HTTP/1.1`, referer, userAgent, status, bytes }));
      expect(line.indexOf('\n')).toBe(line.length - 1);
      expect(line).not.toMatch(/\r/);
      const read = parseCombinedLogLine(line.trimEnd());
      expect(read).toMatchObject({ client: '203.0.113.7', status, userAgent: userAgent ? escapeLogValue(userAgent) : '-' });
      expect(line).toContain(`" ${status} ${bytes || '-'} "`);
    }), { numRuns: 300 });
  });

  test('ACCESS_LOG: a file made absolute, `-` for stdout, unset or empty for none', () => {
    expect(accessLogFromEnv({})).toBeUndefined();
    expect(accessLogFromEnv({ ACCESS_LOG: '' })).toBeUndefined();
    expect(accessLogFromEnv({ ACCESS_LOG: '-' })).toBe('-');
    expect(accessLogFromEnv({ ACCESS_LOG: 'logs/access.log' })).toBe(path.resolve('logs/access.log'));
  });
});

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The next line the server logs for `requestLine` (`-` for an unparsed request): call it before sending. */
const nextLogLine = (server: RunningServer, requestLine: string) =>
  server.nextOutput(new RegExp(`^\\S+ - - \\[[^\\]]+\\] "${escapeRegExp(requestLine)}" .*$`, 'm')).then((m) => m[0]);
/** The line with its time as `[T]`, after checking the time is the current second or the one before. */
function withoutTime(line: string, before: number): string {
  const time = parseCombinedLogLine(line)!.time;
  expect(time).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
  expect(time).toBeLessThanOrEqual(Date.now());
  return line.replace(/\[[^\]]+\]/, '[T]');
}

describe('ACCESS_LOG=- : the lines on stdout', () => {
  let own: OwnBuild;
  beforeAll(async () => { own = await ownBuild('access-log-stdout', { ACCESS_LOG: '-' }); }, 60_000);
  afterAll(() => own?.stop());

  test('a GET, a HEAD, a 304 and a 404: the status and the body bytes actually sent', async () => {
    const before = Date.now();
    let line = nextLogLine(own.server, 'GET /p/alice HTTP/1.1');
    const page = await rawRequest(own.base, '/p/alice', { headers: { 'user-agent': FIREFOX, referer: 'https://example.com/x?y=1' } });
    expect(page.status).toBe(200);
    expect(withoutTime(await line, before)).toBe(`127.0.0.1 - - [T] "GET /p/alice HTTP/1.1" 200 ${page.body.length} "https://example.com/x?y=1" "${FIREFOX}"`);
    expect(page.header('content-length')).toBe(String(page.body.length));

    line = nextLogLine(own.server, 'HEAD /p/alice HTTP/1.1');
    expect((await rawRequest(own.base, '/p/alice', { method: 'HEAD', headers: { 'user-agent': FIREFOX } })).status).toBe(200);
    expect(withoutTime(await line, before)).toBe(`127.0.0.1 - - [T] "HEAD /p/alice HTTP/1.1" 200 - "-" "${FIREFOX}"`);

    line = nextLogLine(own.server, 'GET /p/alice HTTP/1.1');
    expect((await rawRequest(own.base, '/p/alice', { headers: { 'if-none-match': page.header('etag')! } })).status).toBe(304);
    expect(withoutTime(await line, before)).toBe('127.0.0.1 - - [T] "GET /p/alice HTTP/1.1" 304 - "-" "-"');

    line = nextLogLine(own.server, 'GET /p/nobody?x=1 HTTP/1.1');
    const missing = await rawRequest(own.base, '/p/nobody?x=1', { headers: { 'user-agent': 'curl/8.5.0' } });
    expect(missing.status).toBe(404);
    expect(missing.body.length).toBeGreaterThan(0);
    expect(withoutTime(await line, before)).toBe(`127.0.0.1 - - [T] "GET /p/nobody?x=1 HTTP/1.1" 404 ${missing.body.length} "-" "curl/8.5.0"`);
  });

  test('a request the server answers before it is parsed (414, 431, 400): a line with `"-"` and what was sent', async () => {
    const before = Date.now();
    for (const [status, bytes] of [
      [414, Buffer.from(`GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)],
      [431, Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`)],
      [400, Buffer.from('NOT HTTP\r\n\r\n')],
    ] as const) {
      const line = nextLogLine(own.server, '-');
      const r = await rawExchange(own.base, bytes);
      expect(r.status).toBe(status);
      expect(withoutTime(await line, before)).toBe(`127.0.0.1 - - [T] "-" ${status} ${r.body.length} "-" "-"`);
    }
  });

  test('a hostile User-Agent and target stay in their fields; a newline never reaches the log', async () => {
    const ua = 'Mozilla/5.0" 200 1 "-" "forged\\';
    let line = nextLogLine(own.server, 'GET /p/alice\\x22x HTTP/1.1');
    expect((await rawRequest(own.base, '/p/alice"x', { headers: { 'user-agent': ua } })).status).toBe(404);
    const logged = await line;
    expect(logged).toMatch(/" 404 \d+ "-" "Mozilla\/5\.0\\x22 200 1 \\x22-\\x22 \\x22forged\\x5C"$/);
    expect(parseCombinedLogLine(logged)).toMatchObject({ status: 404, target: '/p/alice\\x22x', userAgent: 'Mozilla/5.0\\x22 200 1 \\x22-\\x22 \\x22forged\\x5C' });

    // Node's parser refuses a line break inside a header: the server answers 400 itself, logged as one line.
    line = nextLogLine(own.server, '-');
    const forged = '127.0.0.1 - - [15/Jan/2026:12:00:00 +0000] "GET /p/alice HTTP/1.1" 200 1 "-" "Firefox"';
    const r = await rawExchange(own.base, Buffer.from(`GET /p/alice HTTP/1.1\r\nHost: x\r\nUser-Agent: a"\n${forged}\r\n\r\n`));
    expect(r.status).toBe(400);
    expect(await line).toMatch(/"-" 400 \d+ "-" "-"$/);
    expect(own.server.output()).not.toContain(forged);
  });
});

/** The lines of `file` once it has at least `n`, waiting on changes in its folder. */
function untilLines(file: string, n: number): Promise<string[]> {
  return new Promise((resolve) => {
    const watcher = fs.watch(path.dirname(file));
    const check = () => {
      const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
      if (lines.length >= n) {
        watcher.close();
        resolve(lines);
      }
    };
    watcher.on('change', check);
    check();
  });
}

describe('ACCESS_LOG=<file>', () => {
  test('the views importer counts the page view of a browser in the lines the server wrote, and nothing else', async () => {
    const file = path.join(logDir, 'round-trip.log');
    const own = await ownBuild('access-log-file', { ACCESS_LOG: file });
    try {
      const get = (target: string, ua: string, method = 'GET') => rawRequest(own.base, target, { method, headers: { 'user-agent': ua } });
      expect((await get('/p/alice', FIREFOX)).status).toBe(200); // a view
      expect((await get('/p/alice?utm_source=x', FIREFOX)).status).toBe(200); // the same client the same day
      expect((await get('/p/bob', FIREFOX, 'HEAD')).status).toBe(200);
      expect((await get('/p/bob', 'curl/8.5.0')).status).toBe(200); // a tool
      expect((await get('/p/ALICE', FIREFOX)).status).toBe(308);
      expect((await get('/api/v1/users/alice', FIREFOX)).status).toBe(200);
      expect((await rawExchange(own.base, Buffer.from('NOT HTTP\r\n\r\n'))).status).toBe(400);
    } finally {
      // SIGTERM: the lines still buffered are written before the server exits.
      await own.stop();
    }
    const counter = new ViewCounter((name) => ['alice', 'bob'].includes(name));
    await counter.addFile(file);
    expect(counter.report).toMatchObject({ lines: 7, malformed: 0, counted: 1, repeats: 1, bots: 1, notViews: 4, unknownUser: 0 });
    expect([...counter.views]).toEqual([['alice', 1]]);
  }, 60_000);

  test('SIGHUP reopens the file: lines go to the new one once logrotate has moved the old', async () => {
    const file = path.join(logDir, 'rotated.log');
    const own = await ownBuild('access-log-rotate', { ACCESS_LOG: file });
    try {
      expect((await rawRequest(own.base, '/p/alice')).status).toBe(200);
      await untilLines(file, 1);
      fs.renameSync(file, `${file}.1`);
      const reopened = own.server.nextOutput(/SIGHUP: reopened the access log .*/);
      own.server.child.kill('SIGHUP');
      expect((await reopened)[0]).toBe(`SIGHUP: reopened the access log ${file}.`);
      expect((await rawRequest(own.base, '/p/bob')).status).toBe(200);
      const now = await untilLines(file, 1);
      expect(now).toEqual([expect.stringContaining('"GET /p/bob HTTP/1.1" 200')]);
      expect(fs.readFileSync(`${file}.1`, 'utf8').trimEnd().split('\n')).toEqual([expect.stringContaining('"GET /p/alice HTTP/1.1" 200')]);
    } finally {
      await own.stop();
    }
    expect(own.server.child.exitCode).toBe(0);
  }, 60_000);

  test('a file that cannot be opened: the server does not start, one line naming it, exit code 2', async () => {
    for (const [file, why] of [[path.join(logDir, 'no-such-folder', 'access.log'), 'its folder does not exist'], [logDir, 'it is a folder']]) {
      const start = serve({ env: { DIST_DIR: sharedBuild().dist, ACCESS_LOG: file } });
      await expect(start).rejects.toThrow(`exited (2) before listening:\nserve: cannot open the access log ${file} (ACCESS_LOG): ${why}\n`);
    }
  }, 60_000);
});

describe('without ACCESS_LOG', () => {
  test('no line anywhere, no file written', async () => {
    expect(process.env.ACCESS_LOG).toBeUndefined();
    const gitStatus = () => spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT, encoding: 'utf8' }).stdout;
    const statusBefore = gitStatus();
    const own = await ownBuild('access-log-off');
    const filesBefore = fs.readdirSync(own.work, { recursive: true }).sort();
    try {
      expect((await rawRequest(own.base, '/p/alice', { headers: { 'user-agent': FIREFOX } })).status).toBe(200);
      expect((await rawExchange(own.base, Buffer.from('NOT HTTP\r\n\r\n'))).status).toBe(400);
      expect(fs.readdirSync(own.work, { recursive: true }).sort()).toEqual(filesBefore);
    } finally {
      await own.server.stop();
    }
    expect(own.server.output().split('\n').filter((l) => parseCombinedLogLine(l))).toEqual([]);
    expect(gitStatus()).toBe(statusBefore);
    await own.stop();
  }, 60_000);
});
