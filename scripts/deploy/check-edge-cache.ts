// Usage: npm run check:edge [-- --quick]
//
// Puts a real shared cache (nginx with the deploy recipe, scripts/deploy/nginx.conf) in front of
// the real server and shows that our headers alone make it do the right thing; the recipe sets no
// `proxy_cache_valid`, so
// `Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60` decides:
//
//   t = 0       each address: the first request is a MISS, the next ones are HITs, also with
//               another Origin, Authorization, Cookie, API key, User-Agent, an Accept-Encoding
//               the recipe reads as "none", If-None-Match (a 304 from the cache) and HEAD: no
//               header we send (no Set-Cookie, no `private`, at most `Vary: Accept-Encoding`)
//               splits or disables the cache.
//               Hosts: `/` on a profile's custom domain and on the main host are two copies,
//               each a HIT on repeat, whichever is asked first.
//               Encodings: none, gzip and br are three copies (a MISS each), every client's
//               Accept-Encoding string a HIT of one of them; what comes back is in an encoding
//               that was asked for, decodes to the same bytes, and says `Vary: Accept-Encoding`.
//   t = 25 s    still HITs: inside the 30 s of freshness.
//   t = 31 s    STALE (or UPDATING): the old copy, served at once while nginx refreshes it in the
//               background; a second later a HIT with a newer upstream `Date`.
//   t = 91 s    a second set of addresses, untouched since t = 0, is past 30 + 60 s: EXPIRED,
//               MISS or REVALIDATED (the recipe revalidates with the ETag), never served stale.
//
// Each wait is from the moment the cache stored the copy, plus one second because nginx counts
// whole seconds. About 95 s in all; --quick stops after t = 0. Needs nginx on the PATH (Debian:
// `apt-get install -y nginx-light`); without it the check prints "skipped" and exits 0, so a CI
// without nginx does not fail. Exits 1 when any answer is not what the table above says.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { ROOT, buildSiteAsync, serve } from '../support/serve-build.ts';
import { NGINX_MISSING, findNginx, startNginx } from '../support/nginx.ts';
import { parseCli, step } from '../../src/cli.ts';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'content');
const SITE_URL = 'https://profiles.example.net';
/** The contract's freshness and stale-while-revalidate windows (src/http/headers.ts CACHE_CONTROL). */
const FRESH_S = 30;
const STALE_S = 60;

const { values } = parseCli({
  name: 'check:edge',
  usage: 'Usage: npm run check:edge [-- --quick]',
  options: { quick: { type: 'boolean', default: false, help: 'stop after the checks at t = 0 (a few seconds instead of about 95)' } },
  env: { PATH: 'where nginx is looked for (also /usr/sbin, /usr/local/sbin); without nginx the check is skipped' },
});

