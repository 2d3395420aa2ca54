// Usage: npm run check:edge [-- --quick]
//
// Puts a real shared cache (nginx with the deploy recipe, scripts/deploy/nginx.conf) in front of
// the real server and shows that our headers alone make it do the right thing; the recipe sets no
// `proxy_cache_valid`, so
// `Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60` decides:
//
//   t = 0       each address: the first request is a MISS, the next ones are HITs, also with
//               another Origin, Authorization, Cookie, API key, User-Agent, Accept-Language,
//               If-None-Match (a 304 from the cache) and HEAD: no header we send (no Set-Cookie,
//               no `private`, no Vary but `Vary: Accept-Encoding`) splits or disables the cache.
//               A file's answer varies by Accept-Encoding (its compressed siblings): another
//               Accept-Encoding may be one more MISS, once; the next request like it is a HIT
//               with the same decoded body.
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
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT, buildSiteAsync, serve } from '../support/serve-build.ts';
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

const nginxBin = ['nginx', '/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((bin) => !spawnSync(bin, ['-v']).error);
if (!nginxBin) {
  console.log('check:edge: skipped: nginx is not installed (Debian/Ubuntu: `apt-get install -y nginx-light`).');
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Build, start the server, start nginx in front of it.

const work = path.join(ROOT, 'node_modules', '.cache', 'edge-check', String(process.pid));
const dist = path.join(work, 'dist');
const nginxDir = path.join(work, 'nginx');
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(nginxDir, { recursive: true });

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

const edgePort = await new Promise<number>((resolve) => {
  const probe = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(port));
  });
});

// The deploy recipe itself (scripts/deploy/nginx.conf), with each `# ADJUST` line pointed at this
// temp folder, port and server: what operators copy is what is checked. As root, workers would
// run as `nobody` and could not write the cache folder under ours.
const nginxConf = localNginxConf(fs.readFileSync(path.join(ROOT, 'scripts', 'deploy', 'nginx.conf'), 'utf8'));

