// Usage: npm run bench [-- --sizes 1000,10000,20000,100000] [--repeat 3] [--serve-size 100000] [--rounds 9] [--duration 4] [--connections 50] [--builds-only] [--keep-build] [--dry-run]
//        npm run bench -- --lookups-only [--keep-build] [--serve-size 100000] [--repeat 3] [--rounds 9] [--duration 4] [--connections 50] [--dry-run]
//
// The scale benchmark. For each size it generates synthetic content (scripts/bench/generate-profiles.ts),
// then, in the same run: the floor (scripts/bench/build-floor.ts: parse each YAML, write JSON and a small
// page), the real build from cold, a fresh clone's build (no caches at all, as CI builds), a rebuild with nothing changed, and
// rebuilds after editing, adding and removing one profile (the validation cache and page reuse,
// src/build/reuse/page-reuse.ts). Each build's peak memory is its process tree's, sampled from /proc
// (scripts/bench/proc-tree.ts), and the main process's; its steps' times (scripts/bench/step-times.ts) make a
// table across sizes. The first 1,000 profiles of every size's build are compared byte for byte with a
// 1,000-profile build (scripts/bench/same-files.ts). Then it serves one size and measures path, query and 404
// lookups with autocannon against a bare node:http server holding the same bodies in memory
// (scripts/bench/serve-bare.ts), the servers' start-up time, and their memory after start-up and after each route. Writes the tables to
// BENCHMARKS.md unless --dry-run, and says in words whether the issues' targets are met (LOOKUP_TARGETS, SCALE_TARGETS).
//
// Before it starts, it measures the disk a 1,000-profile build takes per profile and stops at once
// when the largest size would not fit (scripts/bench/disk.ts); at the end it removes what it built
// and generated (millions of files at 1,000,000 profiles) unless --keep-build.
//
// --builds-only skips the lookups and rewrites only the `### Builds` part, keeping the lookups of the last run.
// --lookups-only skips the build table: it generates and builds the --serve-size profiles once, measures the lookups, and
// rewrites only the `### Lookups` part of BENCHMARKS.md's Scale section, keeping the build table of the last full run.
// With it, --keep-build serves the build of that size an earlier `--keep-build` run left, as it is (the server's code may
// change between runs; the build's must not).
//
// This machine's speed drifts by 2x from minute to minute (shared cores), so floor, build and Hugo
// run in alternation --repeat times up to 20,000 profiles and at the sizes the Hugo target names
// (one pair of 100,000-profile builds went from 0.62x of Hugo to 1.04x between two runs), and the
// medians are reported; each lookup route is loaded on our server and the bare ones in turn, --rounds
// times, each round begun by the next server, and each ratio is the median of the rounds' ratios.
//
// Hugo, the static-site generator people pick for speed, builds the same profiles in the same run when
// `hugo` is on PATH: ../shared/anchors/hugo/mkhugo.mjs turns each size's generated content into a Hugo
// site (pages with our markup, a JSON file per profile), and `hugo` builds it from cold in alternation
// with our cold build. The issue's target: ours at 1.0x of Hugo or less, with a lower peak, at 20,000
// and 100,000 profiles. Hugo's memory grows linearly (3.8 GB at 100,000 profiles): before each size
// its peak is predicted from the largest size it ran at, and a size predicted past 80% of this
// machine's memory is skipped and said so (scripts/bench/hugo-fit.ts). With a single size above
// 100,000, a fresh clone of ours and Hugo run once at 100,000 first (what the size's step times and
// Hugo's prediction are compared with), then Hugo alone at 300,000 if the size itself is predicted
// not to fit and 300,000 is: Hugo at the largest size that fits, up to the size asked.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT, serve } from '../support/serve-build.ts';
import { nodeArgsOf } from '../support/npm-scripts.ts';
import { numberOption, parseCli, step } from '../../src/cli.ts';
import { releasesDir } from '../../src/release/releases.ts';
import { rendererStore } from '../../src/build/astro/keep-renderer.ts';
import { validationCacheFile } from '../../src/config.ts';
import { sampleTree, statusKb } from './proc-tree.ts';
import { medianSteps, parseSteps, stepTable } from './step-times.ts';
import { add, free, gb, millions, scaled, shortOf, slowAfterDeleting, usage, type Usage } from './disk.ts';
import { compareBuilds, comparisonLine, type Comparison } from './same-files.ts';
import { firstRung, hugoFits, hugoSkipped, nextHugoOnly, type HugoPeak } from './hugo-fit.ts';

