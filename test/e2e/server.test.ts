// The whole service: the test content built with `npm run build`'s script, served by the real
// server (`npm run serve`'s script) on a free port, called over HTTP. The run's shared build is
// only read; the tests that rebuild work on a copy of their own.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { etagOf } from '../../src/http/response.ts';
import { ErrorBodySchema, UserBodySchema } from '../../src/schemas/api.ts';
import { isReleaseId, readReleaseInfo, releasePath, servedRelease } from '../../src/release/releases.ts';
import { buildFixture, ownBuild, sharedBuild, workDir } from '../support/built-server.ts';
import { buildFoldersProblem } from '../../src/config.ts';
import { FIXTURE, PRIVATE_MARKERS, ROOT, readDecoded, readServedFile } from '../support/helpers.ts';
import { compressedBaseOf } from '../../src/http/headers.ts';
import { LOOKUP_INPUT, LOOKUP_PROBLEM } from '../../src/api/handler.ts';

const { base, dist: DIST } = sharedBuild();

// The identity bytes unless a test asks otherwise: these tests compare answers with the files' own
// bytes, ETags and lengths (compression is test/e2e/compression.test.ts's).
const getFrom = (origin: string) => (p: string, init?: RequestInit) =>
  fetch(origin + p, { redirect: 'manual', ...init, headers: { 'accept-encoding': 'identity', ...init?.headers as Record<string, string> } });
const get = getFrom(base);

