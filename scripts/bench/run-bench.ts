// Usage: npm run bench [-- --sizes 1000,10000,20000,100000] [--repeat 3] [--serve-size 100000] [--rounds 9] [--duration 4] [--connections 50] [--builds-only] [--dry-run]
//        npm run bench -- --lookups-only [--keep-build] [--serve-size 100000] [--repeat 3] [--rounds 9] [--duration 4] [--connections 50] [--dry-run]
//
// The scale benchmark. For each size it generates synthetic content (scripts/bench/generate-profiles.ts),
// then, in the same run: the floor (scripts/bench/build-floor.ts: parse each YAML, write JSON and a small
// page), the real build from cold, a fresh clone's build (no caches at all, as CI builds), a rebuild with nothing changed, and a rebuild after editing one
// profile (the validation cache and page reuse, src/build/reuse/page-reuse.ts). Then it serves one size and measures path, query and 404
// lookups with autocannon against a bare node:http server holding the same bodies in memory
// (scripts/bench/serve-bare.ts), the servers' start-up time, and their memory after start-up and after each route. Writes the tables to
// BENCHMARKS.md unless --dry-run, and says in words whether the lookups meet their targets (LOOKUP_TARGETS).
//
// --builds-only skips the lookups and rewrites only the `### Builds` part, keeping the lookups of the last run.
// --lookups-only skips the build table: it generates and builds the --serve-size profiles once (a rebuild over this
// benchmark's earlier build of that size when there is one), measures the lookups, and rewrites only the `### Lookups`
// part of BENCHMARKS.md's Scale section, keeping the build table of the last full run. --keep-build serves that earlier
// build as it is (the server's code may change between runs; the build's must not).
//
// This machine's speed drifts by 2x from minute to minute (shared cores), so floor, build and Hugo
// run in alternation --repeat times up to 20,000 profiles and at the sizes the Hugo target names
// (one pair of 100,000-profile builds went from 0.62x of Hugo to 1.04x between two runs), and the
// medians are reported; each lookup route is loaded on our server and the bare ones in turn, --rounds
// times, and each ratio is the median of the rounds' ratios.
//
// Hugo, the static-site generator people pick for speed, builds the same profiles in the same run when
// `hugo` is on PATH: ../shared/anchors/hugo/mkhugo.mjs turns each size's generated content into a Hugo
// site (pages with our markup, a JSON file per profile), and `hugo` builds it from cold in alternation
// with our cold build. The issue's target: ours at 1.0x of Hugo or less, with a lower peak, at 20,000
// and 100,000 profiles.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT, serve } from '../support/serve-build.ts';
import { numberOption, parseCli, step } from '../../src/cli.ts';
import { releasesDir } from '../../src/release/releases.ts';
import { rendererStore } from '../../src/build/astro/keep-renderer.ts';
import { validationCacheFile } from '../../src/config.ts';