const cli = parseCli({
  name: 'bench',
  usage: 'Usage: npm run bench [-- --sizes 1000,10000,20000,100000] [--repeat 3] [--serve-size 100000] [--rounds 9] [--duration 4] [--connections 50] [--builds-only] [--keep-build] [--dry-run]\n'
    + '       npm run bench -- --lookups-only [--keep-build] [--serve-size 100000] [--repeat 3] [--rounds 9] [--duration 4] [--connections 50] [--dry-run]\n'
    + '\n'
    + 'Hugo (when `hugo` is on PATH) builds each size too, unless its peak, predicted by linear growth from the largest\n'
    + 'size it ran at, passes 80% of this machine\'s memory: the report then says "Hugo: not run at N: predicted X GB of Y GB".\n'
    + 'With a single size above 100,000 (`--sizes 1000000`), a fresh clone of ours and Hugo run once at 100,000 first (the\n'
    + 'base of the step table\'s ratios and of Hugo\'s prediction), then Hugo at the size if predicted to fit, else alone at\n'
    + '300,000 if that is: Hugo at the largest size that fits, up to the size asked.\n'
    + '\n'
    + 'Each size: the floor, cold and fresh-clone builds (peak memory of all their processes and of the main one; each\n'
    + 'step\'s time, in a table across sizes), rebuilds with nothing, one profile edited, one added and one removed, and\n'
    + 'the first 1,000 profiles\' files compared byte for byte with a 1,000-profile build. First, the disk a profile takes\n'
    + 'is measured on that 1,000-profile build: a size that would not fit on the disk stops the run before it starts.\n'
    + 'At the end, what the run generated and built in node_modules/.cache/bench is removed, unless --keep-build.',
  options: {
    sizes: { type: 'string', default: '1000,10000,20000,100000', value: '<n,n,...>', help: 'how many profiles to generate and build, in turn (default 1000,10000,20000,100000; not with --lookups-only)' },
    'lookups-only': { type: 'boolean', default: false, help: 'no build table: generate and build only --serve-size profiles, measure the lookups, rewrite only the lookups part of BENCHMARKS.md' },
    'keep-build': { type: 'boolean', default: false, help: 'keep each size\'s content and build in node_modules/.cache/bench (removed by default, each as soon as it is not needed); with --lookups-only: serve the build of that size an earlier --keep-build run left, without generating or building' },
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
const keepBuild = values['keep-build'];
const buildsOnly = values['builds-only'];
if (buildsOnly && lookupsOnly) cli.usageError('--builds-only and --lookups-only exclude each other');
const serveSize = numberOption(cli, 'serve-size', values['serve-size'], { integer: true });
const sizes = lookupsOnly ? [] : values.sizes.split(',').map((n) => numberOption(cli, 'sizes', n, { integer: true }));
if (sizes.some((n, i) => i && n <= sizes[i - 1]!)) cli.usageError('--sizes must grow from each to the next');
const repeat = numberOption(cli, 'repeat', values.repeat, { integer: true });
const rounds = numberOption(cli, 'rounds', values.rounds, { integer: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const duration = numberOption(cli, 'duration', values.duration);
const connections = numberOption(cli, 'connections', values.connections, { integer: true });
const WORK = path.join(ROOT, 'node_modules', '.cache', 'bench');
fs.mkdirSync(WORK, { recursive: true });
/** The issue's targets for lookups on our server, against the bare one in the same run. */
const LOOKUP_TARGETS = { ratio: 0.9, extraRssMb: 100, startMs: 1000 };
const node = process.execPath;
/** The issue's targets for cold builds against Hugo, in the same run. */
const BUILD_TARGET = { ratio: 1.0, sizes: [20_000, 100_000] };
/** Issue 31's targets at every size: a fresh clone's peak summed over its processes, and the time until an edit is served. */
const SCALE_TARGETS = { treePeakMb: 8 * 1024, editServedS: 3 };
/** The profiles of the small build every larger build's files are compared with (the generator's first profiles are the same at any size). */
const EQUAL_PROFILES = 1000;
const SITE_URL = 'https://profiles.example.net';
// One build time for every build of the run, so two builds of the same profiles write the same bytes (2026-01-01).
const SOURCE_DATE_EPOCH = '1767225600';
const totalMb = os.totalmem() / 2 ** 20;
// The Hugo site maker of ../shared/anchors (next to the project); without it or without `hugo`, no Hugo columns.
const MKHUGO = path.join(ROOT, '..', 'shared', 'anchors', 'hugo', 'mkhugo.mjs');
const hugoVersion = spawnSync('hugo', ['version'], { encoding: 'utf8' });
const hugo = hugoVersion.status === 0 && fs.existsSync(MKHUGO) ? hugoVersion.stdout.trim().split(' ')[1] ?? 'hugo' : null;
if (!hugo) console.log(`bench: no Hugo in this run (${hugoVersion.status === 0 ? `${path.relative(ROOT, MKHUGO)} is missing` : '`hugo` is not on PATH'})`);

// The build as operators run it: `npm run build`'s command from package.json, node flags included
// (read from there, so the benchmark can never measure other flags than the ones that ship).
const BUILD = nodeArgsOf('build');
if (BUILD.at(-1) !== 'scripts/build-site.ts') throw new Error(`bench: unexpected build script: node ${BUILD.join(' ')}`);
/** A fresh clone has no compiled code kept either (scripts/support/compile-cache.mjs). */
const FRESH_CLONE_ENV = { NODE_DISABLE_COMPILE_CACHE: '1' };

// What this run generated and built, removed when it ends (even by a failure) unless --keep-build:
// at 1,000,000 profiles several million files.
const made = new Set<string>();
const removeMade = () => {
  if (keepBuild || !made.size) return;
  console.log(`bench: removing what this run generated and built (${[...made].map((p) => path.relative(ROOT, p)).join(', ')}; --keep-build keeps it)`);
  for (const p of made) fs.rmSync(p, { recursive: true, force: true });
  made.clear();
};
process.once('exit', removeMade);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
/** A folder of this run's, removed at the end: `dist-N` for a build's link and its releases beside. */
const output = (name: string) => {
  const dir = path.join(WORK, name);
  made.add(dir);
  return dir;
};

/** Runs one of our scripts to its end, with a line every few seconds meanwhile (a 100,000-profile build takes minutes). */
async function run(label: string, args: string[], env: Record<string, string> = {}) {
  const t0 = performance.now();
  let peaks = { treeKb: 0, mainKb: 0, processes: 0 };
  const r = await step(label, () => new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(node, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env, BENCH_REPORT: '1' } });
    // Every ~100 ms, the memory of the process and of all it started (scripts/bench/proc-tree.ts).
    const sampler = sampleTree(child.pid!);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d; });
    child.stderr.on('data', (d: Buffer) => { stderr += d; });
    child.once('error', (e) => { sampler.stop(); reject(e); });
    child.once('exit', () => { peaks = sampler.stop(); });
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  }));
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed:\n${r.stderr}${r.stdout}`.slice(0, 4000));
  const line = r.stdout.split('\n').find((l) => l.startsWith('BENCH '));
  const report = line ? JSON.parse(line.slice(6)) as { maxRssKb: number; servedMs?: number } : { maxRssKb: NaN };
  // A build's `servedMs`: from its start to the switch, the latency of an edit (what follows, deleting
  // pruned releases, runs without the lock). Without it (other scripts), the wall time.
  const served = report.servedMs === undefined ? wall / 1000 : report.servedMs / 1000;
  // The main process's peak: its own exact figure when it prints one, else its VmHWM as last sampled.
  const mainKb = Math.max(report.maxRssKb || 0, peaks.mainKb);
  // The tree's sampled peak can miss the main process's last growth between two samples: never below it.
  const treeKb = Math.max(peaks.treeKb, mainKb);
  return { seconds: wall / 1000, served, peakMb: mainKb / 1024, treeMb: treeKb / 1024, processes: peaks.processes, steps: parseSteps(r.stdout), stdout: r.stdout };
}
type Run = Awaited<ReturnType<typeof run>>;
/** A build's peaks for the report: all its processes added up, the main one's in brackets. */
const peaks = (r: { treeMb: number; peakMb: number }) => `${r.treeMb.toFixed(0)} MB (${r.peakMb.toFixed(0)})`;

/**
 * Writes every dirty page to disk before a timed run (`sync`), off the clock: otherwise a run pays
 * for the writeback of the files the run before it wrote or deleted, tens of thousands at these
 * sizes, and most of all a build that makes its release durable (its folder fsync commits the
 * file system's journal, and with it others' pending writes).
 */
const flush = () => { spawnSync('sync'); };

/**
 * How long a timed run waits after the run deleted build files, where new files are slowed by
 * deleted ones (disk.ts `slowAfterDeleting`: this machine's ext4, which has no journal). A fresh
 * 100,000-profile build started a minute after 13 GB were deleted took 74.1 s against 60.0 s
 * without (perf: up to 30% of all CPU in the kernel's `recently_deleted` while it wrote pages), and
 * Hugo's runs, which followed the removal of its last output, spent 13-48 s in the kernel. The
 * kernel passes over an inode freed in the last 60 s, or 360 s while its block is unwritten, and
 * the new files' own inodes dirty those blocks again: a build begun 2 minutes after a deletion and
 * a `sync` still paid (80.9 s, system time 70 s, against 54-56 s). So 6.5 minutes; within a size
 * what a run leaves is moved aside instead (`remove`), and deleted with the size.
 */
const SETTLE_MS = slowAfterDeleting(WORK) ? 390_000 : 0;
/** Where `remove` moves what it would delete while the disk has room: deleted before the next size (`emptyTrash`). */
const TRASH = output('trash');
/** Free bytes `remove` leaves for the runs: below them it deletes, and the next timed run waits. */
const TRASH_RESERVE_BYTES = 20e9;
let trashed = 0;
let removedAt = -Infinity;
/** Removes a file or folder this run wrote: moved into TRASH where deleting it would slow the next runs and the disk has room, else deleted, remembering when for `settle`. */
function remove(p: string): void {
  if (!fs.existsSync(p)) return;
  if (SETTLE_MS > 0 && free(fs.existsSync(WORK) ? WORK : ROOT).bytes > TRASH_RESERVE_BYTES) {
    fs.mkdirSync(TRASH, { recursive: true });
    fs.renameSync(p, path.join(TRASH, String(trashed++)));
    return;
  }
  fs.rmSync(p, { recursive: true, force: true });
  removedAt = performance.now();
}
/** Deletes what `remove` moved aside (between sizes): the next timed run waits for it, unless it was a few files. */
function emptyTrash(): void {
  if (!fs.existsSync(TRASH)) return;
  const { inodes } = usage(TRASH);
  fs.rmSync(TRASH, { recursive: true, force: true });
  if (inodes >= 10_000) removedAt = performance.now();
}
/** Before a timed run: every dirty page written (`flush`), then the rest of SETTLE_MS since the last removal. */
async function settle(): Promise<void> {
  flush();
  const wait = removedAt + SETTLE_MS - performance.now();
  if (wait <= 0) return;
  console.log(`(waiting ${(wait / 1000).toFixed(0)} s: on this disk, files deleted in the last minutes slow the creation of new ones)`);
  await new Promise((resolve) => setTimeout(resolve, wait));
}

/** Peak RSS of a process, read from /proc while it runs: Node gives no child's rusage. */
const peakKb = (pid: number) => statusKb(pid, 'VmHWM');

/** One cold Hugo build of `site` (its output and caches removed first, then `settle`): wall time and peak RSS. */
async function runHugo(site: string) {
  for (const d of ['public', 'resources']) remove(path.join(site, d));
  await settle();
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

const generate = (n: number, content: string) => run(`generating ${n.toLocaleString('en')} profiles`, ['scripts/bench/generate-profiles.ts', String(n), content]);
const buildEnv = (content: string, dist: string) => ({ CONTENT_DIR: content, DIST_DIR: dist, SITE_URL, SOURCE_DATE_EPOCH });

// ---------------------------------------------------------------------------------------------
// Before anything long: the disk a profile takes, measured on EQUAL_PROFILES of them, which are
// also the small build every larger one is compared with.

const referenceContent = output(`content-${EQUAL_PROFILES}-reference`);
const referenceDist = path.join(output(`dist-${EQUAL_PROFILES}-reference`), 'dist');
const perProfile: Record<'content' | 'release' | 'floor' | 'hugo', Usage> = { content: { bytes: 0, inodes: 0 }, release: { bytes: 0, inodes: 0 }, floor: { bytes: 0, inodes: 0 }, hugo: { bytes: 0, inodes: 0 } };
let releaseFixed: Usage = { bytes: 0, inodes: 0 };
if (!(lookupsOnly && keepBuild)) {
  console.log(`\n== ${EQUAL_PROFILES.toLocaleString('en')} profiles: the disk each profile takes, and the build larger ones are compared with`);
  await generate(EQUAL_PROFILES, referenceContent);
  // From an empty folder: over a kept one it would be a layered rebuild, holding almost nothing of its own.
  remove(path.dirname(referenceDist));
  await run('building them', BUILD, buildEnv(referenceContent, referenceDist));
  const floorDir = output(`floor-${EQUAL_PROFILES}-reference`);
  await run('the floor', ['scripts/bench/build-floor.ts', referenceContent, floorDir]);
  const per = (u: Usage): Usage => ({ bytes: u.bytes / EQUAL_PROFILES, inodes: u.inodes / EQUAL_PROFILES });
  perProfile.content = per(usage(referenceContent));
  // A release's own part per profile is its pages and API answers; the rest (code, shared pages, previews by hue and initial) does not grow with the profiles.
  const client = path.join(referenceDist, 'client');
  const own = add(usage(path.join(client, 'p')), usage(path.join(client, 'api', 'v1', 'users')));
  const whole = usage(releasesDir(referenceDist));
  perProfile.release = per(own);
  releaseFixed = { bytes: whole.bytes - own.bytes, inodes: whole.inodes - own.inodes };
  perProfile.floor = per(usage(floorDir));
  remove(floorDir);
  if (hugo) {
    const site = output(`hugo-${EQUAL_PROFILES}-reference`);
    await run('making the Hugo site', [MKHUGO, referenceContent, site]);
    await runHugo(site);
    perProfile.hugo = per(usage(site)); // its site and its output
    remove(site);
  }
  const show = (u: Usage) => `${(u.bytes / 1024).toFixed(1)} kB, ${u.inodes.toFixed(1)} inodes`;
  console.log(`per profile: content ${show(perProfile.content)}; a release ${show(perProfile.release)}, and ${(releaseFixed.bytes / 1e6).toFixed(0)} MB and ${millions(releaseFixed.inodes)} inodes besides; the floor ${show(perProfile.floor)}${hugo ? `; Hugo's site and output ${show(perProfile.hugo)}` : ''}`);
}
/**
 * What a size needs free at its fullest: its content, one full release or the floor's output,
 * whichever is larger (each cold build and floor starts from an empty folder, the floor's removed
 * after it, and a rebuild of a few profiles writes a layered release of those only) and, when it
 * runs, Hugo's site and output.
 */
const NOTHING: Usage = { bytes: 0, inodes: 0 };
const larger = (a: Usage, b: Usage): Usage => ({ bytes: Math.max(a.bytes, b.bytes), inodes: Math.max(a.inodes, b.inodes) });
const diskNeed = (n: number, withHugo: boolean, ours = true) => add(ours ? releaseFixed : NOTHING, scaled(add(perProfile.content, ours ? larger(perProfile.release, perProfile.floor) : NOTHING, withHugo ? perProfile.hugo : NOTHING), n));
const diskCheck = (n: number, withHugo: boolean, what: string, ours = true) => {
  const short = shortOf(diskNeed(n, withHugo, ours), WORK, what);
  if (short) {
    console.error(`bench: ${short} (measured per profile on a ${EQUAL_PROFILES.toLocaleString('en')}-profile build). Free some, or run smaller --sizes.`);
    process.exit(1);
  }
};
const largest = lookupsOnly ? (keepBuild ? 0 : serveSize) : sizes.at(-1)!;
if (largest) {
  diskCheck(largest, false, `${largest.toLocaleString('en')} profiles`);
  const need = diskNeed(largest, false);
  console.log(`disk: ${largest.toLocaleString('en')} profiles need about ${gb(need.bytes)} and ${millions(need.inodes)} inodes (without Hugo's); free enough`);
}

