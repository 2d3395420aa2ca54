// Usage: npm run bench [-- --sizes 1000,10000,100000] [--serve-size 10000] [--duration 10] [--connections 50] [--dry-run]
//
// The scale benchmark. For each size it generates synthetic content (scripts/generate-profiles.ts),
// then, in the same run: the floor (scripts/build-floor.ts: parse each YAML, write JSON and a small
// page), the real build from cold, a rebuild with nothing changed, and a rebuild after editing one
// profile (Astro's incremental build). Then it serves one size and measures path, query and 404
// lookups with autocannon against a bare node:http server holding the same bodies in memory
// (scripts/serve-bare.ts), and the server's memory before and after. Writes the tables to
// BENCHMARKS.md unless --dry-run. Reports figures; judges nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,100000' },
    'serve-size': { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'dry-run': { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').map(Number);
const serveSize = Number(values['serve-size']);
const duration = Number(values.duration);
const connections = Number(values.connections);
if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !(duration > 0) || !(connections > 0)) {
  console.error('Usage: npm run bench [-- --sizes 1000,10000,100000] [--serve-size 10000] [--duration 10] [--connections 50] [--dry-run]');
  process.exit(2);
}
const WORK = path.join(ROOT, 'node_modules', '.cache', 'bench');
const node = process.execPath;

function run(args: string[], env: Record<string, string> = {}) {
  const t0 = performance.now();
  const r = spawnSync(node, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, ...env, BENCH_REPORT: '1' } });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed:\n${r.stderr}${r.stdout}`.slice(0, 4000));
  const line = r.stdout.split('\n').find((l) => l.startsWith('BENCH '));
  const report = line ? JSON.parse(line.slice(6)) as { maxRssKb: number } : { maxRssKb: NaN };
  return { seconds: wall / 1000, peakMb: report.maxRssKb / 1024, stdout: r.stdout };
}

const rows: string[] = [];
const builds: Record<number, string> = {};
for (const n of sizes) {
  const content = path.join(WORK, `content-${n}`);
  const dist = path.join(WORK, `dist-${n}`, 'dist');
  console.log(`\n== ${n} profiles`);
  run(['scripts/generate-profiles.ts', String(n), content]);
  const floor = run(['scripts/build-floor.ts', content, path.join(WORK, `floor-${n}`)]);
  console.log(`floor: ${floor.seconds.toFixed(1)} s, ${floor.peakMb.toFixed(0)} MB`);
  // A cold build: no incremental cache from an earlier run.
  fs.rmSync(path.join(ROOT, 'node_modules', '.astro'), { recursive: true, force: true });
  const env = { CONTENT_DIR: content, DIST_DIR: dist, SITE_URL: 'https://profiles.example.net' };
  const cold = run(['scripts/build-site.ts'], env);
  console.log(`build: ${cold.seconds.toFixed(1)} s, ${cold.peakMb.toFixed(0)} MB`);
  const again = run(['scripts/build-site.ts'], env);
  console.log(`rebuild, nothing changed: ${again.seconds.toFixed(1)} s`);
  const edited = path.join(content, 'profiles', 'user000000.yaml');
  fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace(/^displayName: .*$/m, 'displayName: "Edited for the benchmark"'));
  const one = run(['scripts/build-site.ts'], env);
  console.log(`rebuild, one profile edited: ${one.seconds.toFixed(1)} s`);
  rows.push(`| ${n.toLocaleString('en')} | ${floor.seconds.toFixed(1)} s | ${floor.peakMb.toFixed(0)} MB | ${cold.seconds.toFixed(1)} s | ${cold.peakMb.toFixed(0)} MB | ${(cold.seconds / floor.seconds).toFixed(1)}x | ${again.seconds.toFixed(1)} s | ${one.seconds.toFixed(1)} s | ${one.peakMb.toFixed(0)} MB |`);
  builds[n] = dist;
  fs.rmSync(path.join(WORK, `floor-${n}`), { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// Serving: our server and the bare baseline, one after the other, on the same build.

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function start(args: string[]): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(node, args, { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1', PORT: '0' } });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { child, base };
}

async function load(base: string, pathFor: () => string) {
  const result = await autocannon({
    url: base, connections, duration,
    requests: [{ method: 'GET', setupRequest: (req: Record<string, unknown>) => ({ ...req, path: pathFor() }) }],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}

const serveDist = builds[serveSize] ?? builds[sizes.at(-1)!]!;
const servedCount = Number(Object.entries(builds).find(([, d]) => d === serveDist)![0]);
const names = fs.readdirSync(path.join(serveDist, 'client', 'api', 'v1', 'users'));
const pick = () => names[Math.floor(Math.random() * names.length)]!;
let unknown = 0;
const routes: [string, () => string][] = [
  ['path lookup', () => `/api/v1/users/${pick()}`],
  ['query lookup', () => `/api/v1/users?username=${pick().toUpperCase()}`],
  ['404 (distinct names)', () => `/api/v1/users/nobody-${unknown++}`],
];
const serveRows: string[] = [];
const results: Record<string, Record<string, Awaited<ReturnType<typeof load>>>> = { ours: {}, bare: {} };
const memory: string[] = [];
process.env.DIST_DIR = serveDist;
for (const [which, args] of [['ours', ['src/server/main.ts']], ['bare', ['scripts/serve-bare.ts', serveDist]]] as const) {
  const { child, base } = await start([...args]);
  const before = rssMb(child.pid!);
  for (const [name, pathFor] of routes) {
    results[which]![name] = await load(base, pathFor);
    console.log(`${which} ${name}: ${Math.round(results[which]![name]!.rps)} req/s, p99 ${results[which]![name]!.p99} ms`);
  }
  memory.push(`${which}: ${before.toFixed(0)} MB before, ${rssMb(child.pid!).toFixed(0)} MB after`);
  child.kill();
}
for (const [name] of routes) {
  const o = results.ours![name]!;
  const b = results.bare![name]!;
  serveRows.push(`| ${name} | ${Math.round(o.rps).toLocaleString('en')} | ${o.p50} / ${o.p99} ms | ${Math.round(b.rps).toLocaleString('en')} | ${b.p50} / ${b.p99} ms | ${(o.rps / b.rps).toFixed(2)}x | ${o.errors} / ${o.non2xx} |`);
}

const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const section = `## Scale (npm run bench)

