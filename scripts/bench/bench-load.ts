// Usage: npm run bench:load [-- --duration 30] [--connections 100] [--content <dir>] [--max-rss-growth-mb 50] [--dry-run]
//
// Load on the real server: builds a content folder (default: the test fixture) into a temp dist
// inside node_modules/.cache, starts `src/server/main.ts` as a child on 127.0.0.1 (a free port),
// and runs autocannon against five routes in turn: a path lookup, a query lookup, a stream of
// distinct unknown names (each request a new name, so any per-name memory would show), the
// creators list and an avatar. Reports requests/s, p50/p99 latency, errors and status classes,
// and the server's RSS (/proc/<pid>/status) and heap (after a GC) before and after each route.
// Writes the table to BENCHMARKS.md under `## Load (npm run bench:load)` unless --dry-run.
//
// Exits 1 on any 5xx, connection error or timeout, an answer of the wrong class (a 4xx on a
// lookup that exists), or RSS growing more than --max-rss-growth-mb during the unknown-name
// stream: a memory check, not a timing assertion. Timings are reported, never judged.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { loadContent } from '../../src/content/load.ts';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT, buildSiteAsync, serve } from '../support/serve-build.ts';
import { numberOption, parseCli, step } from '../../src/cli.ts';

const BENCHMARKS_FILE = path.join(ROOT, 'BENCHMARKS.md');
const HEADING = '## Load (npm run bench:load)';

const cli = parseCli({
  name: 'bench:load',
  usage: 'Usage: npm run bench:load [-- --duration 30] [--connections 100] [--content <dir>] [--max-rss-growth-mb 50] [--dry-run]',
  options: {
    duration: { type: 'string', default: '30', value: '<s>', help: 'seconds of load per route (default 30)' },
    connections: { type: 'string', default: '100', value: '<n>', help: 'concurrent connections (default 100)' },
    content: { type: 'string', default: path.join(ROOT, 'test', 'fixtures', 'content'), value: '<dir>', help: 'the content folder to build and serve (default: the test fixture)' },
    'max-rss-growth-mb': { type: 'string', default: '50', value: '<mb>', help: 'fail when the server\'s RSS grows more over the unknown names (default 50)' },
    'dry-run': { type: 'boolean', default: false, help: 'print the table; do not write BENCHMARKS.md' },
  },
});
const { values } = cli;
const duration = numberOption(cli, 'duration', values.duration);
const connections = numberOption(cli, 'connections', values.connections, { integer: true });
const maxRssGrowth = numberOption(cli, 'max-rss-growth-mb', values['max-rss-growth-mb']) * 2 ** 20;

// ---------------------------------------------------------------------------------------------
// Build and start the server.

const work = path.join(ROOT, 'node_modules', '.cache', 'bench-load', String(process.pid));
const dist = path.join(work, 'dist');
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const build = await step(`Building ${path.relative(ROOT, values.content) || values.content}`, () => buildSiteAsync({ contentDir: values.content, distDir: dist, siteUrl: 'https://profiles.example.net' }));
if (build.status !== 0) {
  console.error(`bench:load: the build failed:\n${build.stderr}${build.stdout}`);
  process.exit(1);
}
const { content } = loadContent(values.content);
const index = { users: [...content.profiles.keys()].map((username) => ({ username })), avatars: [...content.profiles].filter(([, p]) => p.avatar).map(([name, p]) => [name, p.avatar!] as const) };

// The child answers `memory` over IPC with process.memoryUsage() after a full GC: heap figures
// from inside without touching the server's code.
const MEMORY_PROBE = "process.on('message', (m) => { if (m === 'memory') { globalThis.gc(); process.send({ memory: process.memoryUsage() }); } });";
const running = await serve({
  nodeArgs: ['--expose-gc', '--import', `data:text/javascript,${encodeURIComponent(MEMORY_PROBE)}`], env: { DIST_DIR: dist }, ipc: true,
}).catch((e: Error) => {
  console.error(`bench:load: ${e.message}`);
  process.exit(1);
});
const { child: server, base } = running;

let stopping = false;
// A crash mid-run is a finding, not a hang: report it with the server's own output.
server.once('exit', (code, signal) => {
  if (stopping) return;
  console.error(`\nbench:load: the server exited (${code ?? signal}) during the run:\n${running.output()}`);
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(1);
});

function stop() {
  stopping = true;
  server.kill('SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
}

interface Memory { rss: number; heapUsed: number; heapTotal: number; external: number }
async function memory(): Promise<Memory> {
  const heap = await new Promise<NodeJS.MemoryUsage>((resolve) => {
    server.once('message', (m) => resolve((m as { memory: NodeJS.MemoryUsage }).memory));
    server.send('memory');
  });
  // VmRSS, read after the probe's GC: what the operating system sees the server holding.
  const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1];
  return { rss: Number(kb) * 1024, heapUsed: heap.heapUsed, heapTotal: heap.heapTotal, external: heap.external };
}

// ---------------------------------------------------------------------------------------------
// The routes.

const lookupName = index.users[0]!.username;
const avatarName = index.avatars[0]?.[0] ?? lookupName;
let unknownSent = 0;