const cli = parseCli({
  name: 'bench',
  usage: 'Usage: npm run bench [-- --sizes 1000,10000,20000,100000] [--repeat 3] [--serve-size 100000] [--rounds 9] [--duration 4] [--connections 50] [--builds-only] [--dry-run]\n'
    + '       npm run bench -- --lookups-only [--keep-build] [--serve-size 100000] [--repeat 3] [--rounds 9] [--duration 4] [--connections 50] [--dry-run]',
  options: {
    sizes: { type: 'string', default: '1000,10000,20000,100000', value: '<n,n,...>', help: 'how many profiles to generate and build, in turn (default 1000,10000,20000,100000; not with --lookups-only)' },
    'lookups-only': { type: 'boolean', default: false, help: 'no build table: generate and build only --serve-size profiles, measure the lookups, rewrite only the lookups part of BENCHMARKS.md' },
    'keep-build': { type: 'boolean', default: false, help: 'with --lookups-only: serve the build of that size an earlier run left, without generating or building' },
    repeat: { type: 'string', default: '3', value: '<n>', help: 'runs of floor, build and Hugo up to 20,000 profiles and at 100,000; medians reported (default 3)' },
    // Many short rounds rather than a few long ones: the ratio is the median of per-round ratios, and a
    // median of nine moves far less with this machine's neighbours than a median of three.
    rounds: { type: 'string', default: '9', value: '<n>', help: 'rounds of each lookup route, each server once per round in turn; medians reported (default 9)' },
    // The largest size by default: lookups must hold at the scale the issue is about.
    'serve-size': { type: 'string', default: '100000', value: '<n>', help: 'the size whose build serves the lookups (default 100000, else the last of --sizes)' },
    duration: { type: 'string', default: '4', value: '<s>', help: 'seconds of load per lookup run (default 4)' },
    connections: { type: 'string', default: '50', value: '<n>', help: 'concurrent connections (default 50)' },
    'builds-only': { type: 'boolean', default: false, help: 'no lookups: rewrite only the builds part of BENCHMARKS.md, keeping the lookups of the last run' },
    'dry-run': { type: 'boolean', default: false, help: 'print the tables; do not write BENCHMARKS.md' },
  },
});
const { values } = cli;
const lookupsOnly = values['lookups-only'];
if (values['keep-build'] && !lookupsOnly) cli.usageError('--keep-build goes with --lookups-only');
const buildsOnly = values['builds-only'];
if (buildsOnly && lookupsOnly) cli.usageError('--builds-only and --lookups-only exclude each other');
const serveSize = numberOption(cli, 'serve-size', values['serve-size'], { integer: true });
const sizes = lookupsOnly ? [] : values.sizes.split(',').map((n) => numberOption(cli, 'sizes', n, { integer: true }));
const repeat = numberOption(cli, 'repeat', values.repeat, { integer: true });
const rounds = numberOption(cli, 'rounds', values.rounds, { integer: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const duration = numberOption(cli, 'duration', values.duration);
const connections = numberOption(cli, 'connections', values.connections, { integer: true });
const WORK = path.join(ROOT, 'node_modules', '.cache', 'bench');
/** The issue's targets for lookups on our server, against the bare one in the same run. */
const LOOKUP_TARGETS = { ratio: 0.9, extraRssMb: 100 };
const node = process.execPath;
/** The issue's targets for cold builds against Hugo, in the same run. */
const BUILD_TARGET = { ratio: 1.0, sizes: [20_000, 100_000] };
// The Hugo site maker of ../shared/anchors (next to the project); without it or without `hugo`, no Hugo columns.
const MKHUGO = path.join(ROOT, '..', 'shared', 'anchors', 'hugo', 'mkhugo.mjs');
const hugoVersion = spawnSync('hugo', ['version'], { encoding: 'utf8' });
const hugo = hugoVersion.status === 0 && fs.existsSync(MKHUGO) ? hugoVersion.stdout.trim().split(' ')[1] ?? 'hugo' : null;
if (!hugo) console.log(`bench: no Hugo in this run (${hugoVersion.status === 0 ? `${path.relative(ROOT, MKHUGO)} is missing` : '`hugo` is not on PATH'})`);

// The build as operators run it: `npm run build`'s command from package.json, node flags included
// (read from there, so the benchmark can never measure other flags than the ones that ship).
const buildScript = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } }).scripts.build;
const [buildCommand, ...BUILD] = buildScript.split(/\s+/);
if (buildCommand !== 'node' || BUILD.at(-1) !== 'scripts/build-site.ts') throw new Error(`bench: unexpected build script: ${buildScript}`);