const nginxBin = findNginx();
if (!nginxBin) {
  console.log(`check:edge: skipped: ${NGINX_MISSING}.`);
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Build, start the server, start nginx in front of it.

const work = path.join(ROOT, 'node_modules', '.cache', 'edge-check', String(process.pid));
const dist = path.join(work, 'dist');
const nginxDir = path.join(work, 'nginx');
fs.rmSync(work, { recursive: true, force: true });

const children: ChildProcess[] = [];
let stopping = false;
function cleanUp() {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
}
function fail(message: string): never {
  console.error(`check:edge: ${message}`);
  cleanUp();
  process.exit(1);
}
process.once('SIGINT', () => fail('interrupted'));

const build = await step('Building the test fixture', () => buildSiteAsync({ contentDir: FIXTURE, distDir: dist, siteUrl: SITE_URL }));
if (build.status !== 0) fail(`the build failed:\n${build.stderr}${build.stdout}`);

const server = await serve({ env: { DIST_DIR: dist } }).catch((e: Error) => fail(e.message));
children.push(server.child);
server.child.once('exit', (code) => { if (!stopping) fail(`the server exited (${code}):\n${server.output()}`); });
const upstream = server.base.replace(/^http:\/\//, '');

// The deploy recipe itself (scripts/deploy/nginx.conf), each `# ADJUST` line pointed at this temp
// folder, a free port and our server (scripts/support/nginx.ts).
const nginx = await startNginx(nginxBin, 'nginx.conf', {
  dir: nginxDir,
  adjust: { proxy_cache_path: (current) => current.replace(/^\S+/, `${nginxDir}/cache`), server: upstream },
}).catch((e: Error) => fail(e.message));
children.push(nginx.child);
nginx.child.once('exit', (code) => { if (!stopping) fail(`nginx exited (${code}):\n${nginx.errorLog()}\nwith this config:\n${nginx.conf}`); });
const edge = nginx.base;

// ---------------------------------------------------------------------------------------------
// The checks.

/** Each kind of answer at two addresses: `stale` walks through stale and refresh, `expire` is left alone until it expires. */
const KINDS = [
  { kind: 'path lookup', stale: '/api/v1/users/alice', expire: '/api/v1/users/bob' },
  { kind: 'query lookup', stale: '/api/v1/users?username=alice', expire: '/api/v1/users?username=@Bob' },
  { kind: '404 (JSON)', stale: '/api/v1/users/nobody', expire: '/api/v1/users?username=nobody-else' },
  { kind: 'creators list', stale: '/service-api/v1/creators', expire: '/service-api/v1/creators?limit=2' },
  { kind: 'avatar', stale: '/api/avatar?u=alice', expire: '/api/avatar?u=bob' },
  { kind: 'page', stale: '/p/alice', expire: '/p/bob' },
  { kind: 'redirect (308)', stale: '/p/ALICE', expire: '/p/BOB' },
];
/** Request headers that differ between clients: none may make a separate cache entry or bypass it. */
const VARIANTS: [string, Record<string, string>][] = [
  ['Origin', { origin: 'https://elsewhere.example' }],
  ['Authorization', { authorization: 'Bearer not-a-token' }],
  ['Cookie', { cookie: 'session=1; theme=dark' }],
  ['X-Api-Key', { 'x-api-key': 'k-123' }],
  ['User-Agent', { 'user-agent': 'check-edge/1.0' }],
  // The recipe asks the server for br, gzip or nothing: these all mean nothing (see ENCODINGS for the others).
  ['Accept-Encoding', { 'accept-encoding': 'deflate, gzip;q=0' }],
  ['Accept-Language', { 'accept-language': 'fr-CH' }],
];

interface Answer { status: number; cache: string; date: string; body: string; headers: Headers }
async function get(address: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  // fetch would ask for gzip and br itself: the copies these checks look at are the plain ones.
  const r = await fetch(edge + address, { method, headers: { 'accept-encoding': 'identity', ...headers }, redirect: 'manual' });
  return { status: r.status, cache: r.headers.get('x-cache-status') ?? '-', date: r.headers.get('date') ?? '', body: await r.text(), headers: r.headers };
}

const problems: string[] = [];
const table = new Map<string, string[]>();
function note(address: string, column: number, text: string) {
  const row = table.get(address) ?? [];
  row[column] = text;
  table.set(address, row);
}
function check(ok: boolean, address: string, what: string) {
  if (!ok) problems.push(`${address}: ${what}`);
  return ok;
}
const isOneOf = (a: Answer, ...states: string[]) => states.includes(a.cache);

const storedAt = new Map<string, number>();
console.log(`nginx ${edge} → server http://${upstream}; Cache-Control decides (no proxy_cache_valid).\n`);

// t = 0: MISS, then HITs whatever the client sends.
for (const { stale, expire } of KINDS) {
  for (const address of [stale, expire]) {
    const first = await get(address);
    storedAt.set(address, Date.now());
    check(first.cache === 'MISS', address, `first request: expected MISS, got ${first.cache}`);
    const cc = first.headers.get('cache-control') ?? '';
    check(/\bs-maxage=30\b/.test(cc) && /\bstale-while-revalidate=60\b/.test(cc) && !/private|no-store|no-cache/.test(cc), address, `Cache-Control is \`${cc}\``);
    const vary = first.headers.get('vary');
    check(vary === null || /^accept-encoding$/i.test(vary), address, `Vary: ${vary} splits the cache`);
    check(!first.headers.has('set-cookie'), address, 'Set-Cookie stops nginx from caching');
    const second = await get(address);
    check(second.cache === 'HIT' && second.body === first.body, address, `repeat: expected a HIT with the same body, got ${second.cache}`);
    note(address, 0, `${first.status} ${first.cache} → ${second.cache}`);
    if (address !== stale) continue;
    const variants: string[] = [];
    for (const [name, headers] of VARIANTS) {
      const v = await get(address, headers);
      if (!check(v.cache === 'HIT' && v.body === first.body, address, `with ${name}: expected HIT, got ${v.cache}`)) variants.push(`${name}: ${v.cache}`);
    }
    const head = await get(address, {}, 'HEAD');
    if (!check(head.cache === 'HIT', address, `HEAD: expected HIT, got ${head.cache}`)) variants.push(`HEAD: ${head.cache}`);
    const etag = first.headers.get('etag');
    if (etag) {
      const conditional = await get(address, { 'if-none-match': etag });
      if (!check(conditional.status === 304 && conditional.cache === 'HIT', address, `If-None-Match: expected a 304 HIT, got ${conditional.status} ${conditional.cache}`)) variants.push(`If-None-Match: ${conditional.status} ${conditional.cache}`);
    }
    note(address, 1, variants.length ? variants.join(', ') : `all HIT (${VARIANTS.length} headers, HEAD${etag ? ', 304' : ''})`);
  }
}

/** An answer as bytes on the wire: node:http neither asks for nor decodes any encoding, and may set Host. */
interface RawAnswer { status: number; cache: string; encoding: string; vary: string; etag: string; bytes: Buffer }
function rawGet(address: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    http.get(edge + address, { headers, agent: false }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => resolve({
        status: r.statusCode!, cache: String(r.headers['x-cache-status'] ?? '-'), encoding: String(r.headers['content-encoding'] ?? ''),
        vary: String(r.headers.vary ?? ''), etag: String(r.headers.etag ?? ''), bytes: Buffer.concat(chunks),
      }));
    }).once('error', reject);
  });
}
const decode = (a: RawAnswer) => (a.encoding === 'br' ? zlib.brotliDecompressSync(a.bytes) : a.encoding === 'gzip' ? zlib.gunzipSync(a.bytes) : a.bytes);

