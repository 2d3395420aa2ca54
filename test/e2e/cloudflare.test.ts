// The Cloudflare Workers target under `wrangler dev` (workerd from npm, no account, no network):
// the test content built with DEPLOY_TARGET=cloudflare and served by `npm run preview:cloudflare
// -- --no-build`. What the asset server does with the build's files and `_headers`, and that what
// no file answers reaches the Worker's handler (docs/deploying.md#cloudflare-workers). Skipped, and
// saying so, only where workerd cannot run on this machine.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEPLOY_REDIRECT } from '../../src/build/astro/wrangler-deploy-config.ts';
import { buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT, readServedFile } from '../support/helpers.ts';
import { rawRequest } from '../support/raw-http.ts';
import { freePort } from '../../scripts/support/serve-build.ts';
import { WRANGLER_REDIRECT_LOCK, exclusively } from '../support/exclusive.ts';

const WORKERD = path.join(ROOT, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');
const workerdRuns = process.platform === 'linux' && process.arch === 'x64'
  ? spawnSync(WORKERD, ['--version'], { encoding: 'utf8' }).status === 0
  : spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'wrangler', 'wrangler-dist', 'cli.js'), '--version']).status === 0;
if (!workerdRuns) console.warn('cloudflare.test.ts: skipped: workerd (from the wrangler package) does not run on this machine.');

const work = workDir('cloudflare');
const dist = path.join(work, 'dist');
let base = '';
let preview: ChildProcess | undefined;
let output = '';


beforeAll(async () => {
  if (!workerdRuns) return;
  fs.rmSync(work, { recursive: true, force: true });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // The build points the project's `wrangler deploy` at itself; put the operator's redirect back.
  // Not while cloudflare-assets.test.ts checks where its own builds pointed it.
  exclusively(WRANGLER_REDIRECT_LOCK, () => {
    const redirect = path.join(ROOT, DEPLOY_REDIRECT);
    const before = fs.existsSync(redirect) ? fs.readFileSync(redirect) : undefined;
    try {
      const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'cloudflare' });
      expect(built.status, built.stderr).toBe(0);
    } finally {
      if (before) fs.writeFileSync(redirect, before);
      else fs.rmSync(redirect, { force: true });
    }
  });
  preview = spawn(process.execPath, ['scripts/deploy/preview-cloudflare.ts', '--no-build'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DIST_DIR: dist, HOST: '127.0.0.1', PORT: String(port) },
  });
  preview.stdout!.on('data', (d: Buffer) => { output += d; });
  preview.stderr!.on('data', (d: Buffer) => { output += d; });
  const exited = new Promise((_, reject) => preview!.once('exit', (code) => reject(new Error(`preview exited (${code}):\n${output}`))));
  // Ready when wrangler says so: checked on each chunk of its output, no timer.
  const ready = new Promise<void>((resolve) => {
    const check = () => { if (/Ready on /.test(output)) resolve(); };
    preview!.stdout!.on('data', check);
    preview!.stderr!.on('data', check);
  });
  await Promise.race([ready, exited]);
}, 180_000);

