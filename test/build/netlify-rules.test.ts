// A static build's `_headers` and `_redirects` as Netlify reads and matches them: parsed by Netlify's
// own parsers (@netlify/headers-parser, @netlify/redirect-parser) and the redirects matched by its
// own matcher (netlify-redirector, which `netlify dev` uses too). Served over HTTP by netlify-cli
// in test/e2e/netlify.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { parseAllHeaders } from '@netlify/headers-parser';
import { parseAllRedirects } from '@netlify/redirect-parser';
import redirector from 'netlify-redirector';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { staticHostRedirects } from '../../src/build/hosts/static-host-redirects.ts';
import { addressOf, isServedFile, staticFileHeaders } from '../../src/http/headers.ts';
import { API_NOT_FOUND_FILE, NETLIFY_FOLDER_LIMIT, USER_NOT_FOUND_FILE, folderLimitWarning, foldersPastLimit } from '../../src/build/hosts/static-host-files.ts';
import { buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE } from '../support/helpers.ts';

interface HeaderRule { for: string; forRegExp: RegExp; values: Record<string, string> }
interface RedirectMatch { to: string; status: number; force: boolean }

const work = workDir('netlify-rules');
const client = path.join(work, 'dist', 'client');
let files: string[] = [];
let headerRules: HeaderRule[] = [];

beforeAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  const built = buildFixture(FIXTURE, path.join(work, 'dist'), { DEPLOY_TARGET: 'static' });
  expect(built.status, built.stderr).toBe(0);
  files = fs.readdirSync(client, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
    .map((e) => path.relative(client, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}, 120_000);

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

async function readHeaders(file: string): Promise<HeaderRule[]> {
  const { headers, errors } = await parseAllHeaders({ headersFiles: [file], configHeaders: [], minimal: false });
  expect(errors).toEqual([]);
  return headers as HeaderRule[];
}

/**
 * What Netlify adds for `urlPath`: every rule whose `forRegExp` (Netlify's own, case-insensitive,
 * `/*` matching the folder itself too) matches it. Fails when two matching rules set one header,
 * whose values a host would join into nonsense.
 */
function netlifyHeaders(urlPath: string): Record<string, string> {
  const out: Record<string, string> = {};
  const from: Record<string, string> = {};
  for (const rule of headerRules) {
    if (!rule.forRegExp.test(urlPath)) continue;
    for (const [name, value] of Object.entries(rule.values)) {
      const key = name.toLowerCase();
      expect(from[key], `${urlPath}: ${key} set by ${from[key]} and ${rule.for}`).toBeUndefined();
      from[key] = rule.for;
      out[key] = value;
    }
  }
  return out;
}

/** Netlify's matcher for a `_redirects` file, shaped as netlify-cli hands it over (dist/utils/redirects.js `normalizeRedirect`). */
async function redirectMatcher(file: string): Promise<(urlPath: string, query?: string) => RedirectMatch | null> {
  const { redirects, errors } = await parseAllRedirects({ redirectsFiles: [file], configRedirects: [], minimal: false });
  expect(errors).toEqual([]);
  const normalized = (redirects as { from: string; query: Record<string, string> }[]).map(({ from, query, ...rest }) => ({ ...rest, origin: from, params: query }));
  const matcher = await redirector.parseJSON(JSON.stringify(normalized), {});
  return (urlPath, query = '') => matcher.match({ scheme: 'https', host: 'profiles.example.net', path: urlPath, query, getHeader: () => '', getCookie: () => '' }) as RedirectMatch | null;
}

describe('_headers of a static build, as Netlify applies it', () => {
  beforeAll(async () => { headerRules = await readHeaders(path.join(client, '_headers')); });

  test('every served file gets exactly the headers our server sends, at its address and at the path netlify dev matches', () => {
    let compared = 0;
    for (const file of files.filter(isServedFile)) {
      const address = addressOf(file);
      const ext = path.posix.extname(file);
      const expected: Record<string, string> = { ...staticFileHeaders(address, ext) };
      // Netlify types a file with an extension itself; the rules type those without one.
      if (ext !== '') delete expected['content-type'];
      // Netlify matches the address asked for; netlify dev the file it found there (`/docs.html`).
      const devPath = file === 'index.html' ? '/' : `/${file}`;
      expect(netlifyHeaders(address), `${file} at ${address}`).toEqual(expected);
      expect(netlifyHeaders(devPath), `${file} at ${devPath}`).toEqual(expected);
      compared++;
    }
    // Pages, the API, the stylesheet, images, schemas: the build's every kind.
    expect(compared).toBeGreaterThan(30);
    expect(netlifyHeaders('/api/v1/users/alice')['content-type']).toBe('application/json; charset=utf-8');
    expect(netlifyHeaders('/docs')['content-security-policy']).toContain("default-src 'none'");
  });

  // Per connection or per response, never from _headers; a host compresses by its own rules and says
  // so itself (docs/deploying.md#compression).
  const PER_RESPONSE = new Set(['etag', 'date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding', 'vary']);

  test('and what our running server sends for the same files', async () => {
    const service = sharedBuild();
    let compared = 0;
    for (const file of files.filter(isServedFile)) {
      const address = addressOf(file);
      const r = await fetch(service.base + address);
      expect(r.status, address).toBe(200);
      const fromServer = Object.fromEntries([...r.headers].filter(([k]) => !PER_RESPONSE.has(k)));
      const fromHost = netlifyHeaders(address);
      // A host types a file with an extension itself; only extensionless files need the rule.
      if (!fromHost['content-type']) delete fromServer['content-type'];
      expect(fromHost, address).toEqual(fromServer);
      compared++;
    }
    expect(compared).toBeGreaterThan(30);
  });

  test('the Node server\'s release has no _headers (it decides headers itself), and never serves one', async () => {
    const service = sharedBuild();
    expect(fs.existsSync(path.join(service.dist, 'client', '_headers'))).toBe(false);
    const r = await fetch(`${service.base}/_headers`);
    expect(r.status).toBe(404);
    expect(await r.text()).not.toContain('Access-Control-Allow-Origin');
  });

  test('addresses with no file get no header twice either (the JSON 404s of _redirects are sent there)', () => {
    for (const address of ['/api/v1/users/nobody', '/api/v1/users', '/api/nope', '/service-api/v1/creators', '/p/nobody', '/whatever', '/P/ALICE']) {
      expect(netlifyHeaders(address)['access-control-allow-origin'], address).toBe('*');
    }
    // An unknown user's JSON 404 is typed and cached as the server sends it.
    expect(netlifyHeaders('/api/v1/users/nobody')).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'cache-control': staticFileHeaders('/api/v1/users/x', '')['cache-control'] });
  });
});

