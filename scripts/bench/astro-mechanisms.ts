// Usage: node scripts/bench/astro-mechanisms.ts [--sizes 20000[,100000]] [--pairs 2] [--only endpoint[,collection]] [--keep]
//
// Measures the Astro mechanisms of docs/design.md against this checkout's code: each prototype of
// scripts/bench/prototypes/<name>.patch is applied to a temporary git worktree of HEAD, beside
// another of HEAD itself ("main"); both get this checkout's node_modules as hard links (nothing is
// installed). For each size it generates the content (generate-profiles.ts, seed 1), builds once
// per checkout (the first build of new code: `astro build`, which keeps the renderer), then runs
// the checkouts in alternation, the order reversed every pair: a cold build (PROFILES_INCREMENTAL=0)
// each, then one profile's displayName edited and a rebuild each over its own last build. Every
// run is `npm run build`'s command with BENCH_REPORT=1; its `BENCH {"ms","maxRssKb"}` line gives
// the time and the peak memory of all build processes. After each cold pair, the served files
// (`dist/client`) of every prototype must equal main's, byte for byte. Prints markdown tables like
// docs/design.md's: medians, every run, and the ratio to main within each pair.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { numberOption, parseCli } from '../../src/cli.ts';
import { ROOT } from '../support/serve-build.ts';
import { nodeArgsOf } from '../support/npm-scripts.ts';

const PATCHES = path.join(ROOT, 'scripts/bench/prototypes');
const SITE_URL = 'https://profiles.example.net';
// A fixed build time, so main's and a prototype's files can be compared byte for byte.
const SOURCE_DATE_EPOCH = '1768478400';

const cli = parseCli({
  name: 'astro-mechanisms',
  usage: 'Usage: node scripts/bench/astro-mechanisms.ts [--sizes 20000[,100000]] [--pairs 2] [--only endpoint[,collection]] [--keep]',
  options: {
    sizes: { type: 'string', default: '20000', value: '<n,n,...>', help: 'how many profiles to generate and build, in turn (default 20000)' },
    pairs: { type: 'string', default: '2', value: '<n>', help: 'cold and one-edit builds of each checkout, alternating; medians and each pair\'s ratio reported (default 2)' },
    only: { type: 'string', value: '<name,...>', help: 'these prototypes of scripts/bench/prototypes/ (default: every patch there)' },
    keep: { type: 'boolean', default: false, help: 'keep the temporary checkouts and content (their folder is printed)' },
  },
});
const { values } = cli;
const sizes = values.sizes.split(',').map((n) => numberOption(cli, 'sizes', n, { integer: true }));
const pairs = numberOption(cli, 'pairs', values.pairs, { integer: true });

/** The prototypes: every patch in scripts/bench/prototypes/, or those --only names. */
const prototypeNames = (): string[] => fs.readdirSync(PATCHES).filter((f) => f.endsWith('.patch')).map((f) => f.slice(0, -'.patch'.length)).sort();
const unknown = values.only?.split(',').filter((n) => !prototypeNames().includes(n)) ?? [];
if (unknown.length) cli.usageError(`--only: no scripts/bench/prototypes/${unknown[0]}.patch`);
const variants = ['main', ...prototypeNames().filter((n) => !values.only || values.only.split(',').includes(n))];

const BUILD = nodeArgsOf('build');
if (BUILD.at(-1) !== 'scripts/build-site.ts') throw new Error(`astro-mechanisms: unexpected build script: node ${BUILD.join(' ')}`);

const git = (args: string[], cwd = ROOT) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

const head = git(['rev-parse', '--short', 'HEAD']);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'astro-mechanisms-'));
const checkouts = new Map<string, string>();

/** A worktree of HEAD with the prototype applied, and node_modules as hard links of this one's (its caches left out: each checkout keeps its own). */
function makeCheckout(name: string): string {
  const dir = path.join(work, name);
  git(['worktree', 'add', '--detach', dir, 'HEAD']);
  checkouts.set(name, dir);
  if (name !== 'main') git(['apply', path.join(PATCHES, `${name}.patch`)], dir);
  fs.mkdirSync(path.join(dir, 'node_modules'));
  for (const entry of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (entry === '.cache') continue;
    const r = spawnSync('cp', ['-al', path.join(ROOT, 'node_modules', entry), path.join(dir, 'node_modules', entry)]);
    if (r.status !== 0) throw new Error(`cp -al node_modules/${entry}: ${r.stderr}`);
  }
  return dir;
}

function cleanUp(): void {
  if (values.keep) {
    console.error(`kept: ${work}`);
    return;
  }
  console.error(`removing ${work} (its releases: a minute or two)`);
  for (const dir of checkouts.values()) spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT });
  fs.rmSync(work, { recursive: true, force: true });
}
process.once('SIGINT', () => { cleanUp(); process.exit(130); });

interface Run { ms: number; rssKb: number }

/** One `npm run build` in `dir` (its command, run by this Node), returning its BENCH line. */
function build(dir: string, content: string, env: Record<string, string>): Promise<Run> {
  // Dirty pages written before the run, off its clock (as run-bench.ts does).
  spawnSync('sync');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, BUILD, {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CONTENT_DIR: content, SITE_URL, SOURCE_DATE_EPOCH, DIST_DIR: path.join(dir, 'dist-bench'), DEPLOY_TARGET: 'node', BENCH_REPORT: '1', ...env },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d; });
    child.stderr.on('data', (d: Buffer) => { out += d; });
    child.once('error', reject);
    child.once('close', (status) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH '));
      if (status !== 0 || !line) return reject(new Error(`build in ${dir} failed (${status}):\n${out.slice(-4000)}`));
      const report = JSON.parse(line.slice(6)) as { ms: number; maxRssKb: number };
      resolve({ ms: report.ms, rssKb: report.maxRssKb });
    });
  });
}