// ---------------------------------------------------------------------------------------------
// The builds, smallest size first; Hugo-only sizes among them (hugo-fit.ts).

const rows: string[] = [];
const targetLines: string[] = [];
const scaleLines: string[] = [];
const hugoLines: string[] = [];
const stepsBySize: [number, Map<string, number>][] = [];
const builds: Record<number, string> = {};
const hugoPeaks: HugoPeak[] = [];
// The size whose build the lookups serve: kept until then, every other size's removed after its row.
const serveN = lookupsOnly ? serveSize : buildsOnly ? 0 : sizes.includes(serveSize) ? serveSize : sizes.at(-1)!;
// `full`: every build of a size; `baseline`: with one size only, a fresh clone of ours and Hugo at
// 100,000 first (their step times and Hugo's peak, to compare the size with); `hugo`: Hugo alone.
const queue: { n: number; kind: 'full' | 'baseline' | 'hugo' }[] = [...firstRung(sizes).map((n) => ({ n, kind: 'baseline' as const })), ...sizes.map((n) => ({ n, kind: 'full' as const }))];
/** The fresh clone's time at each size of ours, for the issue's "about 10x the 100,000 figure". */
const freshSeconds: [number, number][] = [];

/** Whether Hugo runs at `n`, and the report's line when it does not. */
const hugoAt = (n: number) => {
  if (!hugo) return false;
  const { fits, predictedMb } = hugoFits(hugoPeaks, n, totalMb);
  if (!fits) {
    const line = hugoSkipped(n, predictedMb!, totalMb);
    hugoLines.push(`${line} (linear from its ${Math.max(...hugoPeaks.map((r) => r.n)).toLocaleString('en')}-profile peak)`);
    console.log(line);
  }
  return fits;
};