/** Runs one of our scripts to its end, with a line every few seconds meanwhile (a 100,000-profile build takes minutes). */
async function run(label: string, args: string[], env: Record<string, string> = {}) {
  const t0 = performance.now();
  const r = await step(label, () => new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(node, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env, BENCH_REPORT: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d; });
    child.stderr.on('data', (d: Buffer) => { stderr += d; });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  }));
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed:\n${r.stderr}${r.stdout}`.slice(0, 4000));
  const line = r.stdout.split('\n').find((l) => l.startsWith('BENCH '));
  const report = line ? JSON.parse(line.slice(6)) as { maxRssKb: number; servedMs?: number } : { maxRssKb: NaN };
  // A build's `servedMs`: from its start to the switch, the latency of an edit (what follows, deleting
  // pruned releases, runs without the lock). Without it (other scripts), the wall time.
  const served = report.servedMs === undefined ? wall / 1000 : report.servedMs / 1000;
  return { seconds: wall / 1000, served, peakMb: report.maxRssKb / 1024, stdout: r.stdout };
}

/**
 * Writes every dirty page to disk before a timed run (`sync`), off the clock: otherwise a run pays
 * for the writeback of the files the run before it wrote or deleted, tens of thousands at these
 * sizes, and most of all a build that makes its release durable (its folder fsync commits the
 * file system's journal, and with it others' pending writes).
 */
const flush = () => { spawnSync('sync'); };

/** Peak RSS of a process, read from /proc while it runs: Node gives no child's rusage. */
const peakKb = (pid: number) => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // gone between two reads
  }
};

/** One cold Hugo build of `site` (its output and caches removed first): wall time and peak RSS. */
async function runHugo(site: string) {
  for (const d of ['public', 'resources']) fs.rmSync(path.join(site, d), { recursive: true, force: true });
  const t0 = performance.now();
  let peak = 0;
  const r = await step('Hugo', () => new Promise<{ status: number | null; out: string }>((resolve, reject) => {
    const child = spawn('hugo', ['--quiet', '-s', site], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d; });
    child.stderr.on('data', (d: Buffer) => { out += d; });
    // VmHWM only grows, so sampling it often misses at most the last few milliseconds' growth.
    const sampler = setInterval(() => { peak = Math.max(peak, peakKb(child.pid!)); }, 20);
    child.once('error', (e) => { clearInterval(sampler); reject(e); });
    child.once('close', (status) => { clearInterval(sampler); resolve({ status, out }); });
  }));
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`hugo -s ${site} failed:\n${r.out}`.slice(0, 4000));
  return { seconds: wall / 1000, peakMb: peak / 1024 };
}

const rows: string[] = [];
const targetLines: string[] = [];
const builds: Record<number, string> = {};
for (const n of sizes) {
  const content = path.join(WORK, `content-${n}`);
  const dist = path.join(WORK, `dist-${n}`, 'dist');
  console.log(`\n== ${n} profiles`);
  await run(`generating ${n} profiles`, ['scripts/bench/generate-profiles.ts', String(n), content]);
  const env = { CONTENT_DIR: content, DIST_DIR: dist, SITE_URL: 'https://profiles.example.net' };
  const hugoSite = path.join(WORK, `hugo-${n}`);
  if (hugo) await run('making the Hugo site', [MKHUGO, content, hugoSite]);
  // Floor, cold build and Hugo in alternation, so all see the same machine; medians of the runs.
  const floors: Awaited<ReturnType<typeof run>>[] = [];
  const colds: Awaited<ReturnType<typeof run>>[] = [];
  const freshes: Awaited<ReturnType<typeof run>>[] = [];
  const hugos: Awaited<ReturnType<typeof runHugo>>[] = [];
  // The first build of new code: \`astro build\` compiles the site (Vite), then renders and keeps
  // what it compiled. The cold builds below render with that kept code, as every build does until
  // the code changes again (src/build/page-renderer.ts).
  // Every cold build starts from an empty output folder, removed before the clock starts, as Hugo's
  // and the floor's are: otherwise it would also delete the releases of the build before (pruning),
  // tens of thousands of files, beside its rendering.
  const emptyDist = () => { for (const d of [dist, releasesDir(dist)]) fs.rmSync(d, { recursive: true, force: true }); };
  emptyDist();
  flush();
  const newCode = await run('cold build of new code', BUILD, { ...env, PROFILES_INCREMENTAL: '0', KEPT_RENDERER: '0' });
  console.log(`cold build of new code (astro build): ${newCode.seconds.toFixed(1)} s, ${newCode.peakMb.toFixed(0)} MB`);
  for (let i = 0; i < (n <= 20_000 || BUILD_TARGET.sizes.includes(n) ? repeat : 1); i++) {
    flush();
    floors.push(await run('floor', ['scripts/bench/build-floor.ts', content, path.join(WORK, `floor-${n}`)]));
    // A cold build: every file parsed, every page rendered (no cache or earlier build read).
    emptyDist();
    flush();
    colds.push(await run('cold build', BUILD, { ...env, PROFILES_INCREMENTAL: '0' }));
    // A fresh clone, as CI builds it: no kept renderer, no validation cache, an empty output folder.
    fs.rmSync(rendererStore(ROOT), { recursive: true, force: true });
    fs.rmSync(validationCacheFile(ROOT, content), { force: true });
    emptyDist();
    flush();
    freshes.push(await run('fresh clone', BUILD, env));
    if (hugo) { flush(); hugos.push(await runHugo(hugoSite)); }
    const h = hugos.at(-1);
    const f = freshes.at(-1)!;
    console.log(`floor ${floors.at(-1)!.seconds.toFixed(1)} s, build ${colds.at(-1)!.seconds.toFixed(1)} s, ${colds.at(-1)!.peakMb.toFixed(0)} MB, fresh clone ${f.seconds.toFixed(1)} s, ${f.peakMb.toFixed(0)} MB${h ? `, Hugo ${h.seconds.toFixed(1)} s, ${h.peakMb.toFixed(0)} MB` : ''}`);
  }
  const floor = { seconds: median(floors.map((r) => r.seconds)), peakMb: median(floors.map((r) => r.peakMb)) };
  const cold = { seconds: median(colds.map((r) => r.seconds)), peakMb: Math.max(...colds.map((r) => r.peakMb)) };
  const ratio = median(floors.map((f, i) => colds[i]!.seconds / f.seconds));
  const freshClone = { seconds: median(freshes.map((r) => r.seconds)), peakMb: Math.max(...freshes.map((r) => r.peakMb)) };
  // Hugo's columns: its median time and highest peak, and the median of ours / Hugo's over the pairs.
  let hugoCells = '– | – | –';
  let freshVsHugo = '–';
  if (hugos.length) {
    const hugoSeconds = median(hugos.map((r) => r.seconds));
    const hugoPeak = Math.max(...hugos.map((r) => r.peakMb));
    const vsHugo = median(hugos.map((h, i) => colds[i]!.seconds / h.seconds));
    hugoCells = `${hugoSeconds.toFixed(1)} s | ${hugoPeak.toFixed(0)} MB | ${vsHugo.toFixed(2)}x`;
    // The target is a fresh clone's: what CI and a new contributor pay.
    const freshRatio = median(hugos.map((h, i) => freshes[i]!.seconds / h.seconds));
    freshVsHugo = `${freshRatio.toFixed(2)}x`;
    if (BUILD_TARGET.sizes.includes(n)) {
      const met = freshRatio <= BUILD_TARGET.ratio && freshClone.peakMb < hugoPeak;
      targetLines.push(`${n.toLocaleString('en')} profiles, fresh clone: ${freshRatio.toFixed(2)}x of Hugo's time (${freshRatio <= BUILD_TARGET.ratio ? 'met' : 'NOT met'}; pairs ${hugos.map((h, i) => `${(freshes[i]!.seconds / h.seconds).toFixed(2)}x`).join(', ')}), peak ${freshClone.peakMb.toFixed(0)} MB vs Hugo's ${hugoPeak.toFixed(0)} MB (${freshClone.peakMb < hugoPeak ? 'met' : 'NOT met'}): target ${met ? 'met' : 'NOT met'}`);
    }
    fs.rmSync(path.join(hugoSite, 'public'), { recursive: true, force: true });
  }
  flush();
  const again = await run('rebuild, nothing changed', BUILD, env);
  console.log(`rebuild, nothing changed: served after ${again.served.toFixed(1)} s, done in ${again.seconds.toFixed(1)} s`);
  const edited = path.join(content, 'profiles', 'user000000.yaml');
  fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace(/^displayName: .*$/m, 'displayName: "Edited for the benchmark"'));
  flush();
  const one = await run('rebuild, one profile edited', BUILD, env);
  console.log(`rebuild, one profile edited: served after ${one.served.toFixed(1)} s, done in ${one.seconds.toFixed(1)} s`);
  rows.push(`| ${n.toLocaleString('en')} | ${floor.seconds.toFixed(1)} s | ${floor.peakMb.toFixed(0)} MB | ${cold.seconds.toFixed(1)} s | ${cold.peakMb.toFixed(0)} MB | ${ratio.toFixed(1)}x | ${hugoCells} | ${freshClone.seconds.toFixed(1)} s | ${freshClone.peakMb.toFixed(0)} MB | ${freshVsHugo} | ${newCode.seconds.toFixed(1)} s, ${newCode.peakMb.toFixed(0)} MB | ${again.served.toFixed(1)} s (${again.seconds.toFixed(1)} s) | ${one.served.toFixed(1)} s (${one.seconds.toFixed(1)} s) | ${one.peakMb.toFixed(0)} MB |`);
  builds[n] = dist;
  fs.rmSync(path.join(WORK, `floor-${n}`), { recursive: true, force: true });
}

const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const machine = `${new Date().toISOString().slice(0, 10)}, commit ${commit}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const SECTION = '## Scale (npm run bench)';
const LOOKUPS = '### Lookups';
const buildPart = `### Builds

${machine}.
Build times are wall time of the whole command (\`npm run build\`'s node flags), each timed run (ours, Hugo's, the floor's) started after \`sync\`, so that none pays for the writeback of the one before; peak memory is the maximum RSS of the build process (Astro and the render threads run in it). Cold: \`PROFILES_INCREMENTAL=0\` (every file parsed, every page rendered) into an empty output folder (as Hugo's and the floor's, emptied before the clock starts), with the code the first build of this code kept (src/build/astro/page-renderer.ts); fresh clone: no kept renderer, no validation cache, an empty output folder, as CI builds (\`astro build\` compiles, then its kept code renders the profile pages in threads); "new code": the first cold build after a change of code (\`KEPT_RENDERER=0\`, the validation cache ignored); rebuilds: the validation cache and unchanged pages reused (a layered release with the kept renderer when few changed), timed until the new release is served (the build's \`servedMs\`: the latency of an edit), the whole command in brackets. ${hugo ? `Hugo ${hugo}: \`hugo --quiet -s SITE\` on the same profiles (../shared/anchors/hugo/mkhugo.mjs, not timed), from cold, in alternation with our cold build; its peak is its RSS high-water mark (VmHWM).` : 'No Hugo in this run (`hugo` not on PATH, or ../shared/anchors missing).'}