function localNginxConf(recipe: string): string {
  const local: [RegExp, string][] = [
    [/^(\s*)pid .*# ADJUST$/m, `$1pid ${nginxDir}/nginx.pid;`],
    [/^(\s*)error_log .*# ADJUST$/m, `$1error_log ${nginxDir}/error.log warn;`],
    [/^(\s*)access_log .*# ADJUST$/m, `$1access_log ${nginxDir}/access.log combined;`],
    [/^(\s*)proxy_cache_path \S+ (.*?)\s*# ADJUST$/m, `$1proxy_cache_path ${nginxDir}/cache $2`],
    [/^(\s*)server 127\.0\.0\.1:\d+;.*# ADJUST.*$/m, `$1server ${upstream};`],
    [/^(\s*)listen 80;.*# ADJUST.*$/m, `$1listen 127.0.0.1:${edgePort};`],
    [/^worker_processes .*$/m, 'worker_processes 1;'],
  ];
  let conf = recipe;
  for (const [line, value] of local) {
    if (!line.test(conf)) fail(`scripts/deploy/nginx.conf has no line matching ${line}: update localNginxConf in this script`);
    conf = conf.replace(line, value);
  }
  if (conf.includes('# ADJUST')) fail(`scripts/deploy/nginx.conf has an # ADJUST line this script does not set:\n${conf.split('\n').filter((l) => l.includes('# ADJUST')).join('\n')}`);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `    ${t}_temp_path ${nginxDir}/${t};`).join('\n');
  return `daemon off;\n${process.getuid?.() === 0 ? 'user root root;\n' : ''}${conf.replace(/^http \{$/m, `http {\n${temp}`)}`;
}
fs.writeFileSync(path.join(nginxDir, 'nginx.conf'), nginxConf);
const nginx = spawn(nginxBin, ['-p', nginxDir, '-c', path.join(nginxDir, 'nginx.conf'), '-e', path.join(nginxDir, 'error.log')], { stdio: ['ignore', 'inherit', 'inherit'] });
children.push(nginx);
nginx.once('exit', (code) => {
  if (stopping) return;
  const log = fs.existsSync(path.join(nginxDir, 'error.log')) ? fs.readFileSync(path.join(nginxDir, 'error.log'), 'utf8') : '';
  fail(`nginx exited (${code}):\n${log}\nwith this config:\n${nginxConf}`);
});
const edge = `http://127.0.0.1:${edgePort}`;
for (let i = 0; ; i++) {
  // Not a route under test, so readiness polling caches nothing the checks look at.
  if (await fetch(`${edge}/__edge-ready`).then(() => true, () => false)) break;
  if (i > 100) fail('nginx did not start listening within 10 s');
  await sleep(100);
}

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
  ['Accept-Encoding', { 'accept-encoding': 'gzip, br' }],
  ['Accept-Language', { 'accept-language': 'fr-CH' }],
];

interface Answer { status: number; cache: string; date: string; body: string; headers: Headers }
async function get(address: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const r = await fetch(edge + address, { method, headers, redirect: 'manual' });
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
    // Only by the coding of the body (docs/deploying.md#compression): a copy per coding, never per client.
    const vary = first.headers.get('vary');
    check(vary === null || vary === 'Accept-Encoding', address, `Vary: ${vary} splits the cache`);
    check(!first.headers.has('set-cookie'), address, 'Set-Cookie stops nginx from caching');
    const second = await get(address);
    check(second.cache === 'HIT' && second.body === first.body, address, `repeat: expected a HIT with the same body, got ${second.cache}`);
    note(address, 0, `${first.status} ${first.cache} → ${second.cache}`);
    if (address !== stale) continue;
    const variants: string[] = [];
    let ownCopy = '';
    for (const [name, headers] of VARIANTS) {
      const byCoding = name === 'Accept-Encoding' && vary === 'Accept-Encoding';
      // A copy of its own for another coding: stored by the first request, a HIT from the second.
      if (byCoding) await get(address, headers);
      const v = await get(address, headers);
      if (!check(v.cache === 'HIT' && v.body === first.body, address, `with ${name}: expected HIT, got ${v.cache}`)) variants.push(`${name}: ${v.cache}`);
      else if (byCoding) ownCopy = ', Accept-Encoding from a copy per coding';
    }
    const head = await get(address, {}, 'HEAD');
    if (!check(head.cache === 'HIT', address, `HEAD: expected HIT, got ${head.cache}`)) variants.push(`HEAD: ${head.cache}`);
    const etag = first.headers.get('etag');
    if (etag) {
      const conditional = await get(address, { 'if-none-match': etag });
      if (!check(conditional.status === 304 && conditional.cache === 'HIT', address, `If-None-Match: expected a 304 HIT, got ${conditional.status} ${conditional.cache}`)) variants.push(`If-None-Match: ${conditional.status} ${conditional.cache}`);
    }
    note(address, 1, variants.length ? variants.join(', ') : `all HIT (${VARIANTS.length} headers, HEAD${etag ? ', 304' : ''}${ownCopy})`);
  }
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
cleanUp();
if (problems.length) {
  console.error(`\n${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  console.error('\nA MISS where a HIT belongs means a header stops the cache (Set-Cookie, Vary, private, no-store) or the key differs; see src/http/headers.ts COMMON_HEADERS.');
  process.exit(1);
}
console.log(`\ncheck:edge: ${KINDS.length * 2} addresses behave as Cache-Control says${values.quick ? ' (t = 0 only, --quick)' : ': fresh 30 s, stale-while-revalidate 60 s, then expired'}.`);

// ---------------------------------------------------------------------------------------------

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
async function until(at: number, why: string) {
  const wait = at - Date.now();
  // A line every 5 s: the longest wait is a minute.
  await step(`waiting ${(Math.max(0, wait) / 1000).toFixed(1)} s: ${why}`, () => sleep(Math.max(0, wait)));
}