/** One profile edited, one added, one removed, each a rebuild of its own: each served after its build's `servedMs`. */
async function edits(content: string, env: Record<string, string>) {
  const profiles = path.join(content, 'profiles');
  const edited = path.join(profiles, 'user000000.yaml');
  fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace(/^displayName: .*$/m, 'displayName: "Edited for the benchmark"'));
  await settle();
  const one = await run('rebuild, one profile edited', BUILD, env);
  // A new name with no custom domain or avatar to clash with the generated ones.
  fs.writeFileSync(path.join(profiles, 'bench-added.yaml'), 'displayName: "Added for the benchmark"\ncreatedAt: 2024-01-01T00:00:00Z\n');
  await settle();
  const added = await run('rebuild, one profile added', BUILD, env);
  // A profile no creator entry or view count names, so the content stays valid and warns of nothing.
  const views = fs.readFileSync(path.join(content, 'stats', 'views.yaml'), 'utf8');
  const gone = fs.readdirSync(profiles).map((f) => f.slice(0, -'.yaml'.length)).sort()
    .find((name) => name !== 'user000000' && name !== 'bench-added' && !fs.existsSync(path.join(content, 'creators', `${name}.yaml`)) && !views.includes(`\n${name}:`))!;
  fs.rmSync(path.join(profiles, `${gone}.yaml`));
  await settle();
  const removed = await run(`rebuild, one profile removed (${gone})`, BUILD, env);
  for (const [what, r] of [['edited', one], ['added', added], ['removed', removed]] as const) {
    console.log(`rebuild, one profile ${what}: served after ${r.served.toFixed(1)} s, done in ${r.seconds.toFixed(1)} s, ${peaks(r)}`);
  }
  return { one, added, removed };
}

/**
 * The same three edits told which file changed, as the post-merge hook and `npm start` tell a build
 * (CHANGED_FILES, CHANGED_SINCE: the served release), so that the build stamps that file only: each
 * served after its build's `servedMs`. The check that follows each (every file stamped) is in its
 * done time.
 */
async function toldEdits(content: string, dist: string, env: Record<string, string>) {
  const profiles = path.join(content, 'profiles');
  const told = (what: string, file: string) => run(`rebuild told, one profile ${what}`, BUILD, { ...env, CHANGED_FILES: file, CHANGED_SINCE: path.basename(fs.readlinkSync(dist)) });
  const edited = path.join(profiles, 'user000001.yaml');
  fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace(/^displayName: .*$/m, 'displayName: "Told for the benchmark"'));
  await settle();
  const one = await told('edited', 'profiles/user000001.yaml');
  fs.writeFileSync(path.join(profiles, 'bench-told.yaml'), 'displayName: "Told for the benchmark"\ncreatedAt: 2024-01-01T00:00:00Z\n');
  await settle();
  const added = await told('added', 'profiles/bench-told.yaml');
  fs.rmSync(path.join(profiles, 'bench-told.yaml'));
  await settle();
  const removed = await told('removed', 'profiles/bench-told.yaml');
  for (const [what, r] of [['edited', one], ['added', added], ['removed', removed]] as const) {
    console.log(`rebuild told, one profile ${what}: served after ${r.served.toFixed(1)} s, done in ${r.seconds.toFixed(1)} s, ${peaks(r)}`);
  }
  return { one, added, removed };
}