| profiles | floor | floor peak | build | build peak | build / floor (median of pairs) | Hugo | Hugo peak | build / Hugo (median of pairs) | fresh clone | its peak | fresh clone / Hugo (median of pairs) | cold build of new code, peak | rebuild, no change: served (done) | rebuild, one edited: served (done) | its peak |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${targetLines.length ? `\nTarget (fresh clones at ${BUILD_TARGET.ratio}x of Hugo or less, peak below Hugo's): ${targetLines.join('; ')}.\n` : ''}`;

if (buildsOnly) {
  // The builds part only: the lookups part of the last run stays as it was.
  console.log(`\n${buildPart}`);
  if (!values['dry-run']) {
    const file = path.join(ROOT, 'BENCHMARKS.md');
    const old = fs.readFileSync(file, 'utf8');
    const start = old.indexOf(SECTION);
    const lookupsAt = start < 0 ? -1 : old.indexOf(LOOKUPS, start);
    if (lookupsAt < 0) throw new Error(`bench: --builds-only needs a ${LOOKUPS} part in BENCHMARKS.md's ${SECTION}`);
    fs.writeFileSync(file, `${old.slice(0, start)}${SECTION}\n\n${buildPart}\n${old.slice(lookupsAt)}`);
    console.log('Wrote BENCHMARKS.md');
  }
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Serving: our server and the bare baseline, one after the other, on the same build.

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

