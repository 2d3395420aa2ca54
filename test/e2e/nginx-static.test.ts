// nginx alone on a DEPLOY_TARGET=static build, with the deploy recipe scripts/deploy/nginx-static.conf
// as written (its `# ADJUST` lines pointed at the build, a free port and temp paths): every file of
// the build at its address with the policy's headers, the handler's JSON errors, the HTML 404 page,
// precompressed files, and nothing served that a host keeps to itself.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEBIAN_MIME_TYPES, NGINX_MISSING, findNginx, startNginx, type RunningNginx } from '../../scripts/support/nginx.ts';
import { HTML_HEADERS, JSON_HEADERS, PREFLIGHT_HEADERS, METHOD_NOT_ALLOWED_HEADERS, REQUEST_ERROR_HEADERS, addressOf, isServedFile, staticFileHeaders } from '../../src/http/headers.ts';
import { API_NOT_FOUND_FILE, INVALID_USERNAME_FILE, METHOD_NOT_ALLOWED_FILE, MISSING_USERNAME_FILE, REQUEST_ERROR_FILE, USERNAME_AT_FILE, USERNAME_REPEATED_FILE, USER_NOT_FOUND_FILE } from '../../src/build/hosts/static-host-files.ts';
import { buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE } from '../support/helpers.ts';
import { rawRequest, type RawResponse } from '../support/raw-http.ts';

const nginxBin = findNginx();
const mimeTypes = fs.existsSync(DEBIAN_MIME_TYPES);
if (!nginxBin || !mimeTypes) console.warn(`nginx-static.test.ts: skipped: ${nginxBin ? `${DEBIAN_MIME_TYPES} is missing` : NGINX_MISSING}.`);

const work = workDir('nginx-static');
const dist = path.join(work, 'dist');
let client = '';
let nginx: RunningNginx | undefined;
/** Files whose `.gz` sibling the build writes (src/build/files/compress.ts). */
const GZIPPED = ['p/alice.html', 'api/v1/users/alice', 'sitemap.xml', 'openapi.json'];

beforeAll(async () => {
  if (!nginxBin || !mimeTypes) return;
  fs.rmSync(work, { recursive: true, force: true });
  const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'static' });
  expect(built.status, built.stderr).toBe(0);
  // The root is the client folder through the `dist` link, as an operator points it.
  client = path.join(dist, 'client');
  for (const file of GZIPPED) expect(fs.existsSync(path.join(client, `${file}.gz`)), `${file}.gz`).toBe(true);
  nginx = await startNginx(nginxBin, 'nginx-static.conf', { dir: path.join(work, 'nginx'), adjust: { root: client, include: DEBIAN_MIME_TYPES } });
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