${new Date().toISOString().slice(0, 10)}, commit ${commit}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}.
Build times are wall time of the whole command; peak memory is the build process's maximum RSS (Astro runs in it).

| profiles | floor | floor peak | build | build peak | build / floor | rebuild, no change | rebuild, one edited | its peak |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Lookups on the ${servedCount.toLocaleString('en')}-profile build, ${connections} connections, ${duration} s each (autocannon in the same process as the bench, the server in another):

| route | ours req/s | ours p50 / p99 | bare req/s | bare p50 / p99 | ours / bare | errors / non-2xx |
|---|---|---|---|---|---|---|
${serveRows.join('\n')}

Server memory (RSS): ${memory.join('; ')}.
`;
console.log(`\n${section}`);
if (!values['dry-run']) {
  const file = path.join(ROOT, 'BENCHMARKS.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n\nFigures from scripts you can rerun. Absolute times drift on shared machines: compare the ratios measured in the same run.\n\n';
  const start = old.indexOf('## Scale (npm run bench)');
  const end = start < 0 ? -1 : old.indexOf('\n## ', start + 3);
  const next = start < 0 ? `${old.trimEnd()}\n\n${section}` : `${old.slice(0, start)}${section}${end < 0 ? '' : old.slice(end + 1)}`;
  fs.writeFileSync(file, next);
  console.log('Wrote BENCHMARKS.md');
}
