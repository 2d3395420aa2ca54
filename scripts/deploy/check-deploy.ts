// Usage: npm run check:deploy [-- --target <id> ...] [-- --write-table]
//
// The deploy matrix, run: each target of scripts/deploy/deploy-matrix.ts built as docs/deploying.md
// says and served by its host's own software on 127.0.0.1 (our server, nginx, wrangler dev,
// netlify dev), then every cell of the table held to its probe (`yes` must hold, `no` must not)
// and, where ../shared/conformance exists, the shared suite run against it: the checks a target
// claims must pass, and the others must fail (else the table undersells it). Ends with
// `N passed, N failed`; exit code 1 when anything failed. A host whose software is missing fails
// its target (CI installs them all); `--allow-missing` skips it instead, saying so.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseCli } from '../../src/cli.ts';
import { ROOT, buildSiteAsync, freePort } from '../support/serve-build.ts';
import { ROWS, TABLE_END, TABLE_START, TARGETS, claimOf, getter, matrixTable, type Target } from './deploy-matrix.ts';
import { HOSTS, type RunningHost } from './deploy-hosts.ts';

const cli = parseCli({
  name: 'check:deploy',
  usage: 'Usage: npm run check:deploy [-- --target <id> ...] [-- --write-table]',
  options: {
    target: { type: 'string', multiple: true, value: '<id>', help: `only these targets (${TARGETS.map((t) => t.id).join(', ')}); default all` },
    'write-table': { type: 'boolean', default: false, help: 'write the table into docs/deploying.md from deploy-matrix.ts and exit' },
    'allow-missing': { type: 'boolean', default: false, help: 'skip a target whose host software is not installed, instead of failing it' },
  },
});

const DOCS = path.join(ROOT, 'docs', 'deploying.md');
if (cli.values['write-table']) {
  const text = fs.readFileSync(DOCS, 'utf8');
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    console.error(`check:deploy: docs/deploying.md has no ${TABLE_START} … ${TABLE_END} markers`);
    process.exit(1);
  }
  fs.writeFileSync(DOCS, `${text.slice(0, start + TABLE_START.length)}\n${matrixTable()}\n${text.slice(end)}`);
  console.log('docs/deploying.md: the deploy matrix table is written.');
  process.exit(0);
}

const wanted = cli.values.target ?? TARGETS.map((t) => t.id);
for (const id of wanted) if (!TARGETS.some((t) => t.id === id)) cli.usageError(`no target \`${id}\``);

const CONFORMANCE = path.join(ROOT, '..', 'shared', 'conformance');
const hasConformance = fs.existsSync(path.join(CONFORMANCE, 'run.mjs'));
// The conformance fixture where it exists (its checks need it), else the tests' own; the probes hold on both.
const CONTENT = hasConformance ? path.join(CONFORMANCE, 'fixture', 'content') : path.join(ROOT, 'test', 'fixtures', 'content');
const CUSTOM_DOMAIN = 'alice.example.com';
const WORK = path.join(ROOT, 'node_modules', '.cache', 'deploy-matrix');

let passed = 0;
let failed = 0;
const ok = (what: string) => { passed++; console.log(`ok   ${what}`); };
const fail = (what: string, why: string) => { failed++; console.log(`FAIL ${what}: ${why}`); };


/** The shared suite against `base`: each check's name and whether it passed. */
async function conformance(base: string): Promise<Map<string, boolean>> {
  // The names from the suite itself: a failure line is `FAIL <name>: <why>`, and names hold `: ` too.
  const { checks } = await import(path.join(CONFORMANCE, 'checks.mjs')) as { checks: [string, unknown][] };
  const names = checks.map(([name]) => name).sort((a, b) => b.length - a.length);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(CONFORMANCE, 'run.mjs'), '--base', base], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => { text += d; });
    child.once('error', reject);
    child.once('close', () => resolve(text));
  });
  const results = new Map<string, boolean>(names.map((n) => [n, false]));
  for (const line of out.split('\n')) {
    const pass = line.startsWith('ok   ');
    if (!pass && !line.startsWith('FAIL ')) continue;
    const name = names.find((n) => line.slice(5).startsWith(n));
    if (name) results.set(name, pass);
  }
  return results;
}

async function checkTarget(target: Target): Promise<void> {
  const host = HOSTS[target.id];
  const missing = host.missing();
  if (missing) {
    if (cli.values['allow-missing']) { console.log(`skip ${target.id}: ${missing}`); return; }
    fail(target.id, `${missing} (CI installs it; --allow-missing skips)`);
    return;
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dist = path.join(WORK, target.id, 'dist');
  fs.rmSync(path.dirname(dist), { recursive: true, force: true });
  const env = { DEPLOY_TARGET: target.build, CLOUDFLARE_ASSET_LIMIT: '', ...target.noCodings && { PRECOMPRESS: '0' } };
  console.log(`# ${target.id}: ${Object.entries(env).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join(' ')}, served by ${target.servedBy}, on ${base}`);
  const built = await buildSiteAsync({ contentDir: CONTENT, distDir: dist, siteUrl: base, env });
  if (built.status !== 0) { fail(`${target.id} build`, built.stderr.trim().split('\n').slice(-3).join(' ')); return; }
  let running: RunningHost | undefined;
  try {
    running = await host.start({ dist, port, work: path.dirname(dist) });
    const get = getter(base);
    for (const row of ROWS) {
      const cell = row.cells[target.id];
      const claim = claimOf(cell);
      if (claim === undefined) continue;
      let wrong: string | undefined;
      try {
        wrong = await row.probe(get, { base, customDomain: CUSTOM_DOMAIN });
      } catch (e) {
        wrong = (e as Error).message;
      }
      const what = `${target.id}: ${row.feature} — ${cell}`;
      if (claim && wrong) fail(what, wrong);
      else if (!claim && !wrong) fail(what, 'it works: the table says no');
      else ok(what);
    }
    if (hasConformance) {
      const results = await conformance(base);
      const claimed = target.conformance;
      for (const [name, pass] of results) {
        const expected = claimed === 'all' || claimed.includes(name);
        if (pass === expected) ok(`${target.id}: conformance "${name}" ${pass ? 'passes' : 'fails, as the matrix says'}`);
        else fail(`${target.id}: conformance "${name}"`, pass ? 'passes, but the matrix does not claim it' : 'fails');
      }
    }
  } catch (e) {
    fail(`${target.id}: serve`, (e as Error).message.split('\n').slice(0, 6).join(' '));
  } finally {
    await running?.stop();
    fs.rmSync(path.dirname(dist), { recursive: true, force: true });
  }
}

// The docs say what the matrix says.
const docs = fs.readFileSync(DOCS, 'utf8');
if (docs.includes(`${TABLE_START}\n${matrixTable()}\n${TABLE_END}`)) ok('docs/deploying.md holds the matrix table');
else fail('docs/deploying.md holds the matrix table', 'it differs: npm run check:deploy -- --write-table');

for (const target of TARGETS) {
  if (!wanted.includes(target.id)) continue;
  if (!target.runs) {
    console.log(`# ${target.id}: ${target.servedBy}`);
    continue;
  }
  await checkTarget(target);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