for (let q = 0; q < queue.length; q++) {
  emptyTrash();
  const { n, kind } = queue[q]!;
  const content = output(`content-${n}`);
  const hugoSite = output(`hugo-${n}`);
  if (kind !== 'full') {
    // A size ours builds once or not at all in this run: the base of the comparisons, or the largest size Hugo fits.
    const withHugo = hugoAt(n);
    if (kind === 'hugo' && !withHugo) continue;
    console.log(`\n== ${n.toLocaleString('en')} profiles, ${kind === 'hugo' ? 'Hugo only' : `a fresh clone of ours${withHugo ? ' and Hugo' : ''}, once`}`);
    diskCheck(n, withHugo, `${n.toLocaleString('en')} profiles`, kind === 'baseline');
    await generate(n, content);
    let fresh: Run | undefined;
    const distDir = output(`dist-${n}`);
    if (kind === 'baseline') {
      // A fresh clone, as in the full sizes: no kept renderer, no validation cache, an empty output folder.
      remove(rendererStore(ROOT));
      remove(validationCacheFile(ROOT, content));
      remove(distDir);
      await settle();
      fresh = await run('fresh clone', BUILD, { ...buildEnv(content, path.join(distDir, 'dist')), ...FRESH_CLONE_ENV });
      console.log(`fresh clone ${fresh.seconds.toFixed(1)} s, ${peaks(fresh)}`);
      remove(distDir);
      stepsBySize.push([n, medianSteps([fresh.steps])]);
      freshSeconds.push([n, fresh.seconds]);
    }
    let h: Awaited<ReturnType<typeof runHugo>> | undefined;
    if (withHugo) {
      await run('making the Hugo site', [MKHUGO, content, hugoSite]);
      h = await runHugo(hugoSite);
      console.log(`Hugo ${h.seconds.toFixed(1)} s, ${h.peakMb.toFixed(0)} MB`);
      hugoPeaks.push({ n, peakMb: h.peakMb });
    }
    const hugoCells = h ? `${h.seconds.toFixed(1)} s | ${h.peakMb.toFixed(0)} MB | –` : '– | – | –';
    const freshCells = fresh ? `${fresh.seconds.toFixed(1)} s | ${peaks(fresh)} | ${h ? `${(fresh.seconds / h.seconds).toFixed(2)}x` : '–'}` : '– | – | –';
    rows.push(`| ${n.toLocaleString('en')} (${kind === 'hugo' ? 'Hugo only' : 'fresh clone once'}) | – | – | – | – | – | ${hugoCells} | ${freshCells} | – | – | – | – | – | – | – |`);
    for (const d of [content, hugoSite]) remove(d);
    const size = queue.find((s) => s.kind === 'full')?.n;
    const next = hugo && size !== undefined ? nextHugoOnly(size, hugoPeaks, totalMb) : undefined;
    if (next !== undefined && !queue.some((s) => s.n === next)) queue.splice(q + 1, 0, { n: next, kind: 'hugo' });
    continue;
  }
  const distDir = output(`dist-${n}`);
  const dist = path.join(distDir, 'dist');
  const floorDir = output(`floor-${n}`);
  console.log(`\n== ${n.toLocaleString('en')} profiles`);
  const withHugo = hugoAt(n);
  diskCheck(n, withHugo, `${n.toLocaleString('en')} profiles${withHugo ? ' with Hugo' : ''}`);
  await generate(n, content);
  const env = buildEnv(content, dist);
  if (withHugo) await run('making the Hugo site', [MKHUGO, content, hugoSite]);
  // Floor, cold build and Hugo in alternation, so all see the same machine; medians of the runs.
  const floors: Run[] = [];
  const colds: Run[] = [];
  const freshes: Run[] = [];
  /** At the target's sizes: fresh clones that write no compressed copies (`PRECOMPRESS=0`), what the copies cost beside Hugo, which writes none. */
  const plains: Run[] = [];
  const withPlain = withHugo && BUILD_TARGET.sizes.includes(n);
  const hugos: Awaited<ReturnType<typeof runHugo>>[] = [];
  // The first build of new code: \`astro build\` compiles the site (Vite), then renders and keeps
  // what it compiled. The cold builds below render with that kept code, as every build does until
  // the code changes again (src/build/page-renderer.ts).
  // Every cold build starts from an empty output folder, removed before the clock starts, as Hugo's
  // and the floor's are: otherwise it would also delete the releases of the build before (pruning),
  // tens of thousands of files, beside its rendering.
  const emptyDist = () => { for (const d of [dist, releasesDir(dist)]) remove(d); };
  emptyDist();
  await settle();
  const newCode = await run('cold build of new code', BUILD, { ...env, PROFILES_INCREMENTAL: '0', KEPT_RENDERER: '0' });
  console.log(`cold build of new code (astro build): ${newCode.seconds.toFixed(1)} s, ${peaks(newCode)}`);
  for (let i = 0; i < (n <= 20_000 || BUILD_TARGET.sizes.includes(n) ? repeat : 1); i++) {
    // The output folder emptied before the floor runs, and the floor's removed after it: the disk never holds both (millions of files at 1,000,000).
    emptyDist();
    await settle();
    floors.push(await run('floor', ['scripts/bench/build-floor.ts', content, floorDir]));
    remove(floorDir);
    // A cold build: every file parsed, every page rendered (no cache or earlier build read).
    await settle();
    colds.push(await run('cold build', BUILD, { ...env, PROFILES_INCREMENTAL: '0' }));
    // A fresh clone, as CI builds it: no kept renderer, no validation cache, an empty output folder.
    const freshStart = async () => {
      remove(rendererStore(ROOT));
      remove(validationCacheFile(ROOT, content));
      emptyDist();
      await settle();
    };
    // Before the fresh clone with copies, whose release the comparison and the edits below use.
    if (withPlain) {
      await freshStart();
      plains.push(await run('fresh clone without compressed copies', BUILD, { ...env, ...FRESH_CLONE_ENV, PRECOMPRESS: '0' }));
    }
    await freshStart();
    freshes.push(await run('fresh clone', BUILD, { ...env, ...FRESH_CLONE_ENV }));
    if (withHugo) hugos.push(await runHugo(hugoSite));
    const h = hugos.at(-1);
    const f = freshes.at(-1)!;
    console.log(`floor ${floors.at(-1)!.seconds.toFixed(1)} s, build ${colds.at(-1)!.seconds.toFixed(1)} s, ${peaks(colds.at(-1)!)}, fresh clone ${f.seconds.toFixed(1)} s, ${peaks(f)}${withPlain ? ` (without compressed copies ${plains.at(-1)!.seconds.toFixed(1)} s)` : ''}${h ? `, Hugo ${h.seconds.toFixed(1)} s, ${h.peakMb.toFixed(0)} MB` : ''}`);
  }
  const floor = { seconds: median(floors.map((r) => r.seconds)), peakMb: median(floors.map((r) => r.peakMb)) };
  const cold = { seconds: median(colds.map((r) => r.seconds)), peakMb: Math.max(...colds.map((r) => r.peakMb)), treeMb: Math.max(...colds.map((r) => r.treeMb)) };
  const ratio = median(floors.map((f, i) => colds[i]!.seconds / f.seconds));
  const freshClone = { seconds: median(freshes.map((r) => r.seconds)), peakMb: Math.max(...freshes.map((r) => r.peakMb)), treeMb: Math.max(...freshes.map((r) => r.treeMb)) };
  stepsBySize.push([n, medianSteps(freshes.map((r) => r.steps))]);
  const before = freshSeconds.at(-1);
  freshSeconds.push([n, freshClone.seconds]);
  // Hugo's columns: its median time and highest peak, and the median of ours / Hugo's over the pairs.
  let hugoCells = '– | – | –';
  let freshVsHugo = '–';
  if (hugos.length) {
    const hugoSeconds = median(hugos.map((r) => r.seconds));
    const hugoPeak = Math.max(...hugos.map((r) => r.peakMb));
    hugoPeaks.push({ n, peakMb: hugoPeak });
    const vsHugo = median(hugos.map((h, i) => colds[i]!.seconds / h.seconds));
    hugoCells = `${hugoSeconds.toFixed(1)} s | ${hugoPeak.toFixed(0)} MB | ${vsHugo.toFixed(2)}x`;
    // The target is a fresh clone's: what CI and a new contributor pay.
    const freshRatio = median(hugos.map((h, i) => freshes[i]!.seconds / h.seconds));
    freshVsHugo = `${freshRatio.toFixed(2)}x`;
    if (BUILD_TARGET.sizes.includes(n)) {
      const met = freshRatio <= BUILD_TARGET.ratio && freshClone.peakMb < hugoPeak;
      // Hugo writes no compressed copies: ours without them, from the same rounds, says what they cost.
      const plainRatio = plains.length === hugos.length ? median(hugos.map((h, i) => plains[i]!.seconds / h.seconds)) : undefined;
      const plainPart = plainRatio === undefined ? '' : `; without compressed copies (\`PRECOMPRESS=0\`) ${median(plains.map((r) => r.seconds)).toFixed(1)} s, ${plainRatio.toFixed(2)}x (pairs ${hugos.map((h, i) => `${(plains[i]!.seconds / h.seconds).toFixed(2)}x`).join(', ')})`;
      targetLines.push(`${n.toLocaleString('en')} profiles, fresh clone: ${freshRatio.toFixed(2)}x of Hugo's time (${freshRatio <= BUILD_TARGET.ratio ? 'met' : 'NOT met'}; pairs ${hugos.map((h, i) => `${(freshes[i]!.seconds / h.seconds).toFixed(2)}x`).join(', ')}), peak ${freshClone.peakMb.toFixed(0)} MB vs Hugo's ${hugoPeak.toFixed(0)} MB (${freshClone.peakMb < hugoPeak ? 'met' : 'NOT met'}): target ${met ? 'met' : 'NOT met'}${plainPart}`);
    }
  }
  remove(hugoSite);
  // The served release is now the last fresh clone's: its first profiles against the small build's, before any edit.
  let same: Comparison | undefined;
  if (n > EQUAL_PROFILES && fs.existsSync(referenceDist)) {
    const names = Array.from({ length: EQUAL_PROFILES }, (_, i) => `user${String(i).padStart(6, '0')}`);
    same = await step(`comparing the first ${EQUAL_PROFILES.toLocaleString('en')} profiles' files with the ${EQUAL_PROFILES.toLocaleString('en')}-profile build`, async () => compareBuilds(referenceDist, dist, names));
    console.log(comparisonLine(same, EQUAL_PROFILES, n));
  }
  await settle();
  const again = await run('rebuild, nothing changed', BUILD, env);
  console.log(`rebuild, nothing changed: served after ${again.served.toFixed(1)} s, done in ${again.seconds.toFixed(1)} s`);
  const e = await edits(content, env);
  const t = await toldEdits(content, dist, env);
  const edited = [e.one, e.added, e.removed];
  const toldRuns = [t.one, t.added, t.removed];
  const servedCell = (r: Run) => `${r.served.toFixed(1)} s (${r.seconds.toFixed(1)} s)`;
  const editPeak = edited.reduce((a, r) => (r.treeMb > a.treeMb ? r : a));
  const sameCell = same ? (same.missing.length || same.different.length ? `NOT equal: ${same.different.length + same.missing.length} of ${same.files.toLocaleString('en')} files` : `${same.files.toLocaleString('en')} files equal`) : '–';
  rows.push(`| ${n.toLocaleString('en')} | ${floor.seconds.toFixed(1)} s | ${floor.peakMb.toFixed(0)} MB | ${cold.seconds.toFixed(1)} s | ${peaks(cold)} | ${ratio.toFixed(1)}x | ${hugoCells} | ${freshClone.seconds.toFixed(1)} s | ${peaks(freshClone)} | ${freshVsHugo} | ${newCode.seconds.toFixed(1)} s, ${peaks(newCode)} | ${servedCell(again)} | ${servedCell(e.one)} | ${servedCell(e.added)} | ${servedCell(e.removed)} | ${toldRuns.map((r) => r.served.toFixed(1)).join(', ')} s | ${peaks(editPeak)} | ${sameCell} |`);
  // Issue 31's targets, judged at every size (they are set at 1,000,000 profiles).
  const slowest = Math.max(...edited.map((r) => r.served));
  const memoryMet = freshClone.treeMb <= SCALE_TARGETS.treePeakMb;
  const editsMet = slowest <= SCALE_TARGETS.editServedS;
  scaleLines.push(`${n.toLocaleString('en')} profiles: a fresh clone's peak over all its processes ${(freshClone.treeMb / 1024).toFixed(1)} GB (at most ${SCALE_TARGETS.treePeakMb / 1024} GB: ${memoryMet ? 'met' : 'NOT met'}); `
    + `${before ? `a fresh clone in ${freshClone.seconds.toFixed(1)} s, ${(freshClone.seconds / before[1]).toFixed(1)}x the ${before[0].toLocaleString('en')}-profile one's (${(n / before[0]).toFixed(1)}x is linear); ` : ''}`
    + `one profile edited, added, removed served after ${edited.map((r) => r.served.toFixed(1)).join(', ')} s (each within ${SCALE_TARGETS.editServedS} s: ${editsMet ? 'met' : 'NOT met'}), `
    + `told which file changed ${toldRuns.map((r) => r.served.toFixed(1)).join(', ')} s (${Math.max(...toldRuns.map((r) => r.served)) <= SCALE_TARGETS.editServedS ? 'met' : 'NOT met'})`
    + `${same ? `; ${comparisonLine(same, EQUAL_PROFILES, n)}` : ''}`);
  builds[n] = dist;
  // Only the served size's build and content stay for the lookups: the rest go now, not at the end.
  if (n !== serveN && !keepBuild) for (const d of [content, distDir]) remove(d);
}
// What the sizes moved aside goes now, --keep-build or not (the lookups make no files).
emptyTrash();