/**
 * With two cores or more and `taskset`, the lookups run with each server on core 0 and this process
 * (autocannon) on core 1, the same for every server: unpinned, the load generator, the server and
 * the server's GC threads share both cores, so a server that collects more also slows the load sent
 * to it, and the scheduler's moves add their own noise.
 */
const pinned = os.availableParallelism() >= 2 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;
const pin = (pid: number, core: number) => {
  if (pinned && spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' }).status !== 0) throw new Error(`bench: taskset could not pin ${pid} to core ${core}`);
};

/** CPU time a process has used, all its threads (GC and the thread pool included), in seconds. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const cpuSeconds = (pid: number) => {
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
};

/**
 * One run of autocannon against a server, with the server's CPU time per answer and how busy each
 * side was. Requests per second measure the server only while it is the bottleneck; when the load
 * generator is (it was: a whole core busy, the servers 70-80% of theirs), they measure the load
 * generator's cost of reading each answer as much as the server. The server's CPU time per
 * answer measures the server either way: its throughput on one core is its inverse.
 */
async function load(server: { base: string; child: { pid?: number } }, pathFor: () => string, seconds = duration, headers: Record<string, string> = {}) {
  const cpu0 = cpuSeconds(server.child.pid!);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await autocannon({
    url: server.base, connections, duration: seconds,
    requests: [{ method: 'GET', headers, setupRequest: (req) => ({ ...req, path: pathFor() }) }],
  });
  const wall = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(own0);
  const serverCpu = cpuSeconds(server.child.pid!) - cpu0;
  return {
    rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx,
    cpuUs: (serverCpu * 1e6) / result.requests.total, serverBusy: serverCpu / wall, clientBusy: (own.user + own.system) / 1e6 / wall,
  };
}

if (lookupsOnly) {
  const content = path.join(WORK, `content-${serveSize}`);
  const dist = path.join(WORK, `dist-${serveSize}`, 'dist');
  console.log(`\n== lookups only, ${serveSize} profiles`);
  if (values['keep-build']) {
    if (!fs.existsSync(path.join(dist, 'client'))) cli.usageError(`--keep-build: there is no earlier build of ${serveSize} profiles in ${path.relative(ROOT, dist)}`);
  } else {
    await run(`generating ${serveSize} profiles`, ['scripts/bench/generate-profiles.ts', String(serveSize), content]);
    // Generated anew the same (seed 1), so over an earlier build this is a rebuild: cached validation, reused pages.
    const built = await run('building', BUILD, { CONTENT_DIR: content, DIST_DIR: dist, SITE_URL: 'https://profiles.example.net' });
    console.log(`built in ${built.seconds.toFixed(1)} s, ${built.peakMb.toFixed(0)} MB`);
  }
  builds[serveSize] = dist;
}
const serveDist = builds[serveSize] ?? builds[sizes.at(-1)!]!;
const servedCount = Number(Object.entries(builds).find(([, d]) => d === serveDist)![0]);
// Every profile of the served build, from its content: the served release may be layered (after the
// one-profile rebuild it holds that profile's files only), so its folder does not list them all.
const names = fs.readdirSync(path.join(WORK, `content-${servedCount}`, 'profiles')).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length));
const pick = () => names[Math.floor(Math.random() * names.length)]!;
let unknown = 0;
/** Each route: its name, its addresses, the request's headers (none but the path lookup in brotli). */
const routes: [string, () => string, Record<string, string>?][] = [
  ['path lookup', () => `/api/v1/users/${pick()}`],
  // A browser's Accept-Encoding: the file's brotli sibling (src/build/files/compress.ts), on both servers.
  ['path lookup, brotli', () => `/api/v1/users/${pick()}`, { 'accept-encoding': 'gzip, deflate, br, zstd' }],
  ['query lookup', () => `/api/v1/users?username=${pick().toUpperCase()}`],
  ['404 (distinct names)', () => `/api/v1/users/nobody-${unknown++}`],
];
const serveRows: string[] = [];
const ratios: Record<string, number> = {};
const cpuRatios: Record<string, number> = {};
const headerCost: Record<string, number> = {};
// Against the bare server sending the same answers, headers included: what our handler costs over holding every body.
const ratiosH: Record<string, number> = {};
const cpuRatiosH: Record<string, number> = {};
const cpuRows: string[] = [];
/** How busy autocannon (this process) and the servers were during the measured runs, as a share of a core. */
const busy = { client: [] as number[], server: [] as number[] };
let unknownBefore404 = 0;
pin(process.pid, 1);
const ours = await step(`starting our server on the ${servedCount}-profile build`, () => serve({ env: { DIST_DIR: serveDist } }));
const bare = await step('starting the bare server', () => serve({ script: 'scripts/bench/serve-bare.ts', args: [serveDist] }));
// The same bare server sending the contract's headers: what is left between it and ours is our code.
const bareH = await step('starting the bare server with the contract\'s headers', () => serve({ script: 'scripts/bench/serve-bare.ts', args: [serveDist, '--contract-headers'] }));
for (const server of [ours, bare, bareH]) pin(server.child.pid!, 0);
// RSS after start-up and after each route's runs: memory under load must stay flat, not grow with
// requests (the 404 route alone sends hundreds of thousands of distinct names).
const rss = { ours: [rssMb(ours.child.pid!)], bare: [rssMb(bare.child.pid!)] };
// Every name once in each form on each server before anything is measured: the bare server read
// every body and made its ETags before it listened (its start-up below), ours reads each body on its
// first request and makes its ETags on the first of each form. Without this the first runs of ours
// measured reads from disk and hashing that the bare server had done off the clock.
await step(`every name once in each form on each server (${(2 * names.length).toLocaleString('en')} requests each)`, async () => {
  for (const server of [ours, bare, bareH]) {
    let next = 0;
    const address = (i: number) => (i < names.length ? `/api/v1/users/${names[i]}` : `/api/v1/users?username=${names[i - names.length]!.toUpperCase()}`);
    await autocannon({ url: server.base, connections, amount: 2 * names.length, requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: address(next++) }) }] });
  }
});
rss.ours.push(rssMb(ours.child.pid!));
rss.bare.push(rssMb(bare.child.pid!));
for (const [name, pathFor, headers] of routes) {
  const o: Awaited<ReturnType<typeof load>>[] = [];
  const b: Awaited<ReturnType<typeof load>>[] = [];
  const h: Awaited<ReturnType<typeof load>>[] = [];
  unknownBefore404 = unknown;
  // A warm-up first (JIT, our file cache), then each server in turn, --rounds times: all see the same machine.
  await step(`${name}: warming up both servers (2 s each)`, async () => {
    await load(ours, pathFor, 2, headers);
    await load(bare, pathFor, 2, headers);
    await load(bareH, pathFor, 2, headers);
  });
  for (let i = 0; i < rounds; i++) {
    o.push(await step(`${name}: ours, run ${i + 1} of ${rounds} (${duration} s)`, () => load(ours, pathFor, duration, headers)));
    b.push(await step(`${name}: bare, run ${i + 1} of ${rounds} (${duration} s)`, () => load(bare, pathFor, duration, headers)));
    h.push(await step(`${name}: bare with the contract's headers, run ${i + 1} of ${rounds} (${duration} s)`, () => load(bareH, pathFor, duration, headers)));
  }
  const medianRun = (rs: typeof o) => rs.find((r) => r.rps === median(rs.map((x) => x.rps)))!;
  const [mo, mb] = [medianRun(o), medianRun(b)];
  // Each ratio is the median of the rounds' own ratios: the servers of one round saw the same machine.
  const perRound = (xs: typeof o, ys: typeof o, of: (r: (typeof o)[number]) => number) => median(xs.map((x, i) => of(x) / of(ys[i]!)));
  const ratio = perRound(o, b, (r) => r.rps);
  const ratioH = perRound(o, h, (r) => r.rps);
  const mh = medianRun(h);
  // A server that died (a crash, or the OOM killer on a shared machine) says so, with what it printed.
  for (const [who, server] of [['our', ours], ['the bare', bare], ['the bare (contract headers)', bareH]] as const) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${who} server exited (${server.child.exitCode ?? server.child.signalCode}) during ${name}:\n${server.output().slice(-2000)}`);
    }
  }
  ratios[name] = ratio;
  ratiosH[name] = ratioH;
  // By server CPU per answer: the bare server's over ours, so that above 1 is ours cheaper, as with req/s.
  const cpuRatio = perRound(b, o, (r) => r.cpuUs);
  const cpuRatioH = perRound(h, o, (r) => r.cpuUs);
  // What the contract's headers alone cost a bare server: the most any server sending them can reach of the bare one.
  const cpuRatioHB = perRound(b, h, (r) => r.cpuUs);
  headerCost[name] = cpuRatioHB;
  cpuRatios[name] = cpuRatio;
  cpuRatiosH[name] = cpuRatioH;
  for (const r of [...o, ...b, ...h]) { busy.client.push(r.clientBusy); busy.server.push(r.serverBusy); }
  const cpu = (rs: typeof o) => median(rs.map((r) => r.cpuUs)).toFixed(1);
  console.log(`${name}: ours ${Math.round(mo.rps)} req/s, bare ${Math.round(mb.rps)} req/s, ratio ${ratio.toFixed(2)}; bare with the contract's headers ${Math.round(mh.rps)} req/s, ratio ${ratioH.toFixed(2)}`);
  console.log(`${name}: server CPU per answer ours ${cpu(o)} µs, bare ${cpu(b)} µs, bare with the contract's headers ${cpu(h)} µs; ratios ${cpuRatio.toFixed(2)}, ${cpuRatioH.toFixed(2)}`);
  cpuRows.push(`| ${name} | ${cpu(o)} µs | ${cpu(b)} µs | ${cpuRatio.toFixed(2)}x | ${cpu(h)} µs | ${cpuRatioH.toFixed(2)}x | ${cpuRatioHB.toFixed(2)}x |`);
  rss.ours.push(rssMb(ours.child.pid!));
  rss.bare.push(rssMb(bare.child.pid!));
  serveRows.push(`| ${name} | ${Math.round(mo.rps).toLocaleString('en')} | ${mo.p50} / ${mo.p99} ms | ${Math.round(mb.rps).toLocaleString('en')} | ${mb.p50} / ${mb.p99} ms | ${ratio.toFixed(2)}x | ${Math.round(mh.rps).toLocaleString('en')} | ${ratioH.toFixed(2)}x | ${o.reduce((a, r) => a + r.errors, 0)} / ${mo.non2xx} |`);
}
const memory = (['ours', 'bare'] as const).map((k) => `${k}: ${rss[k].map((mb) => mb.toFixed(0)).join(' → ')} MB`);
ours.child.kill();
bare.child.kill();
bareH.child.kill();