/** The first file under `a` whose bytes differ from `b`'s (or that one of them lacks), or null. */
function firstDifference(a: string, b: string): string | null {
  const r = spawnSync('diff', ['-rq', a, b], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status === 0) return null;
  return (r.stdout.split('\n')[0] || r.stderr) ?? 'differs';
}

/** Throws unless every prototype's last release holds the same files as main's, byte for byte. */
function sameFiles(when: string): void {
  for (const v of variants.slice(1)) {
    const diff = firstDifference(path.join(checkouts.get('main')!, 'dist-bench', 'client'), path.join(checkouts.get(v)!, 'dist-bench', 'client'));
    if (diff) throw new Error(`${when}: ${v}'s served files differ from main's: ${diff}`);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((p, q) => p - q);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (kb: number) => `${Math.round(kb / 1024)} MB`;
const x = (r: number) => `${r.toFixed(2)}x`;

type Kind = 'first' | 'cold' | 'edit';
const KIND_LABEL: Record<Kind, string> = { first: 'first build of the code (`astro build`, 1 run)', cold: 'cold', edit: 'one edit' };
const results = new Map<string, Run[]>(); // `${variant} ${size} ${kind}` → runs, pair by pair

try {
  const started = new Date();
  for (const v of variants) makeCheckout(v);
  console.log(`checkouts of ${head}: ${variants.join(', ')} in ${work}`);
  for (const size of sizes) {
    const content = path.join(work, `content-${size}`);
    const g = spawnSync(process.execPath, [path.join(ROOT, 'scripts/bench/generate-profiles.ts'), String(size), content], { stdio: 'inherit' });
    if (g.status !== 0) throw new Error('generate-profiles.ts failed');
    const record = (v: string, kind: Kind, run: Run) => {
      const key = `${v} ${size} ${kind}`;
      results.set(key, [...(results.get(key) ?? []), run]);
      console.log(`${size} ${kind} ${v}: ${sec(run.ms)}, ${mb(run.rssKb)}`);
    };
    for (const v of variants) record(v, 'first', await build(checkouts.get(v)!, content, { PROFILES_INCREMENTAL: '0' }));
    const edited = path.join(content, 'profiles', fs.readdirSync(path.join(content, 'profiles')).sort()[0]!);
    for (let pair = 0; pair < pairs; pair++) {
      const order = pair % 2 ? [...variants].reverse() : variants;
      for (const v of order) record(v, 'cold', await build(checkouts.get(v)!, content, { PROFILES_INCREMENTAL: '0' }));
      sameFiles(`cold build, pair ${pair + 1}`);
      fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace(/^displayName: .*$/m, `displayName: "Edited for the benchmark ${pair + 1}"`));
      for (const v of order) record(v, 'edit', await build(checkouts.get(v)!, content, { PROFILES_INCREMENTAL: '1' }));
      sameFiles(`one edit, pair ${pair + 1}`);
      for (const v of variants) {
        // The edit is in the new release's own files (a layered release holds what changed), answer and page.
        const answer = path.join(checkouts.get(v)!, 'dist-bench', 'client', 'api', 'v1', 'users', path.basename(edited, '.yaml'));
        if (!fs.readFileSync(answer, 'utf8').includes(`Edited for the benchmark ${pair + 1}`)) throw new Error(`${v}: ${answer} lacks the edit`);
      }
    }
  }
  const finished = new Date();

  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  console.log(`\n${started.toISOString().slice(0, 10)}, ${hhmm(started)}-${hhmm(finished)} UTC; HEAD ${head}; ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ` +
    `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end.`);
  for (const v of variants.slice(1)) {
    console.log(`\n| Size, build | \`main\`: time, peak | ${v}: time, peak | ${v} / \`main\` in pairs (median; each pair) |\n|---|---|---|---|`);
    for (const size of sizes) {
      for (const kind of ['cold', 'edit', 'first'] as const) {
        const m = results.get(`main ${size} ${kind}`) ?? [];
        const p = results.get(`${v} ${size} ${kind}`) ?? [];
        if (!m.length || !p.length) continue;
        const cell = (runs: Run[]) => `${sec(median(runs.map((r) => r.ms)))}, ${mb(median(runs.map((r) => r.rssKb)))}` +
          (runs.length > 1 ? ` (${runs.map((r) => sec(r.ms)).join(', ')}; ${runs.map((r) => mb(r.rssKb)).join(', ')})` : '');
        const time = m.map((r, k) => p[k]!.ms / r.ms);
        const memory = m.map((r, k) => p[k]!.rssKb / r.rssKb);
        const ratios = (rs: number[]) => `${x(median(rs))}${rs.length > 1 ? ` (${rs.map((r) => r.toFixed(2)).join(', ')})` : ''}`;
        const label = kind === 'first' ? KIND_LABEL.first : `${KIND_LABEL[kind]} (${m.length} pair${m.length > 1 ? 's' : ''})`;
        console.log(`| ${size.toLocaleString('en')}, ${label} | ${cell(m)} | ${cell(p)} | time ${ratios(time)}; memory ${ratios(memory)} |`);
      }
    }
  }
} finally {
  cleanUp();
}