afterAll(async () => {
  if (preview?.exitCode === null) {
    const exited = new Promise((resolve) => preview!.once('exit', resolve));
    preview.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(work, { recursive: true, force: true });
}, 30_000);

const get = (address: string, init: RequestInit = {}) => fetch(base + address, { redirect: 'manual', ...init });

describe.skipIf(!workerdRuns)('Cloudflare Workers under wrangler dev', () => {
  test('the pages are pre-rendered in Node: byte for byte those of the Node build', () => {
    const page = (d: string) => readServedFile(path.join(d, 'client', 'p', 'alice.html')).toString('utf8');
    expect(page(dist)).toBe(page(sharedBuild().dist));
    // The Worker bundle is the handler alone, no Astro middleware chunk beside it, and of Node's
    // modules only what nodejs_compat provides (wrangler.jsonc says why).
    const server = fs.readdirSync(path.join(dist, 'server'));
    expect(server.filter((f) => f.endsWith('.mjs'))).toEqual(['entry.mjs']);
    const nodeModules = new Set(fs.readFileSync(path.join(dist, 'server', 'entry.mjs'), 'utf8').match(/(?<=from ")node:[a-z_/]+/g));
    expect([...nodeModules]).toEqual(['node:crypto']);
  });

  test('a user file is read by the Worker through ASSETS and answered with the policy\'s headers, and 304 for its ETag', async () => {
    const res = await get('/api/v1/users/alice');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('public, max-age=30, s-maxage=30, stale-while-revalidate=60');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = res.headers.get('etag');
    // Weak: the edge in front may send it in another coding (runtimeEncoded).
    expect(etag).toMatch(/^W\/"[\w-]+"$/);
    expect((await res.json() as { data: { username: string } }).data.username).toBe('alice');
    const again = await get('/api/v1/users/alice', { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    // A list holding the ETag matches too (RFC 9110 §13.1.2), as on the Node server.
    expect((await get('/api/v1/users/alice', { headers: { 'if-none-match': `"x", ${etag}` } })).status).toBe(304);
  });

  test('the Worker\'s answers name their coding (the runtime compresses), with one weak ETag for every coding and Vary', async () => {
    // node:http, which does not decode bodies: the test sees what the runtime sent.
    const raw = (target: string, headers: Record<string, string>) => new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http.get(base + target, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      }).once('error', reject);
    });
    const file = fs.readFileSync(path.join(dist, 'client', 'api', 'v1', 'users', 'alice'));
    const identity = await raw('/api/v1/users/alice', { 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept-Encoding');
    expect(identity.body.equals(file)).toBe(true);
    const etag = identity.headers.etag!;
    // Weak: the edge re-encodes by its own choice, so an ETag must not name one coding's bytes.
    expect(etag).toMatch(/^W\/"[\w-]+"$/);
    expect(etag).not.toMatch(/-(br|gz)"$/);
    for (const [accept, decode] of [['gzip', zlib.gunzipSync], ['br, gzip', zlib.brotliDecompressSync], ['gzip, deflate, br', null]] as const) {
      const r = await raw('/api/v1/users/alice', { 'accept-encoding': accept });
      expect(r.status, accept).toBe(200);
      expect(r.headers.vary, accept).toBe('Accept-Encoding');
      expect(r.headers.etag, accept).toBe(etag);
      // Whatever the edge chose, the body decodes to the file.
      const sent = r.headers['content-encoding'];
      const body = sent === 'br' ? zlib.brotliDecompressSync(r.body) : sent === 'gzip' ? zlib.gunzipSync(r.body) : r.body;
      expect(body.equals(file), `${accept}: ${sent}`).toBe(true);
      if (decode) expect(decode(r.body).equals(file), accept).toBe(true);
      const again = await raw('/api/v1/users/alice', { 'accept-encoding': accept, 'if-none-match': etag });
      expect(again.status, accept).toBe(304);
    }
    // A target longer than the Node server's parser takes is the same 414, never stored.
    const long = await raw(`/api/v1/users/${'a'.repeat(9000)}`, {});
    expect(long.status).toBe(414);
    expect(long.headers['cache-control']).toBe('no-store');
    // A coding the client does not name (`*`, `x-gzip`) is identity at the edge: with identity's ETag, never a coding's.
    for (const accept of ['*', 'x-gzip']) {
      const r = await raw('/api/v1/users/alice', { 'accept-encoding': accept });
      expect(r.headers['content-encoding'], accept).toBeUndefined();
      expect(r.headers.etag, accept).toBe(etag);
      expect(r.body.equals(file), accept).toBe(true);
    }
    // Whatever a GET gets from the edge in a coding says Vary, bodiless answers included (redirects, a 404).
    // (A preflight is no answer a cache keeps: OPTIONS is not cacheable.)
    for (const [target, method] of [['/p/ALICE', 'GET'], ['/p/alice/', 'GET'], ['/api/v1/users/nobody', 'GET'], ['/lookup?u=alice', 'GET'], ['/nothing-here', 'GET']] as const) {
      const r = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const q = http.request(base + target, { method, headers: { 'accept-encoding': 'br', origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' } }, (res) => { res.resume(); res.on('end', () => resolve(res)); });
        q.once('error', reject);
        q.end();
      });
      if (r.headers['content-encoding'] !== undefined) expect(r.headers.vary ?? '', `${method} ${target}: ${r.statusCode} ${r.headers['content-encoding']}`).toMatch(/Accept-Encoding/i);
    }
    // An answer made in memory too (the query form), and no compressed siblings in a Cloudflare build (its files count).
    const query = await raw('/api/v1/users?username=alice', { 'accept-encoding': 'gzip' });
    expect(query.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zlib.gunzipSync(query.body).toString()).data.username).toBe('alice');
    expect(fs.existsSync(path.join(dist, 'client', 'api', 'v1', 'users', 'alice.br'))).toBe(false);
    expect(fs.existsSync(path.join(dist, 'client', 'p', 'alice.html.gz'))).toBe(false);
  });

  test('a page is served at its address, by the Worker (run_worker_first); its .html address is a 404', async () => {
    const res = await get('/p/alice');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await res.text()).toBe(fs.readFileSync(path.join(dist, 'client', 'p', 'alice.html'), 'utf8'));
    const html = await get('/p/alice.html');
    expect(html.status).toBe(404);
    expect(await html.text()).toBe(fs.readFileSync(path.join(dist, 'client', '404.html'), 'utf8'));
  });

  test('Workers and the Node server give one answer: dot segments, /404, .html and trailing-slash addresses, every method on a page', async () => {
    const node = sharedBuild().base;
    // The parts of an answer that differ between two requests to the same server.
    const stable = (text: string) => text.replace(/"timestamp":"[^"]+"/g, '').replace(/"executionTimeMs":[\d.]+/g, '');
    const preflight = { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' };
    const cases: [string, string, Record<string, string>?][] = [
      ['GET', '/x/../p/alice'], ['GET', '/x/%2e%2E/p/alice'], ['GET', '/p/./alice'], ['GET', '/x/../api/v1/users/alice'],
      ['GET', '/404'], ['GET', '/404.html'], ['GET', '/index'], ['GET', '/index.html'], ['GET', '/docs.html'], ['GET', '/docs/'], ['GET', '/p/'],
      ['GET', '/p/alice'], ['GET', '/p/alice.html'], ['GET', '/p/alice/'], ['GET', '/p/nobody'], ['GET', '/nowhere'],
      ['OPTIONS', '/p/alice', preflight], ['OPTIONS', '/p/x', preflight], ['POST', '/p/alice'], ['POST', '/p/x'], ['DELETE', '/p/alice'], ['PUT', '/'],
      ['HEAD', '/p/alice'], ['OPTIONS', '/', preflight],
    ];
    const view = (r: Awaited<ReturnType<typeof rawRequest>>) => ({
      // The same validator; weak on Workers, whose edge may send it in another coding.
      status: r.status, allow: r.header('allow'), type: r.header('content-type'), location: r.header('location'), etag: r.header('etag')?.replace(/^W\//, ''),
      cors: r.header('access-control-allow-origin'), preflight: r.header('access-control-allow-headers'), body: stable(r.text),
    });
    // All at once: wrangler dev keeps each connection open 5 s after its answer, despite `Connection: close`.
    const answers = await Promise.all(cases.map(async ([method, target, headers]) => {
      const [w, n] = await Promise.all([rawRequest(base, target, { method, headers }), rawRequest(node, target, { method, headers })]);
      return { request: `${method} ${target}`, workers: view(w), node: view(n) };
    }));
    for (const a of answers) expect(a.workers, a.request).toEqual(a.node);
  });

  test('what no file answers reaches the Worker, not the asset server\'s empty 404', async () => {
    const api = await get('/api/v1/users/nobody');
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^application\/json/);
    // A page or any other address: a 404 with a body (JSON or the 404 page), which the asset server never sends.
    for (const address of ['/p/nobody', '/no/such/page']) {
      const res = await get(address);
      expect(res.status, address).toBe(404);
      expect(res.headers.get('content-type'), address).toBeTruthy();
      expect((await res.text()).length, address).toBeGreaterThan(0);
    }
  });

  test('`/` and /service-api/* run the Worker first (run_worker_first), which reads the files through ASSETS', async () => {
    const home = await get('/');
    expect(home.status).toBe(200);
    expect(await home.text()).toBe(fs.readFileSync(path.join(dist, 'client', 'index.html'), 'utf8'));
    const creators = await get('/service-api/v1/creators?limit=1');
    expect(creators.status).toBe(200);
    expect(creators.headers.get('content-type')).toMatch(/^application\/json/);
  });

  test('/api/* runs the Worker first: a POST is a JSON 405 with Allow, a preflight a 204 that allows Authorization', async () => {
    const post = await get('/api/v1/users/alice', { method: 'POST', body: '{}' });
    // The body said when a status was unexpected: under heavy load wrangler dev's own proxy has
    // answered a 500 here twice (sessions 5 and 6), which only the body tells from ours.
    expect(post.status, await post.clone().text()).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await post.json() as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    const preflight = await get('/api/v1/users/alice', { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
    expect(preflight.status, await preflight.clone().text()).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
  });

  test('POSTs with a body get their 405 every time (the Worker reads the body, so wrangler dev\'s proxy keeps the connection)', async () => {
    // Left unread, 4% of such POSTs were a 500 "Network connection lost" here (workers-sdk#5095):
    // 100 in a row pass by chance 1.7% of the time.
    const statuses = new Map<number, number>();
    for (let i = 0; i < 100; i++) {
      const res = await get('/api/v1/users/alice', { method: 'POST', body: JSON.stringify({ attempt: i, padding: 'x'.repeat(i * 40) }) });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 405: 100 });
  }, 60_000);

  test('a custom domain gets its profile\'s page at `/`; other hosts the home page', async () => {
    const page = fs.readFileSync(path.join(dist, 'client', 'p', 'alice.html'));
    const onDomain = await rawRequest(base, '/', { headers: { host: 'alice.example.com' } });
    expect(onDomain.status).toBe(200);
    expect(onDomain.body.equals(page)).toBe(true);
    expect(onDomain.header('content-security-policy')).toContain("default-src 'none'");
    const elsewhere = await rawRequest(base, '/', { headers: { host: 'bob.example.com' } });
    expect(elsewhere.body.equals(fs.readFileSync(path.join(dist, 'client', 'index.html')))).toBe(true);
  });

  test('other casings, the query form and the image addresses are answered by the Worker', async () => {
    const canonical = await (await get('/api/v1/users/alice')).json() as { data: unknown };
    for (const address of ['/api/v1/users/ALICE', '/api/v1/users?username=@Alice']) {
      const res = await get(address);
      expect(res.status, address).toBe(200);
      expect((await res.json() as { data: unknown }).data, address).toEqual(canonical.data);
    }
    const upper = await get('/p/ALICE');
    expect(upper.status).toBe(308);
    expect(upper.headers.get('location')).toBe('/p/alice');
    // A page's address with slashes after it is the page, by the Worker (`/*/` in run_worker_first), as on Node.
    for (const [address, location] of [['/docs/', '/docs'], ['/browse/1/', '/browse/1'], ['/p/Alice/', '/p/alice'], ['/p/ALICE?utm_source=x', '/p/alice?utm_source=x']]) {
      const r = await get(address!);
      expect({ status: r.status, location: r.headers.get('location') }, address).toEqual({ status: 308, location });
    }
    expect((await get('/index/')).status).toBe(404);
    const avatar = await get('/api/avatar?u=alice');
    expect(avatar.status).toBe(200);
    expect(Buffer.from(await avatar.arrayBuffer()).equals(fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png')))).toBe(true);
    expect((await get('/api/avatar?u=bob')).headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  test('the lookup box is answered by the Worker: a redirect, or the lookup page saying why with a 404 or a 400', async () => {
    const found = await get('/lookup?u=%20@Alice');
    expect(found.status).toBe(302);
    expect(found.headers.get('location')).toBe('/p/alice');
    const missing = await get('/lookup?u=nobody');
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('There is no profile called “nobody”.');
    const bad = await get('/lookup?u=');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Type a username to find its profile.');
    const page = await get('/lookup');
    expect(page.status).toBe(200);
    expect(Buffer.from(await page.arrayBuffer()).equals(fs.readFileSync(path.join(dist, 'client', 'lookup.html')))).toBe(true);
  });

  test('the lookup files are read by the Worker, never served', async () => {
    expect((await get('/_lookup/creators.json')).status).toBe(404);
  });

  test('internal files stay internal: _headers and .assetsignore are not served as files', async () => {
    for (const address of ['/_headers', '/.assetsignore']) {
      const res = await get(address);
      expect(res.status, address).toBe(404);
    }
  });
});