// Hosts: the server answers `/` by Host, so a custom domain's `/` and the main site's are never one copy.
const MAIN_HOST = new URL(SITE_URL).host;
const CUSTOM_HOST = 'alice.example.com';
const alicePage = decode(await rawGet('/p/alice'));
const homePage = decode(await rawGet('/', { host: 'edge-check-only.example' }));
check(!alicePage.equals(homePage), '/', 'the fixture\'s home page and alice\'s page are the same bytes: the host check would prove nothing');
const pageOf = (bytes: Buffer) => (bytes.equals(alicePage) ? 'alice\'s page' : bytes.equals(homePage) ? 'the home page' : 'another page');
// Each order on an address of its own (`/?order=...` is `/` to the server), so both start empty.
for (const [address, hosts] of [['/?order=custom-first', [CUSTOM_HOST, MAIN_HOST]], ['/?order=main-first', [MAIN_HOST, CUSTOM_HOST]]] as const) {
  const seen: string[] = [];
  for (const host of hosts) {
    const want = host === CUSTOM_HOST ? alicePage : homePage;
    const first = await rawGet(address, { host });
    check(first.status === 200 && first.cache === 'MISS' && first.bytes.equals(want), `${host}${address}`,
      `first request: expected a MISS with ${pageOf(want)}, got ${first.status} ${first.cache} with ${pageOf(first.bytes)}`);
    // Case and port are not part of the host ($host), so they reach the same copy.
    const again = await rawGet(address, { host: `${host.toUpperCase()}:80` });
    check(again.cache === 'HIT' && again.bytes.equals(want), `${host}${address}`, `repeat as ${host.toUpperCase()}:80: expected a HIT with ${pageOf(want)}, got ${again.cache} with ${pageOf(again.bytes)}`);
    seen.push(`${host}: ${first.cache} → ${again.cache}, ${pageOf(again.bytes)}`);
  }
  note(address, 0, seen.join('; '));
}

// Encodings: each address in both orders (compressed asked first, or plain first).
const ENCODINGS = [
  { asked: 'identity', strings: [undefined, 'identity', 'gzip;q=0'] },
  { asked: 'gzip', strings: ['gzip', 'gzip, deflate', 'deflate, gzip;q=0.5, br;q=0'] },
  { asked: 'br', strings: ['br', 'gzip, deflate, br, zstd', 'br;q=1.0, gzip;q=0.8'] },
];
for (const [address, order] of [['/api/v1/users/dave', [2, 1, 0]], ['/p/dave', [0, 1, 2]], ['/docs', [1, 0, 2]]] as const) {
  const results: string[] = [];
  let plain: RawAnswer | undefined;
  const answers: RawAnswer[] = [];
  for (const i of order) {
    const { asked, strings } = ENCODINGS[i]!;
    const ask = (s: string | undefined) => rawGet(address, s === undefined ? {} : { 'accept-encoding': s });
    const first = await ask(strings[0]);
    check(first.status === 200 && first.cache === 'MISS', address, `asking for ${asked}: expected a MISS (a copy of its own), got ${first.status} ${first.cache}`);
    check(first.encoding === '' || first.encoding === asked, address, `asking for ${asked}: got Content-Encoding ${first.encoding}`);
    if (first.encoding) check(/\baccept-encoding\b/i.test(first.vary), address, `Content-Encoding ${first.encoding} without Vary: Accept-Encoding`);
    for (const other of strings.slice(1)) {
      const a = await ask(other);
      check(a.cache === 'HIT' && a.bytes.equals(first.bytes), address, `Accept-Encoding: ${other}: expected a HIT of the ${asked} copy, got ${a.cache}`);
    }
    if (asked === 'identity') plain = first;
    answers.push(first);
    results.push(`${asked}: ${first.cache}${first.encoding ? ` (${first.encoding})` : ''}`);
  }
  for (const a of answers) {
    check(decode(a).equals(plain!.bytes), address, `the ${a.encoding || 'plain'} body does not decode to the plain one`);
    if (a.encoding) check(a.etag !== plain!.etag, address, `the ${a.encoding} body has the plain body's ETag ${a.etag}`);
  }
  note(address, 0, results.join(', '));
}