describe('the built service over HTTP', () => {
  test('the home page\'s lookup box, sent as a browser without script sends it: the page, or the lookup page saying why with a 404 or a 400', async () => {
    const home = await get('/');
    expect(home.headers.get('content-security-policy')).toContain("form-action 'self'");
    const html = await home.text();
    // The form as the page has it: its action, method and field name.
    const form = /<form\b[^>]*\baction="([^"]+)"[^>]*\bmethod="get"[^>]*>[\s\S]*?<input\b[^>]*\bname="([^"]+)"/.exec(html);
    expect(form, 'a GET form with a named field').not.toBeNull();
    const [, action, field] = form!;
    const send = (typed: string) => get(`${action}?${new URLSearchParams({ [field!]: typed })}`);
    const found = await send(' @Alice ');
    expect(found.status).toBe(302);
    expect(found.headers.get('location')).toBe('/p/alice');
    const page = await get(found.headers.get('location')!);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(readDecoded(path.join(DIST, 'client', 'p', 'alice.html')).toString('utf8'));
    // The lookup page as built, with the reason in its place and what was typed in its box.
    const lookupPage = readDecoded(path.join(DIST, 'client', 'lookup.html')).toString('utf8');
    const filled = (typed: string, message: string) => lookupPage
      .replace(LOOKUP_PROBLEM, `<p class="lookup-problem" role="alert">${message}</p>`)
      .replace(LOOKUP_INPUT, `${LOOKUP_INPUT} value="${typed}"`);
    const missing = await send('nobody');
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe(filled('nobody', 'There is no profile called “nobody”.'));
    for (const [typed, message] of [['', 'Type a username to find its profile.'], ['not a name', '“not a name” is not a username.']]) {
      const bad = await send(typed!);
      expect(bad.status, typed).toBe(400);
      expect(bad.headers.get('content-type'), typed).toBe('text/html; charset=utf-8');
      expect(await bad.text(), typed).toBe(filled(typed!, message!));
    }
  });

  test('the pre-rendered file and the on-demand route answer the same data', async () => {
    const file = await get('/api/v1/users/alice');
    expect(file.status).toBe(200);
    const fromFile = UserBodySchema.parse(await file.json());
    expect(fromFile.meta.timestamp).toBe('2026-01-15T12:00:00.000Z');
    expect(fromFile.data.accountAgeDays).toBe(1768);
    for (const p of ['/api/v1/users/ALICE', '/api/v1/users?username=@Alice']) {
      const r = await get(p);
      expect(r.status, p).toBe(200);
      expect(UserBodySchema.parse(await r.json()).data, p).toEqual(fromFile.data);
    }
  });

  test('each user\'s pre-rendered answer (served from memory) is byte for byte its file, with the file\'s strong ETag', async () => {
    const dir = path.join(DIST, 'client', 'api', 'v1', 'users');
    const names = fs.readdirSync(dir).filter((f) => compressedBaseOf(f) === undefined);
    expect(names.length).toBeGreaterThan(3);
    for (const name of names) {
      const bytes = readServedFile(path.join(dir, name));
      const r = await get(`/api/v1/users/${name}`);
      expect(r.status, name).toBe(200);
      expect(Buffer.from(await r.arrayBuffer()).equals(bytes), name).toBe(true);
      expect(r.headers.get('etag'), name).toBe(etagOf(bytes));
      expect(r.headers.get('content-length'), name).toBe(String(bytes.length));
      // Percent-encoded, the same file.
      const encoded = await get(`/api/v1/users/${name.replace(/^./, (c) => `%${c.charCodeAt(0).toString(16)}`)}`);
      expect(Buffer.from(await encoded.arrayBuffer()).equals(bytes), name).toBe(true);
    }
  });

  test('static files carry the same headers as on-demand answers', async () => {
    for (const p of ['/api/v1/users/alice', '/service-api/v1/creators', '/p/alice', '/', '/favicon.svg']) {
      const r = await get(p);
      expect(r.status, p).toBe(200);
      expect(r.headers.get('access-control-allow-origin'), p).toBe('*');
      expect(r.headers.get('cache-control'), p).toBe('public, max-age=30, s-maxage=30, stale-while-revalidate=60');
      expect(r.headers.get('x-content-type-options'), p).toBe('nosniff');
      expect(r.headers.get('etag'), p).toMatch(/^"[\w-]+"$/);
    }
    expect((await get('/api/v1/users/alice')).headers.get('content-type')).toBe('application/json; charset=utf-8');
    const page = await get('/p/alice');
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  test('conditional GET and HEAD on static files', async () => {
    const r = await get('/api/v1/users/alice');
    const etag = r.headers.get('etag')!;
    const again = await get('/api/v1/users/alice', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const head = await get('/api/v1/users/alice', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(await r.text())));
    expect(await head.text()).toBe('');
  });

  test('methods and preflight on static files too', async () => {
    const post = await get('/api/v1/users/alice', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(ErrorBodySchema.parse(await post.json()).error.code).toBe('METHOD_NOT_ALLOWED');
    const pre = await get('/p/alice', { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
  });

  test('errors are JSON under /api/ and /service-api/', async () => {
    for (const [p, status, code] of [
      ['/api/v1/users/nobody', 404, 'USER_NOT_FOUND'], ['/api/v1/users?username=', 400, 'MISSING_USERNAME'],
      ['/api/v1/users/@alice', 400, 'INVALID_USERNAME'], ['/api/whatever', 404, 'NOT_FOUND'], ['/service-api/v2/x', 404, 'NOT_FOUND'],
      ['/api/v1/users/alice/x.css', 404, 'NOT_FOUND'], ['/api/v1/users/%E0%A4%A', 400, 'INVALID_USERNAME'],
    ] as const) {
      const r = await get(p);
      expect(r.status, p).toBe(status);
      expect(r.headers.get('access-control-allow-origin'), p).toBe('*');
      expect(ErrorBodySchema.parse(await r.json()).error.code, p).toBe(code);
    }
  });

  test('pages: the profile, a redirect for other casings, a 404 page', async () => {
    const page = await (await get('/p/alice')).text();
    expect(page).toContain('Alice Liddell 🌸 &amp; «friends»');
    expect(page).toContain('href="https://github.com/alice-example"');
    expect(page).not.toContain('<b>markup</b>');
    const carol = await (await get('/p/carol')).text();
    expect(carol).toContain('This profile has been suspended for repeated spam.');
    expect(carol).not.toContain('twitter.com/carol-example');
    const upper = await get('/p/ALICE');
    expect(upper.status).toBe(308);
    expect(upper.headers.get('location')).toBe('/p/alice');
    const missing = await get('/p/nobody');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await missing.text()).toContain('Nothing here');
    expect((await get('/p/alice/foo.js')).status).toBe(404);
    // A page's address with slashes after it is the page, by a permanent redirect; `/p/` names in any casing.
    // The query goes along, as it came (a link's `utm_source`).
    for (const [address, location] of [
      ['/p/ALICE/', '/p/alice'], ['/p/alice//', '/p/alice'], ['/docs/', '/docs'], ['/browse/1/', '/browse/1'], ['/lookup/', '/lookup'],
      ['/p/ALICE?utm_source=x&ref=%C3%A9', '/p/alice?utm_source=x&ref=%C3%A9'], ['/docs/?a=1', '/docs?a=1'],
    ]) {
      const r = await get(address!);
      expect({ status: r.status, location: r.headers.get('location') }, address).toEqual({ status: 308, location });
    }
    // No redirect to what is no page of its own address (the 404 page, the home page by its file name).
    for (const address of ['/404/', '/index/', '/DOCS/', '/p/nobody/']) expect((await get(address)).status, address).toBe(404);
  });

  test('the HTML and CSS of a profile page stay under 30 KB', async () => {
    for (const name of ['alice', 'carol', 'dave']) {
      const html = await (await get(`/p/${name}`)).text();
      const css = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
      expect(css.length).toBeGreaterThan(0);
      let bytes = Buffer.byteLength(html);
      for (const href of css) bytes += (await (await get(href)).arrayBuffer()).byteLength;
      expect(bytes, name).toBeLessThan(30 * 1024);
    }
  });

  test('source, content and the server bundle are never served', async () => {
    for (const p of ['/package.json', '/server/entry.mjs', '/../server/site-index.json', '/%2e%2e/server/site-index.json', '/content/profiles/alice.yaml', '/src/api/handler.ts', '/p/..%2F..%2Fpackage.json']) {
      const r = await get(p);
      expect(r.status, p).toBe(404);
      expect(await r.text()).not.toContain('"dependencies"');
    }
  });

  test('Range is ignored, as RFC 9110 §14.2 allows: the whole image or file, 200, never a partial answer', async () => {
    const avatar = fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png'));
    for (const p of ['/api/avatar?u=alice', '/media/avatars/alice.png']) {
      for (const range of ['bytes=0-9', 'bytes=-5', 'bytes=99999999-', 'bytes=a-b']) {
        const r = await get(p, { headers: { range } });
        expect(r.status, `${p} ${range}`).toBe(200);
        expect(r.headers.get('content-range'), `${p} ${range}`).toBeNull();
        expect(Buffer.from(await r.arrayBuffer()).equals(avatar), `${p} ${range}`).toBe(true);
      }
    }
  });

  test('a request Node cannot parse gets a JSON 400, not a 5xx', async () => {
    const net = await import('node:net');
    const { port } = new URL(base);
    const reply = await new Promise<string>((resolve) => {
      const s = net.connect(Number(port), '127.0.0.1', () => s.write('GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
      let data = '';
      s.on('data', (d) => { data += d; });
      s.on('close', () => resolve(data));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).toContain('"code":"BAD_REQUEST"');
  });

  test('no private data in any file of the build', () => {
    for (const entry of fs.readdirSync(DIST, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      // Compressed siblings decoded: they hold what their file holds.
      const text = readDecoded(path.join(entry.parentPath, entry.name)).toString('latin1');
      for (const m of PRIVATE_MARKERS) expect(text.includes(m), `${entry.name} holds ${m}`).toBe(false);
    }
  });

  test('bad content fails the build with file and line, and the last good build stays', async () => {
    const own = await ownBuild('broken-build');
    onTestFinished(() => own.stop());
    const broken = own.fixtureWith('broken', { 'profiles/bob.yaml': 'displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\ndispalyName: B\n' });
    const release = fs.realpathSync(own.dist);
    const answers = fs.readFileSync(path.join(own.dist, 'server', 'record.ndjson'), 'utf8');
    const b = own.rebuild(broken);
    expect(b.status).toBe(1);
    expect(b.stderr).toContain('bob.yaml:3:1 `dispalyName`: unknown key `dispalyName`');
    expect(b.stderr).toContain('did you mean `displayName`?');
    expect(fs.realpathSync(own.dist)).toBe(release);
    expect(fs.readFileSync(path.join(own.dist, 'server', 'record.ndjson'), 'utf8')).toBe(answers);
    // Nothing of the failed build is left: only complete releases beside the link.
    expect(fs.readdirSync(`${own.dist}.releases`).filter((n) => !isReleaseId(n))).toEqual([]);
    expect((await getFrom(own.base)('/api/v1/users/bob')).status).toBe(200);
  });

  test('a DIST_DIR outside the project is refused at once, with the fix, and nothing is written', () => {
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dist-outside-')), 'dist');
    try {
      const b = buildFixture(FIXTURE, outside);
      expect(b.status).toBe(2);
      expect(b.stderr).toContain('DIST_DIR must be inside the project');
      expect(fs.readdirSync(path.dirname(outside))).toEqual([]);
    } finally {
      fs.rmSync(path.dirname(outside), { recursive: true, force: true });
    }
  });

  // On main at 4d1097c `DIST_DIR=docs` moved the docs into release 000001 and a fifth build deleted
  // them; a content folder inside public/ was published whole, private: notes included.
  test('a DIST_DIR that holds files but no build is refused at once, with the fix, and left as it was', () => {
    const folder = path.join(workDir('not-a-build'), 'docs');
    fs.rmSync(path.dirname(folder), { recursive: true, force: true });
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'notes.md'), '# mine\n');
    try {
      const b = buildFixture(FIXTURE, folder);
      expect(b.status).toBe(2);
      expect(b.stderr).toContain('is a folder that holds no build (no client/ in it)');
      expect(b.stderr).toContain('Choose a new or empty folder');
      expect(fs.lstatSync(folder).isDirectory()).toBe(true);
      expect(fs.readdirSync(folder)).toEqual(['notes.md']);
      expect(fs.readdirSync(path.dirname(folder))).toEqual(['docs']);
    } finally {
      fs.rmSync(path.dirname(folder), { recursive: true, force: true });
    }
  });

  test('the build\'s folders: nothing inside public/, content and build apart; an empty folder or an earlier build is taken', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'folders-'));
    try {
      const at = (...p: string[]) => path.join(root, ...p);
      const content = at('content');
      expect(buildFoldersProblem(root, at('dist'), at('public', 'content'))).toMatch(/^CONTENT_DIR must not be inside public\/.*private: notes included/);
      expect(buildFoldersProblem(root, at('public'), content)).toMatch(/^DIST_DIR must not be inside public\//);
      expect(buildFoldersProblem(root, at('public', 'dist'), content)).toMatch(/^DIST_DIR must not be inside public\//);
      expect(buildFoldersProblem(root, at('content', 'dist'), content)).toMatch(/must be apart/);
      expect(buildFoldersProblem(root, root, content)).toMatch(/must be apart/);
      // Not there, empty, or an earlier build: fine. `publicity` is no public/.
      expect(buildFoldersProblem(root, at('dist'), content)).toBeUndefined();
      expect(buildFoldersProblem(root, at('publicity'), at('publicity-content'))).toBeUndefined();
      fs.mkdirSync(at('dist'));
      expect(buildFoldersProblem(root, at('dist'), content)).toBeUndefined();
      fs.writeFileSync(at('dist', 'index.html'), '');
      expect(buildFoldersProblem(root, at('dist'), content)).toMatch(/holds no build/);
      fs.mkdirSync(at('dist', 'client'));
      expect(buildFoldersProblem(root, at('dist'), content)).toBeUndefined();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  test('a port in use is one clear line and exit code 1, not a stack trace', () => {
    const b = spawnSync(process.execPath, ['src/server/main.ts'], {
      cwd: ROOT, encoding: 'utf8', timeout: 20_000,
      env: { ...process.env, DIST_DIR: DIST, HOST: '127.0.0.1', PORT: new URL(base).port },
    });
    expect(b.status).toBe(1);
    expect(b.stderr.trim()).toBe(`serve: 127.0.0.1:${new URL(base).port} is already in use (another server running? set PORT)`);
  });

  test('a new build swapped in is served without a restart', async () => {
    const own = await ownBuild('swapped-build');
    onTestFinished(() => own.stop());
    const edited = own.fixtureWith('edited', { 'profiles/bob.yaml': 'displayName: Robert\ncreatedAt: 2024-11-02T00:00:00Z\n' });
    // The server looks for a new build every 2 s and says when it has switched.
    const switched = own.server.nextOutput(/Now serving the build of/);
    const b = own.rebuild(edited);
    expect(b.status, String(b.stderr)).toBe(0);
    await switched;
    const ownGet = getFrom(own.base);
    const name = UserBodySchema.parse(await (await ownGet('/api/v1/users?username=bob')).json()).data.displayName;
    expect(name).toBe('Robert');
    expect(await (await ownGet('/p/bob')).text()).toContain('Robert');
    // Only bob's page was rendered; the new release holds only it and reads the others from the
    // release before (src/release/layers.ts), which is untouched.
    expect(b.stdout).toMatch(/pages \(1 rendered, 6 unchanged\)/);
    const info = readReleaseInfo(own.dist, servedRelease(own.dist)!)!;
    expect(info.layers?.base).toBe(info.previous);
    expect(fs.readdirSync(path.join(own.dist, 'client', 'p')).sort()).toEqual(['bob.html']);
    const previous = releasePath(own.dist, info.previous!);
    expect(await (await ownGet('/p/alice')).text()).toBe(readServedFile(path.join(previous, 'client', 'p', 'alice.html')).toString('utf8'));
    expect(readServedFile(path.join(previous, 'client', 'p', 'bob.html')).toString('utf8')).not.toContain('Robert');
  }, 30_000);
});