// The issue's targets for our server, judged on this run's figures (both servers on the same machine, in turn).
const peak = { ours: Math.max(...rss.ours), bare: Math.max(...rss.bare) };
const judged = (r: Record<string, number>) => routes.map(([name]) => `${name} ${r[name]!.toFixed(2)}x (${r[name]! >= LOOKUP_TARGETS.ratio ? 'met' : 'NOT met'})`).join(', ');
const speedVerdict = judged(ratios);
const cpuVerdict = judged(cpuRatios);
const memoryMet = peak.ours <= peak.bare + LOOKUP_TARGETS.extraRssMb;
const names404 = unknown - unknownBefore404;
const verdict = `Targets: each route at ${LOOKUP_TARGETS.ratio}x of bare or more, and our RSS at most bare's + ${LOOKUP_TARGETS.extraRssMb} MB. `
  + `Ours / bare by requests per second: ${speedVerdict}; by server CPU per answer: ${cpuVerdict}. `
  + `The contract's headers alone take the bare server to ${routes.map(([name]) => `${headerCost[name]!.toFixed(2)}x`).join(', ')} of itself by CPU per answer; `
  + `against the bare server sending them (the same answers, headers and all), ours by requests per second: ${judged(ratiosH)}; by CPU per answer: ${judged(cpuRatiosH)}. RSS at its highest: ours ${peak.ours.toFixed(0)} MB vs bare ${peak.bare.toFixed(0)} MB, `
  + `${memoryMet ? 'within' : 'OVER'} bare + ${LOOKUP_TARGETS.extraRssMb} MB`
  + `${servedCount === 100_000 ? '' : ` (the memory target is set at 100,000 profiles; this build has ${servedCount.toLocaleString('en')})`}. `
  + `The 404 route sent ${names404.toLocaleString('en')} distinct unknown names: ours ${(rss.ours.at(-1)! - rss.ours.at(-2)!).toFixed(0)} MB over them.`;