if (!values.quick) {
  const stales = KINDS.map((k) => k.stale);
  const expires = KINDS.map((k) => k.expire);
  const first = Math.min(...storedAt.values());
  const last = Math.max(...storedAt.values());

  // t = 25 s: still fresh.
  await until(first + (FRESH_S - 5) * 1000, 'fresh for 30 s: still a HIT at 25 s');
  for (const address of stales) {
    const a = await get(address);
    check(a.cache === 'HIT', address, `at 25 s: expected HIT, got ${a.cache}`);
    note(address, 2, a.cache);
  }

  // t = 31 s: past max-age, inside stale-while-revalidate.
  await until(last + (FRESH_S + 1) * 1000, 'past 30 s: the stale copy at once, refreshed in the background');
  const before = new Map<string, Answer>();
  for (const address of stales) {
    const a = await get(address);
    before.set(address, a);
    check(isOneOf(a, 'STALE', 'UPDATING'), address, `at 31 s: expected STALE or UPDATING, got ${a.cache}`);
    note(address, 3, a.cache);
  }
  await sleep(1500);
  for (const address of stales) {
    const a = await get(address);
    const refreshed = Date.parse(a.date) > Date.parse(before.get(address)!.date);
    check(a.cache === 'HIT' && refreshed, address, `after the background refresh: expected a HIT with a newer Date, got ${a.cache} (${a.date})`);
    note(address, 4, `${a.cache}${refreshed ? ', refreshed' : ', NOT refreshed'}`);
  }

  // t = 91 s: the untouched addresses are past 30 + 60 s.
  await until(last + (FRESH_S + STALE_S + 1) * 1000, 'past 30 + 60 s without a request: fetched again, never stale');
  for (const address of expires) {
    const a = await get(address);
    check(isOneOf(a, 'EXPIRED', 'MISS', 'REVALIDATED'), address, `at 91 s: expected EXPIRED, MISS or REVALIDATED, got ${a.cache}`);
    note(address, 5, a.cache);
  }
}

// ---------------------------------------------------------------------------------------------
// The report.

const columns = ['t=0: first → repeat', 'other clients, HEAD, 304', 't=25 s', 't=31 s', 't=32.5 s', 't=91 s'];
console.log(`| kind | address | ${columns.join(' | ')} |`);
console.log(`|---|---|${columns.map(() => '---').join('|')}|`);
for (const { kind, stale, expire } of KINDS) {
  for (const address of [stale, expire]) {
    const row = table.get(address) ?? [];
    console.log(`| ${address === stale ? kind : ''} | \`${address}\` | ${columns.map((_, i) => row[i] ?? '').join(' | ')} |`);
  }
}
for (const [address, row] of table) {
  if (KINDS.some((k) => k.stale === address || k.expire === address)) continue;
  console.log(`| ${address.startsWith('/?') ? 'hosts' : 'encodings'} | \`${address}\` | ${row[0]} |${columns.slice(1).map(() => '').join(' |')} |`);
}
cleanUp();
if (problems.length) {
  console.error(`\n${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  console.error('\nA MISS where a HIT belongs means a header stops the cache (Set-Cookie, Vary, private, no-store) or the key differs; see src/http/headers.ts COMMON_HEADERS.');
  process.exit(1);
}
console.log(`\ncheck:edge: ${KINDS.length * 2} addresses behave as Cache-Control says, hosts and encodings never share a copy${values.quick ? ' (t = 0 only, --quick)' : ': fresh 30 s, stale-while-revalidate 60 s, then expired'}.`);

// ---------------------------------------------------------------------------------------------

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
async function until(at: number, why: string) {
  const wait = at - Date.now();
  // A line every 5 s: the longest wait is a minute.
  await step(`waiting ${(Math.max(0, wait) / 1000).toFixed(1)} s: ${why}`, () => sleep(Math.max(0, wait)));
}