interface Route {
  name: string;
  path: string;
  /** The status class every answer must have. */
  expect: '2xx' | '4xx';
  requests?: autocannon.Request[];
}
const ROUTES: Route[] = [
  { name: 'path lookup', path: `/api/v1/users/${lookupName}`, expect: '2xx' },
  { name: 'query lookup', path: `/api/v1/users?username=@${lookupName.toUpperCase()}`, expect: '2xx' },
  {
    name: 'unknown names (each distinct)', path: '/api/v1/users/nobody', expect: '4xx',
    // A new valid-but-unknown name for every request: `zz-<counter>` in base 36, all distinct.
    requests: [{ setupRequest: (req) => ({ ...req, path: `/api/v1/users/zz-${(unknownSent++).toString(36)}` }) }],
  },
  { name: 'creators list', path: '/service-api/v1/creators', expect: '2xx' },
  { name: 'avatar', path: `/api/avatar?u=${avatarName}`, expect: '2xx' },
];

interface Row {
  route: Route;
  result: autocannon.Result;
  before: Memory;
  after: Memory;
  problems: string[];
}

// Other work on the machine skews the figures: the load average before the run goes in the report.
const loadBefore = os.loadavg()[0]!.toFixed(2);
const rows: Row[] = [];
try {
  // A short warm-up, so the first route is not measured against a cold JIT and empty caches.
  await step('Warming up (2 s)', () => autocannon({ url: base + ROUTES[0]!.path, connections: 10, duration: 2 }));
  for (const route of ROUTES) {
    const before = await memory();
    const result = await step(`${route.name}: ${connections} connections for ${duration} s`, () => autocannon({
      url: base + route.path, connections, duration, timeout: 10,
      ...(route.requests ? { requests: route.requests } : {}),
    }));
    const after = await memory();
    const problems: string[] = [];
    if (result['5xx'] > 0) problems.push(`${result['5xx']} answers were 5xx`);
    if (result.errors > 0 || result.timeouts > 0) problems.push(`${result.errors} connection errors (${result.timeouts} timeouts)`);
    const wrong = (['1xx', '2xx', '3xx', '4xx'] as const).filter((c) => c !== route.expect).reduce((n, c) => n + result[c], 0);
    if (wrong > 0) problems.push(`${wrong} answers were not ${route.expect}`);
    if (route.requests && after.rss - before.rss > maxRssGrowth) {
      problems.push(`RSS grew ${mb(after.rss - before.rss)} over ${unknownSent} distinct names (bound ${mb(maxRssGrowth)})`);
    }
    console.log(`  ${Math.round(result.requests.average)} req/s${problems.length ? `  FAILED: ${problems.join('; ')}` : ''}`);
    rows.push({ route, result, before, after, problems });
  }
} finally {
  stop();
}

// ---------------------------------------------------------------------------------------------
// The report.

function mb(bytes: number) {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}
const cpuModel = /model name\s*:\s*(.+)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
const dirty = git('status', '--porcelain', '--untracked-files=no') ? ' (with uncommitted changes)' : '';

const table = [
  '| route | req/s | p50 ms | p99 ms | answers | 2xx | 4xx | 5xx | errors | RSS before → after | heap used before → after | after: heap total, external |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|',
  ...rows.map(({ route, result: r, before, after }) => `| ${route.name} \`${route.requests ? '/api/v1/users/zz-<n>' : route.path}\` | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p99} | ${r.requests.total} | ${r['2xx']} | ${r['4xx']} | ${r['5xx']} | ${r.errors} | ${mb(before.rss)} → ${mb(after.rss)} | ${mb(before.heapUsed)} → ${mb(after.heapUsed)} | ${mb(after.heapTotal)}, ${mb(after.external)} |`),
].join('\n');

const section = [
  HEADING,
  '',
  `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit \`${commit}\`${dirty}, Node ${process.version}. Machine: ${os.availableParallelism()} CPUs (${cpuModel}), ${mb(os.totalmem())} memory; autocannon and the server share it; load average ${loadBefore} before the run.`,
  `Content: ${index.users.length} profiles (${path.relative(ROOT, values.content) || values.content}). ${connections} connections, ${duration} s per route, one route at a time.`,
  `Memory: RSS from /proc/<pid>/status and V8's heap (used; total committed; external, i.e. Buffers), all after a full GC, before and after each route. The unknown-name route sent ${unknownSent} distinct names; only its RSS growth is judged.`,
  '',
  table,
  '',
].join('\n');

console.log(`\n${table}\n`);
if (!values['dry-run']) {
  const existing = fs.existsSync(BENCHMARKS_FILE) ? fs.readFileSync(BENCHMARKS_FILE, 'utf8') : '# Benchmarks\n\nFigures measured on one machine: compare runs on the same machine only.\n\n';
  const start = existing.indexOf(HEADING);
  const next = start < 0 ? -1 : existing.indexOf('\n## ', start + HEADING.length);
  const updated = start < 0 ? `${existing.trimEnd()}\n\n${section}` : existing.slice(0, start) + section + (next < 0 ? '' : existing.slice(next + 1));
  fs.writeFileSync(BENCHMARKS_FILE, updated);
  console.log(`Written to ${path.relative(ROOT, BENCHMARKS_FILE)}.`);
}

const failed = rows.filter((r) => r.problems.length);
if (failed.length) {
  for (const r of failed) console.error(`${r.route.name}: ${r.problems.join('; ')}`);
  console.error(`\nbench:load failed on ${failed.length} of ${rows.length} routes. A 5xx or an error is a bug to find in the server's log; RSS growth on unknown names means something keeps per-name state.`);
  process.exit(1);
}
console.log(`bench:load: ${rows.length} routes, no 5xx, no errors, RSS within ${mb(maxRssGrowth)} on ${unknownSent} distinct unknown names.`);