const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
const machine = `${new Date().toISOString().slice(0, 10)}, commit ${commit}, ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const SECTION = '## Scale (npm run bench)';
const LOOKUPS = '### Lookups';
const perProfileLine = perProfile.release.inodes
  ? `Disk per profile, measured on a ${EQUAL_PROFILES.toLocaleString('en')}-profile build (all of the content's, the floor's and Hugo's counted as per profile): content ${(perProfile.content.bytes / 1024).toFixed(1)} kB and ${perProfile.content.inodes.toFixed(1)} inodes, a release ${(perProfile.release.bytes / 1024).toFixed(1)} kB and ${perProfile.release.inodes.toFixed(1)} inodes (its pages and API answers; ${(releaseFixed.bytes / 1e6).toFixed(0)} MB and ${millions(releaseFixed.inodes)} inodes besides), the floor's output ${(perProfile.floor.bytes / 1024).toFixed(1)} kB and ${perProfile.floor.inodes.toFixed(1)} inodes${hugo ? `, Hugo's site and output ${(perProfile.hugo.bytes / 1024).toFixed(1)} kB and ${perProfile.hugo.inodes.toFixed(1)} inodes` : ''}.\n`
  : '';
const buildPart = `### Builds

${machine}.
Build times are wall time of the whole command (\`npm run build\`'s node flags), each timed run (ours, Hugo's, the floor's) started after \`sync\`, so that none pays for the writeback of the one before; every build has SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH}. A build's peak memory is the RSS of all its processes added up, sampled from /proc every 100 ms (scripts/bench/proc-tree.ts; each process once, threads are in their process's RSS), and in brackets the build process's own maximum RSS (the render threads run in it; a first build of new code compiles in a process of its own beside it). Cold: \`PROFILES_INCREMENTAL=0\` (every file parsed, every page rendered) into an empty output folder (as Hugo's and the floor's, emptied before the clock starts), with the code the first build of this code kept (src/build/astro/page-renderer.ts); fresh clone: no kept renderer, no validation cache, no compiled code kept (\`NODE_DISABLE_COMPILE_CACHE=1\`), an empty output folder, as CI builds (\`astro build\` compiles, then its kept code renders the profile pages in threads), and at the target's sizes once more without the compressed copies (\`PRECOMPRESS=0\`), since Hugo writes none, in the same rounds; "new code": the first cold build after a change of code (\`KEPT_RENDERER=0\`, the validation cache ignored); rebuilds: the validation cache and unchanged pages reused (a layered release with the kept renderer when few changed), timed until the new release is served (the build's \`servedMs\`: the latency of an edit), the whole command in brackets; one profile edited (user000000's display name), then one added, then one removed, each its own rebuild; then the same three told which file changed, as the post-merge hook tells a build (\`CHANGED_FILES\`, \`CHANGED_SINCE\`: it stamps that file only). The last column compares, byte for byte, the files of the first ${EQUAL_PROFILES.toLocaleString('en')} profiles (page and API answer with their .br and .gz, and every image under media/) in the fresh clone's release with a ${EQUAL_PROFILES.toLocaleString('en')}-profile build of the same generator (its first profiles are the same at any size). ${hugo ? `Hugo ${hugo}: \`hugo --quiet -s SITE\` on the same profiles (../shared/anchors/hugo/mkhugo.mjs, not timed), from cold, in alternation with our cold build; its peak is its RSS high-water mark (VmHWM). Before each size its peak is predicted by linear growth from the largest size it ran at, and it runs only where that is within 80% of this machine's memory.` : 'No Hugo in this run (`hugo` not on PATH, or ../shared/anchors missing).'}
${perProfileLine}
| profiles | floor | floor peak | build | build peak: all processes (main) | build / floor (median of pairs) | Hugo | Hugo peak | build / Hugo (median of pairs) | fresh clone | its peak: all processes (main) | fresh clone / Hugo (median of pairs) | cold build of new code, peak | rebuild, no change: served (done) | one edited: served (done) | one added: served (done) | one removed: served (done) | told which file changed: edited, added, removed served | edits' highest peak | first ${EQUAL_PROFILES.toLocaleString('en')} profiles' files vs a ${EQUAL_PROFILES.toLocaleString('en')}-profile build |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
${hugoLines.length ? `\n${hugoLines.join('. ')}.\n` : ''}${targetLines.length ? `\nTarget (fresh clones at ${BUILD_TARGET.ratio}x of Hugo or less, peak below Hugo's): ${targetLines.join('; ')}.\n` : ''}${scaleLines.length ? `\nIssue 31's targets (set at 1,000,000 profiles): ${scaleLines.join('. ')}.\n` : ''}${stepsBySize.length ? `
Each step of a fresh clone's build (the times it prints; the median of its runs), and its time per profile against the size before's: 1.00x is linear, a step worse than linear shows above 1 at every size.

${stepTable(stepsBySize)}
` : ''}`;

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

const rssMb = (pid: number) => statusKb(pid, 'VmRSS') / 1024;

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
  console.log(`\n== lookups only, ${serveSize.toLocaleString('en')} profiles`);
  if (keepBuild) {
    // An earlier --keep-build run's, served as it is and kept.
    const dist = path.join(WORK, `dist-${serveSize}`, 'dist');
    if (!fs.existsSync(path.join(dist, 'client'))) cli.usageError(`--keep-build: there is no earlier build of ${serveSize} profiles in ${path.relative(ROOT, dist)} (run with --keep-build to leave one)`);
    builds[serveSize] = dist;
  } else {
    const content = output(`content-${serveSize}`);
    const dist = path.join(output(`dist-${serveSize}`), 'dist');
    await generate(serveSize, content);
    const built = await run('building', BUILD, buildEnv(content, dist));
    console.log(`built in ${built.seconds.toFixed(1)} s, ${peaks(built)}`);
    builds[serveSize] = dist;
  }
}
const serveDist = builds[serveSize] ?? builds[sizes.at(-1)!]!;
const servedCount = Number(Object.entries(builds).find(([, d]) => d === serveDist)![0]);
// Every profile of the served build, from its content: the served release may be layered (after the
// one-profile rebuild it holds that profile's files only), so its folder does not list them all.
const names = fs.readdirSync(path.join(WORK, `content-${servedCount}`, 'profiles')).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length));
const pick = () => names[Math.floor(Math.random() * names.length)]!;
let unknown = 0;
/** Each route: its name, its addresses, the request's headers (none but the path lookup in brotli). */
/** A browser's Accept-Encoding: the file's brotli sibling (src/build/files/compress.ts), on both servers. */
const BROWSER_ACCEPT = { 'accept-encoding': 'gzip, deflate, br, zstd' };
const routes: [string, () => string, Record<string, string>?][] = [
  ['path lookup', () => `/api/v1/users/${pick()}`],
  ['path lookup, brotli', () => `/api/v1/users/${pick()}`, BROWSER_ACCEPT],
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
// Every name once in each form (path, path in brotli, query) on each server before anything is
// measured: the bare server read every body and its brotli bytes and made their ETags before it
// listened (its start-up below), ours reads each body on its first request and makes its ETags and
// headers on the first of each form. Without this the first runs of ours measured reads from disk
// and hashing that the bare server had done off the clock (the brotli form was left out until
// 2026-11-27: most brotli answers measured were then the first of their file). The servers
// take turns, a slice of the names each (the first of each turn rotating), so that each server's
// memory was last gone over as recently as the others': at 1,000,000 profiles, of two servers of
// the same code, the one warmed up minutes before the other answered with 5-15% more CPU, until
// every name was asked of it once more (BENCHMARKS.md, "Lookups at 1,000,000: the order of warming up").
const WARM_SLICE = 20_000;
/** Request `i` of the warm-up: each name by path, then by path in brotli, then by query. */
const warmRequest = (i: number): { path: string; headers?: Record<string, string> } => {
  const [form, name] = [Math.floor(i / names.length), names[i % names.length]!];
  return form === 0 ? { path: `/api/v1/users/${name}` } : form === 1 ? { path: `/api/v1/users/${name}`, headers: BROWSER_ACCEPT } : { path: `/api/v1/users?username=${name.toUpperCase()}` };
};
const WARM_REQUESTS = 3 * names.length;
await step(`every name once in each form on each server, in turns (${WARM_REQUESTS.toLocaleString('en')} requests each)`, async () => {
  const servers = [ours, bare, bareH];
  for (let from = 0, turn = 0; from < WARM_REQUESTS; from += WARM_SLICE, turn++) {
    const amount = Math.min(WARM_SLICE, WARM_REQUESTS - from);
    for (let k = 0; k < servers.length; k++) {
      let next = from;
      await autocannon({
        url: servers[(turn + k) % servers.length]!.base, connections: Math.min(connections, amount), amount,
        requests: [{ method: 'GET', setupRequest: (req) => { const r = warmRequest(next++ % WARM_REQUESTS); return { ...req, path: r.path, headers: { ...req.headers, ...r.headers } }; } }],
      });
    }
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
  // Each round begins with the next server, so that each goes first, second and last as often: in
  // a fixed order one server always ran right after another's multi-GB heap had filled the caches.
  const turns = [['ours', ours, o], ['bare', bare, b], ['bare with the contract\'s headers', bareH, h]] as const;
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < turns.length; k++) {
      const [who, server, runs] = turns[(i + k) % turns.length]!;
      runs.push(await step(`${name}: ${who}, run ${i + 1} of ${rounds} (${duration} s)`, () => load(server, pathFor, duration, headers)));
    }
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
const verdict = `Targets: each route at ${LOOKUP_TARGETS.ratio}x of bare or more, our RSS at most bare's + ${LOOKUP_TARGETS.extraRssMb} MB, and our start-up under ${LOOKUP_TARGETS.startMs / 1000} s. `
  + `Ours / bare by requests per second: ${speedVerdict}; by server CPU per answer: ${cpuVerdict}. `
  + `The contract's headers alone take the bare server to ${routes.map(([name]) => `${headerCost[name]!.toFixed(2)}x`).join(', ')} of itself by CPU per answer; `
  + `against the bare server sending them (the same answers, headers and all), ours by requests per second: ${judged(ratiosH)}; by CPU per answer: ${judged(cpuRatiosH)}. RSS at its highest: ours ${peak.ours.toFixed(0)} MB vs bare ${peak.bare.toFixed(0)} MB, `
  + `${memoryMet ? 'within' : 'OVER'} bare + ${LOOKUP_TARGETS.extraRssMb} MB`
  + `${[100_000, 1_000_000].includes(servedCount) ? '' : ` (the memory target is set at 100,000 and 1,000,000 profiles; this build has ${servedCount.toLocaleString('en')})`}. `
  + `Start-up until listening: ours ${(ours.startMs / 1000).toFixed(2)} s (under ${LOOKUP_TARGETS.startMs / 1000} s: ${ours.startMs < LOOKUP_TARGETS.startMs ? 'met' : 'NOT met'}). `
  + `The 404 route sent ${names404.toLocaleString('en')} distinct unknown names: ours ${(rss.ours.at(-1)! - rss.ours.at(-2)!).toFixed(0)} MB over them.`;

const lookupPart = `${LOOKUPS}

${machine}, load average ${os.loadavg()[0]!.toFixed(1)} before the lookups${lookupsOnly ? ' (`npm run bench -- --lookups-only`)' : ''}.
Lookups on the ${servedCount.toLocaleString('en')}-profile build, ${connections} connections, ${duration} s per run, ${rounds} rounds of each server in turn, each round begun by the next server (medians, and ratios as the median of the rounds' ratios; autocannon in the bench process, each server in its own${pinned ? ', the servers on core 0 and autocannon on core 1' : ', not pinned to cores'}), after every name was asked once in each form of each server. The bare server holds every body in memory and sends the contract's bodies (the query form's \`data\` in a fresh envelope, a 404 naming the user). "Bare + contract headers" is the bare server sending the headers every answer of ours must carry (CORS, Cache-Control, the policy's others, an ETag): the gap between it and ours is our code's, the rest is the contract's bytes on the wire:

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
