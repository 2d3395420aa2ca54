// A static build (DEPLOY_TARGET=static) served by Netlify's own software: `netlify dev --offline
// --dir` from netlify-cli, no account, no network. What it applies of `_headers` and `_redirects`
// (docs/deploying.md#netlify). Not a devDependency (about 500 MB): CI installs it with
//   npm install --prefix node_modules/.cache/netlify-cli --no-save netlify-cli@26.2.0 deno@2.9.6
// and NETLIFY_CLI may name another `netlify` script. Skipped, and saying so, where it is missing.
//
// netlify dev differs from Netlify in one way that matters here: its proxy sets the `_headers`
// values first and then writes its own static server's headers over them (dist/utils/proxy.js,
// `res.writeHead(status, proxyRes.headers)`; netlify/cli#990), so Content-Type and Cache-Control
// are always its static server's. Those two are checked on the rules (test/build/netlify-rules.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HTML_CSP, addressOf, isServedFile, staticFileHeaders } from '../../src/http/headers.ts';
import { API_NOT_FOUND_FILE, USER_NOT_FOUND_FILE } from '../../src/build/hosts/static-host-files.ts';
import { buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE } from '../support/helpers.ts';
import { freePort } from '../../scripts/support/serve-build.ts';
import { netlifyMissing, startNetlifyDev, type RunningNetlify } from '../../scripts/support/netlify.ts';

const installed = netlifyMissing() === undefined;
if (!installed) console.warn(`netlify.test.ts: skipped: ${netlifyMissing()}.`);

/** Headers netlify dev's own static server sends, which it lets win over `_headers` (see above). */
const DEV_SERVER_OWN = new Set(['content-type', 'cache-control']);

const work = workDir('netlify');
let base = '';
let site = '';
let dev: RunningNetlify | undefined;
let files: string[] = [];


beforeAll(async () => {
  if (!installed) return;
  fs.rmSync(work, { recursive: true, force: true });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // As docs/deploying.md says to build for Netlify: no .br/.gz copies, Netlify compresses by itself.
  const built = buildFixture(FIXTURE, path.join(work, 'dist'), { DEPLOY_TARGET: 'static', PRECOMPRESS: '0', SITE_URL: base });
  expect(built.status, built.stderr).toBe(0);
  dev = await startNetlifyDev(path.join(work, 'dist', 'client'), port);
  site = dev.site;
  files = fs.readdirSync(site, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
    .map((e) => path.relative(site, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}, 180_000);

afterAll(async () => {
  await dev?.stop();
  fs.rmSync(work, { recursive: true, force: true });
}, 30_000);

/** An answer read whole: netlify dev closes each connection, and undici fails on a body left unread then. */
async function get(address: string) {
  const res = await fetch(base + address, { redirect: 'manual' });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, text: () => body.toString('utf8'), json: () => JSON.parse(body.toString('utf8')) as unknown };
}

describe.skipIf(!installed)('a static build under netlify dev', () => {
  test('every served file gets the headers our server sends, but those netlify dev\'s own server sets', async () => {
    let compared = 0;
    for (const file of files.filter(isServedFile)) {
      const address = addressOf(file);
      const res = await get(address);
      expect(res.status, address).toBe(200);
      expect(res.body.equals(fs.readFileSync(path.join(site, file))), address).toBe(true);
      const expected = staticFileHeaders(address, path.posix.extname(file));
      for (const [name, value] of Object.entries(expected)) {
        if (!DEV_SERVER_OWN.has(name)) expect(res.headers.get(name), `${address} ${name}`).toBe(value);
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(30);
  });

  test('pages and /docs get their CSP and X-Frame-Options, images their own CSP', async () => {
    for (const address of ['/', '/docs', '/p/alice']) {
      const res = await get(address);
      expect(res.status, address).toBe(200);
      expect(res.headers.get('content-type'), address).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy'), address).toBe(HTML_CSP);
      expect(res.headers.get('x-frame-options'), address).toBe('DENY');
    }
    expect((await get('/favicon.svg')).headers.get('content-security-policy')).toContain('sandbox');
  });

  test('JSON files with an extension are typed JSON; extensionless ones are not, by netlify dev alone', async () => {
    expect((await get('/openapi.json')).headers.get('content-type')).toBe('application/json; charset=utf-8');
    // Its static server types by extension and lets that win over `_headers`; Netlify applies the rule.
    expect((await get('/api/v1/users/alice')).headers.get('content-type')).toBe('application/octet-stream');
  });

  test('the query form is routed by _redirects to the user\'s file', async () => {
    const canonical = (await get('/api/v1/users/alice')).json() as { data: { username: string } };
    const res = await get('/api/v1/users?username=alice');
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.json()).toEqual(canonical);
    expect(canonical.data.username).toBe('alice');
    // No file folds case or strips `@`: Netlify's own 404 page, not someone else's profile.
    const other = await get('/api/v1/users?username=ALICE');
    expect(other.status).toBe(404);
  });

  test('an unknown page is the build\'s 404 page with status 404', async () => {
    const res = await get('/p/nobody');
    expect(res.status).toBe(404);
    expect(res.text()).toBe(fs.readFileSync(path.join(site, '404.html'), 'utf8'));
  });

  test('an unknown user and any other API address without a file are JSON 404s', async () => {
    expect(files).toContain(USER_NOT_FOUND_FILE);
    expect(files).toContain(API_NOT_FOUND_FILE);
    for (const [address, file] of [['/api/v1/users/nobody', USER_NOT_FOUND_FILE], ['/api/nope', API_NOT_FOUND_FILE], ['/service-api/v1/creators', API_NOT_FOUND_FILE]] as const) {
      const res = await get(address);
      expect(res.status, address).toBe(404);
      expect(res.headers.get('content-type'), address).toBe('application/json; charset=utf-8');
      expect(res.headers.get('access-control-allow-origin'), address).toBe('*');
      expect(res.text(), address).toBe(fs.readFileSync(path.join(site, file), 'utf8'));
    }
  });
});