const get = (target: string, init: { method?: string; headers?: Record<string, string> } = {}) => rawRequest(nginx!.base, target, init);
const file = (rel: string) => fs.readFileSync(path.join(client, rel));
const servedFiles = () => fs.readdirSync(client, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile())
  .map((e) => path.relative(client, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
  .filter((f) => isServedFile(f) && !f.endsWith('.gz') && !f.endsWith('.br'));

/** Every header of `policy` is sent with its value (names compared lowercase). */
function expectHeaders(r: RawResponse, policy: Readonly<Record<string, string>>, what: string) {
  const sent = Object.fromEntries(Object.keys(policy).map((k) => [k, r.header(k)]));
  expect(sent, what).toEqual(policy);
}

describe.skipIf(!nginxBin || !mimeTypes)('nginx alone on a static build (scripts/deploy/nginx-static.conf)', () => {
  test('every file of the build at its own address (pages without .html), its bytes and the policy\'s headers', async () => {
    const files = servedFiles();
    // Pages, the home page, /docs, sitemaps, API files, stylesheets, images, schemas.
    for (const kind of [/^p\/.+\.html$/, /^index\.html$/, /^docs\.html$/, /^sitemap.*\.xml$/, /^api\/v1\/users\//, /^_astro\/.+\.css$/, /^media\/og\/.+\.png$/, /\.json$/]) {
      expect(files.some((f) => kind.test(f)), String(kind)).toBe(true);
    }
    for (const f of files) {
      const address = addressOf(f);
      const r = await get(encodeURI(address));
      expect(r.status, address).toBe(200);
      expect(r.body.equals(file(f)), address).toBe(true);
      const dot = f.lastIndexOf('.');
      expectHeaders(r, staticFileHeaders(address, dot > f.lastIndexOf('/') ? f.slice(dot) : ''), address);
    }
    expect(addressOf('p/alice.html')).toBe('/p/alice');
    expect((await get('/')).body.equals(file('index.html'))).toBe(true);
  });

  test('a page has one address: its file name, `/index.html` and the files hosts keep to themselves are the HTML 404 page', async () => {
    const notFoundPage = file('404.html');
    expect(notFoundPage.toString()).toMatch(/<html/);
    for (const address of ['/p/alice.html', '/index.html', '/docs.html', '/404.html', '/404', '/index', '/nothing', '/p/nobody', '/p/', '/_headers', '/.nojekyll',
      '/_errors/not-found.json', '/_errors/user-not-found.json', '/p/alice.html.gz', '/sitemap.xml.gz', '/_lookup/domains']) {
      const r = await get(address);
      expect(r.status, address).toBe(404);
      expect(r.body.equals(notFoundPage), `${address}: ${r.text.slice(0, 80)}`).toBe(true);
      expectHeaders(r, HTML_HEADERS, address);
    }
    // Those files are there to be hidden: the 404s above are the recipe's doing.
    for (const f of ['_headers', '.nojekyll', API_NOT_FOUND_FILE, USER_NOT_FOUND_FILE, 'p/alice.html.gz']) expect(fs.existsSync(path.join(client, f)), f).toBe(true);
  });

  test('a page\'s address with slashes after it is a 308 to the page, as on the Node server; other casings are 404s here', async () => {
    for (const [address, location] of [['/p/alice/', '/p/alice'], ['/p/alice//', '/p/alice'], ['/docs/', '/docs'], ['/browse/1/', '/browse/1'], ['/lookup/', '/lookup'], ['/p/alice/?utm_source=x&ref=%C3%A9', '/p/alice?utm_source=x&ref=%C3%A9']]) {
      const r = await get(address!);
      expect({ status: r.status, location: r.header('location') }, address).toEqual({ status: 308, location });
    }
    for (const address of ['/p/nobody/', '/p/ALICE', '/404/', '/index/', '/DOCS/']) expect((await get(address)).status, address).toBe(404);
  });

  test('unknown users and API addresses are the handler\'s JSON 404s, with the code the Node server gives', async () => {
    const node = sharedBuild().base;
    for (const [address, errorFile] of [['/api/v1/users/nobody', USER_NOT_FOUND_FILE], ['/api/v2/anything', API_NOT_FOUND_FILE], ['/service-api/v2/x', API_NOT_FOUND_FILE], ['/api/v1/users/alice/x.css', API_NOT_FOUND_FILE]] as const) {
      const r = await get(address);
      expect(r.status, address).toBe(404);
      expect(r.body.equals(file(errorFile)), address).toBe(true);
      expectHeaders(r, JSON_HEADERS, address);
      const body = JSON.parse(r.text) as { success: boolean; error: { code: string; message: string }; meta: object };
      const server = JSON.parse((await rawRequest(node, address)).text) as typeof body;
      expect(body.success).toBe(false);
      expect(body.error.code, address).toBe(server.error.code);
      expect(Object.keys(body.meta).sort()).toEqual(Object.keys(server.meta).sort());
    }
    // Under /api/ and /service-api/, names the recipe hides elsewhere (hidden, compressed copies, `.html`) are JSON 404s too, never the HTML page.
    for (const address of ['/api/x.html', '/api/v1/alice.gz', '/api/.env', '/service-api/v1/creators.br', '/service-api/.hidden']) {
      const r = await get(address);
      expect(r.status, address).toBe(404);
      expect(r.body.equals(file(API_NOT_FOUND_FILE)), `${address}: ${r.text.slice(0, 80)}`).toBe(true);
      expectHeaders(r, JSON_HEADERS, address);
    }
    // A name no casing makes a username is the handler's 400, whatever file it names; `@` in the path its own.
    for (const [address, errorFile] of [['/api/v1/users/alice.gz', INVALID_USERNAME_FILE], ['/api/v1/users/alice.html', INVALID_USERNAME_FILE],
      ['/api/v1/users/.env', INVALID_USERNAME_FILE], ['/api/v1/users/a%20b', INVALID_USERNAME_FILE], ['/api/v1/users/_alice', INVALID_USERNAME_FILE],
      [`/api/v1/users/${'a'.repeat(33)}`, INVALID_USERNAME_FILE], ['/api/v1/users/%C3%A9', INVALID_USERNAME_FILE],
      ['/api/v1/users/@alice', USERNAME_AT_FILE], ['/api/v1/users/al%40ice', USERNAME_AT_FILE]] as const) {
      const [r, server] = [await get(address), await rawRequest(node, address)];
      expect([r.status, server.status], address).toEqual([400, 400]);
      expect(r.body.equals(file(errorFile)), `${address}: ${r.text.slice(0, 80)}`).toBe(true);
      expectHeaders(r, JSON_HEADERS, address);
      const [ours, theirs] = [JSON.parse(r.text), JSON.parse(server.text)] as { error: { code: string; message: string } }[];
      expect(ours!.error, address).toEqual(theirs!.error);
    }
    // A doubled or encoded slash is no file's address on the server: never a file here (nginx would merge the slashes).
    for (const [address, errorFile] of [['/api/v1/users//alice', API_NOT_FOUND_FILE], ['/api/v1//users/alice', API_NOT_FOUND_FILE], ['/api/v1/users/%2Falice', API_NOT_FOUND_FILE],
      ['/api/v1//users?username=alice', API_NOT_FOUND_FILE], ['/service-api//v1/creators', API_NOT_FOUND_FILE], ['//api/v1/users/alice', '404.html'], ['/p//alice', '404.html'], ['//p/alice', '404.html'], ['//', '404.html']] as const) {
      const r = await get(address);
      expect(r.status, address).toBe(404);
      expect(r.body.equals(file(errorFile)), `${address}: ${r.text.slice(0, 80)}`).toBe(true);
    }
    // The path form with no name is the handler's 400.
    const noName = await get('/api/v1/users/');
    expect(noName.status).toBe(400);
    expect(noName.body.equals(file(MISSING_USERNAME_FILE))).toBe(true);
    // The creators list needs the handler (a static build has no file for it): a JSON 404, not the first page for every query.
    const creators = await get('/service-api/v1/creators?limit=2');
    expect(creators.status).toBe(404);
    expect(creators.body.equals(file(API_NOT_FOUND_FILE))).toBe(true);
  });

  test('the query form: a lowercase name (with or without `@`) is its file, no name the handler\'s JSON 400, another casing the JSON 404', async () => {
    const node = sharedBuild().base;
    for (const query of ['alice', '@alice', '%40alice']) {
      const r = await get(`/api/v1/users?username=${query}`);
      expect(r.status, query).toBe(200);
      expect(r.body.equals(file('api/v1/users/alice')), query).toBe(true);
      expectHeaders(r, JSON_HEADERS, query);
    }
    for (const target of ['/api/v1/users', '/api/v1/users?username=', '/api/v1/users?username=%20%40%20']) {
      const r = await get(target);
      expect(r.status, target).toBe(400);
      expect(r.body.equals(file(MISSING_USERNAME_FILE)), target).toBe(true);
      expectHeaders(r, JSON_HEADERS, target);
      const server = JSON.parse((await rawRequest(node, target)).text) as { error: { code: string } };
      expect(JSON.parse(r.text).error.code, target).toBe(server.error.code);
    }
    // A name nothing decodes, that no casing makes a username: the handler's 400, in its words.
    for (const query of ['-bad', 'alice.gz', '@@alice', 'a=b', '@_x', 'x'.repeat(33)]) {
      const target = `/api/v1/users?username=${query}`;
      const [r, server] = [await get(target), await rawRequest(node, target)];
      expect([r.status, server.status], query).toEqual([400, 400]);
      expect(r.body.equals(file(INVALID_USERNAME_FILE)), query).toBe(true);
      expect(JSON.parse(r.text).error, query).toEqual(JSON.parse(server.text).error);
      expectHeaders(r, JSON_HEADERS, query);
    }
    for (const query of ['ALICE', 'nobody', '%20alice', '%2Dbad', 'x'.repeat(201)]) {
      const r = await get(`/api/v1/users?username=${query}`);
      expect(r.status, query).toBe(404);
      expect(r.body.equals(file(USER_NOT_FOUND_FILE)), query).toBe(true);
    }
    // Parameters by their exact name, as the handler reads them: given twice its 400 (whichever
    // comes first), in another casing no `username` at all; neither is a name's file.
    for (const [query, errorFile] of [['username=bob&username=alice', USERNAME_REPEATED_FILE], ['username=alice&x=1&username=', USERNAME_REPEATED_FILE],
      // A percent-encoded name may be `username` (the handler decodes names): not a name nginx can be sure of.
      ['username=alice&%75sername=bob', USERNAME_REPEATED_FILE],
      ['USERNAME=alice', MISSING_USERNAME_FILE], ['Username=bob&username=alice', null]] as const) {
      const target = `/api/v1/users?${query}`;
      const [r, server] = [await get(target), await rawRequest(node, target)];
      expect(r.status, query).toBe(server.status);
      if (errorFile === null) {
        expect(r.body.equals(file('api/v1/users/alice')), query).toBe(true);
        continue;
      }
      expect(r.body.equals(file(errorFile)), query).toBe(true);
      expect(JSON.parse(r.text).error.code, query).toBe(JSON.parse(server.text).error.code);
      expectHeaders(r, JSON_HEADERS, query);
    }
  });

  test('nginx\'s own refusals of a request are the server\'s JSON request errors, never stored by a cache', async () => {
    const cases: [string, string, Record<string, string>, number][] = [
      ['bad escape', '/api/v1/users/al%ice', {}, 400],
      ['target too long', `/api/v1/users/${'a'.repeat(9000)}`, {}, 414],
      ['headers too large', '/api/v1/users/alice', { 'x-big': 'b'.repeat(20_000) }, 431],
      ['precondition', '/api/v1/users/alice', { 'if-match': '"nope"' }, 412],
      ['precondition on a page', '/p/alice', { 'if-unmodified-since': 'Sat, 01 Jan 2000 00:00:00 GMT' }, 412],
    ];
    for (const [what, target, headers, status] of cases) {
      const r = await get(target, { headers });
      expect(r.status, what).toBe(status);
      expect(r.body.equals(file(REQUEST_ERROR_FILE)), `${what}: ${r.text.slice(0, 80)}`).toBe(true);
      expect(JSON.parse(r.text).error.code, what).toBe('BAD_REQUEST');
      // nginx keeps the connection or not as it sees fit; the rest is the server's policy.
      const { connection: _, ...policy } = REQUEST_ERROR_HEADERS;
      expectHeaders(r, policy, what);
    }
    // `Range` is ignored, as the server ignores it: the whole file.
    for (const target of ['/api/v1/users/alice', '/api/v1/users?username=alice', '/p/alice']) {
      for (const range of ['bytes=0-9', 'bytes=99999-']) {
        const r = await get(target, { headers: { range } });
        expect(r.status, `${target} ${range}`).toBe(200);
        expect(r.body.equals(file(target === '/p/alice' ? 'p/alice.html' : 'api/v1/users/alice')), `${target} ${range}`).toBe(true);
      }
    }
  });

  test('methods: a preflight as the server answers it, any other method but GET and HEAD the handler\'s JSON 405', async () => {
    const pre = await get('/api/v1/users/alice', { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(204);
    expectHeaders(pre, PREFLIGHT_HEADERS, 'OPTIONS');
    for (const [method, address] of [['POST', '/api/v1/users/alice'], ['DELETE', '/p/alice'], ['PUT', '/nothing']]) {
      const r = await get(address, { method, headers: { 'content-length': '0' } });
      expect(r.status, `${method} ${address}`).toBe(405);
      expect(r.body.equals(file(METHOD_NOT_ALLOWED_FILE))).toBe(true);
      expect(JSON.parse(r.text).error.code).toBe('METHOD_NOT_ALLOWED');
      expectHeaders(r, METHOD_NOT_ALLOWED_HEADERS, `${method} ${address}`);
    }
    const head = await get('/api/v1/users/alice', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.header('content-length')).toBe(String(file('api/v1/users/alice').length));
  });

  test('precompressed files: the `.gz` for clients that accept gzip, with Vary and an ETag of its own; brotli is not sent', async () => {
    for (const f of GZIPPED) {
      const address = addressOf(f);
      const plain = await get(address);
      const gzip = await get(address, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      const brOnly = await get(address, { headers: { 'accept-encoding': 'br' } });
      expect(plain.header('content-encoding'), address).toBeUndefined();
      expect(gzip.header('content-encoding'), address).toBe('gzip');
      expect(brOnly.header('content-encoding'), address).toBeUndefined();
      for (const r of [plain, gzip, brOnly]) expect(r.header('vary'), address).toBe('Accept-Encoding');
      expect(gzip.body.equals(file(`${f}.gz`)), address).toBe(true);
      expect(zlib.gunzipSync(gzip.body).equals(plain.body), address).toBe(true);
      expect(plain.body.equals(file(f)) && brOnly.body.equals(plain.body), address).toBe(true);
      expect(gzip.header('etag'), address).not.toBe(plain.header('etag'));
      expect(gzip.header('content-type'), address).toBe(plain.header('content-type'));
      // A conditional request is answered per encoding.
      expect((await get(address, { headers: { 'if-none-match': plain.header('etag')! } })).status, address).toBe(304);
      expect((await get(address, { headers: { 'accept-encoding': 'gzip', 'if-none-match': gzip.header('etag')! } })).status, address).toBe(304);
    }
  });
});