const lookupPart = `${LOOKUPS}

${machine}, load average ${os.loadavg()[0]!.toFixed(1)} before the lookups${lookupsOnly ? ' (`npm run bench -- --lookups-only`)' : ''}.
Lookups on the ${servedCount.toLocaleString('en')}-profile build, ${connections} connections, ${duration} s per run, ${rounds} rounds of each server in turn (medians, and ratios as the median of the rounds' ratios; autocannon in the bench process, each server in its own${pinned ? ', the servers on core 0 and autocannon on core 1' : ', not pinned to cores'}), after every name was asked once in each form of each server. The bare server holds every body in memory and sends the contract's bodies (the query form's \`data\` in a fresh envelope, a 404 naming the user). "Bare + contract headers" is the bare server sending the headers every answer of ours must carry (CORS, Cache-Control, the policy's others, an ETag): the gap between it and ours is our code's, the rest is the contract's bytes on the wire:

| route | ours req/s | ours p50 / p99 | bare req/s | bare p50 / p99 | ours / bare | bare + contract headers req/s | ours / that | errors / non-2xx |
|---|---|---|---|---|---|---|---|---|
${serveRows.join('\n')}

The same runs by the servers' CPU time per answer (all their threads, from /proc/<pid>/stat), and the bare server's over ours: a server's throughput on its core is the inverse of its CPU per answer, whoever the bottleneck. The load generator was ${Math.round(median(busy.client) * 100)}% busy and the servers ${Math.round(median(busy.server) * 100)}% (medians)${median(busy.client) > 0.9 && median(busy.server) < 0.9 ? ': autocannon, not the servers, set the requests per second, so the ratios above measure its cost of reading each answer as much as the servers\'' : ''}.

| route | ours CPU per answer | bare | ours / bare | bare + contract headers | ours / that | that / bare: the headers' own cost |
|---|---|---|---|---|---|---|
${cpuRows.join('\n')}

Start-up (until listening): ours ${(ours.startMs / 1000).toFixed(1)} s, bare ${(bare.startMs / 1000).toFixed(1)} s (it reads every body). Server memory (RSS) after start-up, after every name once in each form, then after each route above in turn: ${memory.join('; ')}.

${verdict}
`;
console.log(`\n${lookupsOnly ? lookupPart : `${buildPart}\n${lookupPart}`}`);
if (!values['dry-run']) {
  const file = path.join(ROOT, 'BENCHMARKS.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n\nFigures from scripts you can rerun. Absolute times drift on shared machines: compare the ratios measured in the same run.\n\n';
  const start = old.indexOf(SECTION);
  const end = start < 0 ? -1 : old.indexOf('\n## ', start + 3);
  const current = start < 0 ? '' : old.slice(start, end < 0 ? undefined : end + 1);
  // --lookups-only keeps the build part of the last full run.
  const lookupsAt = current.indexOf(LOOKUPS);
  const kept = lookupsAt < 0 ? current.trimEnd() : current.slice(0, lookupsAt).trimEnd();
  const section = lookupsOnly ? `${kept || SECTION}\n\n${lookupPart}` : `${SECTION}\n\n${buildPart}\n${lookupPart}`;
  const next = start < 0 ? `${old.trimEnd()}\n\n${section}` : `${old.slice(0, start)}${section}${end < 0 ? '' : `\n${old.slice(end + 1)}`}`;
  fs.writeFileSync(file, next);
  console.log('Wrote BENCHMARKS.md');
}