describe('_redirects of a static build, as Netlify matches it', () => {
  test('the query form is rewritten to the user\'s file, which exists, keeping its status 200', async () => {
    const match = await redirectMatcher(path.join(client, '_redirects'));
    const hit = match('/api/v1/users', 'username=alice');
    expect(hit).toMatchObject({ to: '/api/v1/users/alice', status: 200, force: false });
    expect(files).toContain(hit!.to.slice(1));
    // Other parameters beside it do not matter, as on our server.
    expect(match('/api/v1/users', 'limit=5&username=bob')).toMatchObject({ to: '/api/v1/users/bob', status: 200 });
    // The rules never shadow a file: none is forced.
    expect(match('/api/v1/users/alice')?.force ?? false).toBe(false);
  });

  test('the JSON 404s are named only when the build holds their files', () => {
    const has = new Set(files);
    const text = fs.readFileSync(path.join(client, '_redirects'), 'utf8');
    expect(text.includes(USER_NOT_FOUND_FILE)).toBe(has.has(USER_NOT_FOUND_FILE));
    expect(text.includes(API_NOT_FOUND_FILE)).toBe(has.has(API_NOT_FOUND_FILE));
    expect(text).toBe(staticHostRedirects((f) => has.has(f)));
  });

  test('with the JSON 404 files: an unknown user, any other API address, and nothing else', async () => {
    const file = path.join(work, 'with-404s', '_redirects');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, staticHostRedirects(() => true));
    const match = await redirectMatcher(file);
    expect(match('/api/v1/users/nobody')).toMatchObject({ to: `/${USER_NOT_FOUND_FILE}`, status: 404, force: false });
    for (const address of ['/api/v1/users', '/api/v1/users/a/b', '/api/nope', '/api', '/service-api/v1/creators', '/service-api/x']) {
      expect(match(address), address).toMatchObject({ to: `/${API_NOT_FOUND_FILE}`, status: 404, force: false });
    }
    // Pages and other addresses get Netlify's own 404: the build's 404.html.
    for (const address of ['/p/nobody', '/whatever', '/apis']) expect(match(address), address).toBeNull();
    // The query form still comes first.
    expect(match('/api/v1/users', 'username=alice')).toMatchObject({ to: '/api/v1/users/alice', status: 200 });
  });

  test('only a static build has _redirects: on Cloudflare the Worker answers these addresses itself', () => {
    expect(files).toContain('_redirects');
    expect(fs.existsSync(path.join(sharedBuild().dist, 'client', '_redirects'))).toBe(false);
  });
});

describe('Netlify\'s limit of files in one folder', () => {
  test('the per-profile folders past a limit are named with their count, and the warning says what to do', () => {
    // The fixture's 7 profiles: a page and its .br and .gz each in p/, likewise in api/v1/users/ but for answers too small to compress.
    const pages = fs.readdirSync(path.join(client, 'p')).length;
    const answers = fs.readdirSync(path.join(client, 'api', 'v1', 'users')).length;
    expect(pages).toBeGreaterThan(7);
    expect(foldersPastLimit(client)).toEqual([]);
    expect(foldersPastLimit(client, pages - 1)).toEqual([{ folder: 'p', files: pages }, ...answers > pages - 1 ? [{ folder: 'api/v1/users', files: answers }] : []]);
    expect(foldersPastLimit(client, Math.max(pages, answers))).toEqual([]);
    const said = folderLimitWarning({ folder: 'p', files: 60_000 }, true);
    expect(said).toContain('p/ holds 60,000 files');
    expect(said).toContain(`more than ${NETLIFY_FOLDER_LIMIT.toLocaleString('en')} in one folder`);
    expect(said).toContain('build with PRECOMPRESS=0');
    expect(said).toContain('docs/deploying.md#netlify');
    // Built without them already: the one way left.
    const without = folderLimitWarning({ folder: 'p', files: 60_000 }, false);
    expect(without).not.toContain('PRECOMPRESS');
    expect(without).toContain('serve more profiles with the Node server or Workers');
  });
});
