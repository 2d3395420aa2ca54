// Usage: npm start [-- --no-watch]    (the environment of npm run build and npm run serve)
//
// Builds the content (npm run build), then serves it (npm run serve): each runs as its npm script
// does, with the Node flags package.json gives it, so the two stay the one place they are set.
// A failed first build exits with the build's code when no release was built before; with one (an
// edit broke the content since), it serves that one and watches, so the fix is built and served
// as any edit is. Ctrl-C reaches the server
// from the terminal; SIGTERM and SIGHUP sent to this process are passed on to it.
//
// It watches the content folder (from before the first build) and builds again after each change (an edit, a
// `git pull`), once the folder has been quiet for DEBOUNCE_MS: the build switches the release and
// the server picks the new one up by itself. Rebuilds run in one builder process that stays between
// them (src/build/rebuilds.ts). Changes during a build queue one more build. A failed
// rebuild changes nothing served; what it printed on stderr is shown once, and a rebuild failing
// the same way again says so in one line. A rebuild refused by another build's lock tries again
// every LOCKED_RETRY_MS until that build ends.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from '../src/cli.ts';
import { imageTypeOf } from '../src/api/release-files.ts';
import { contentDirFromEnv } from '../src/content/load.ts';
import { distDirFromEnv } from '../src/config.ts';
import { servedRelease } from '../src/release/releases.ts';
import { Builder, spawnBuilder, type Rebuilt } from '../src/build/rebuilds.ts';
import { watchTree } from '../src/build/watch-tree.ts';
import { nodeArgsOf } from './support/npm-scripts.ts';

const cli = parseCli({
  name: 'start',
  usage: 'Usage: npm start [-- --no-watch]    (builds, serves, and builds again when the content changes)',
  options: {
    'no-watch': { type: 'boolean', help: 'build once and serve; do not watch the content folder for changes' },
  },
  env: {
    CONTENT_DIR: 'the content folder to build and watch (default ./content); npm run build -- --help lists the rest',
    SITE_URL: 'the public address every absolute URL starts with',
    DIST_DIR: 'where the build goes and what is served (default ./dist)',
    HOST: 'the address to listen on (default localhost); npm run serve -- --help lists the rest',
    PORT: 'the port (default 4321)',
  },
});

/** How long the content folder must be quiet before a rebuild: a `git pull` writes its files within this. */
const DEBOUNCE_MS = 300;
/** How soon a rebuild refused by another build's lock (exit code 75) tries again. */
const LOCKED_RETRY_MS = 2_000;
const EX_TEMPFAIL = 75;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The children running now, which SIGTERM and SIGHUP sent to this process reach. */
const children = new Set<ChildProcess>();
/**
 * Rebuilds run in one process that stays (src/build/rebuilds.ts): Node, the code and the served
 * release's record are loaded while no edit waits, not by each rebuild. Started after the first build.
 */
let builder: Builder | undefined;
const pass = (signal: NodeJS.Signals) => {
  for (const child of children) child.kill(signal);
  builder?.child?.kill(signal);
};
process.on('SIGTERM', pass).on('SIGHUP', pass);
// npm killed (its process, not the group) leaves this one running with its server and watcher, and
// the next `npm start` finds the port taken: once orphaned, stop as SIGTERM would.
const startedBy = process.ppid;
setInterval(() => {
  if (process.ppid === startedBy) return;
  pass('SIGTERM');
  process.exitCode = 143;
}, 1_000).unref();
// Ctrl-C is sent to the whole process group, the children included: this process only waits for them.
process.on('SIGINT', () => {});

/** Runs `npm run <name>`'s command in this environment, its output shown; resolves with its exit code. */
function run(name: string): Promise<number> {
  // The server gets a channel it ends with (src/server/main.ts): this process killed, the server goes too.
  const child = spawn(process.execPath, nodeArgsOf(name, root), { cwd: root, stdio: name === 'serve' ? ['inherit', 'inherit', 'inherit', 'ipc'] : 'inherit' });
  children.add(child);
  return new Promise((resolve) => child.once('close', (code, signal) => {
    children.delete(child);
    // Ended by a signal: the shell's code for it.
    resolve(code ?? 128 + os.constants.signals[signal!]);
  }));
}

/** Whether a change to `file` (relative to the content folder) can change a build: hidden files and `.git` are never read (content-tree.ts). */
function changesBuild(file: string | null): boolean {
  if (file === null) return true;
  const parts = file.split(path.sep);
  return !parts.includes('.git') && !parts.at(-1)!.startsWith('.');
}

/** How a rebuild ended: `built` (exit code 0), `failed`, or `locked` (another build held the lock: it runs again later). */
type Outcome = 'built' | 'failed' | 'locked';

/**
 * Watches `dir` and runs `build` after each change, debounced, once `start` is called; one build at
 * a time, and changes during a build queue one more. Watching begins at once, before the first
 * build, and each build is given every file changed since the last good build began (that one may
 * have read a file before or after its change), so it need look at no other profile
 * (scripts/build-site.ts checks the rest afterwards). A failed build's files stay listed.
 */
function rebuildOnChange(dir: string, build: (changed: readonly string[]) => Promise<Outcome>): { start(): void; stop(): void } {
  /** Files changed since the last good build began. */
  let sinceGood = new Set<string>();
  /** Files changed since the running build began. */
  let sinceThis = new Set<string>();
  /** Whether a change is not built yet. */
  let pending = false;
  let timer: NodeJS.Timeout | undefined;
  let building = false;
  let started = false;
  let stopped = false;
  const startBuild = async () => {
    timer = undefined;
    if (building || stopped || !started || !pending) return;
    building = true;
    pending = false;
    sinceThis = new Set();
    let outcome: Outcome = 'built';
    try {
      outcome = await build([...sinceGood].sort());
    } finally {
      building = false;
      if (outcome === 'built') sinceGood = sinceThis;
      if (outcome === 'locked') {
        pending = true;
        clearTimeout(timer);
        timer = setTimeout(startBuild, LOCKED_RETRY_MS);
      // What changed while it ran waits its own quiet time, as any other change.
      } else if (pending && !timer) startBuild();
    }
  };
  // Hidden folders (`.git`) are not watched at all: a `git commit` writes many files there.
  const watcher = watchTree(dir, (file) => {
    if (!changesBuild(file)) return;
    sinceGood.add(file ?? '.');
    sinceThis.add(file ?? '.');
    pending = true;
    if (!started) return;
    clearTimeout(timer);
    timer = setTimeout(startBuild, DEBOUNCE_MS);
  }, (folder) => path.basename(folder).startsWith('.'), (e) => console.error(`start: stopped watching ${dir}: ${e.message}; restart to watch again.`));
  return {
    start() {
      started = true;
      // Changes during the first build are built now.
      if (pending) timer = setTimeout(startBuild, DEBOUNCE_MS);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      watcher.close();
    },
  };
}

/** The most changed files a rebuild is told of (CHANGED_FILES); past it, it looks at every file (an edit build reads every profile past 1,000 anyway). */
const MAX_LISTED = 1_000;

/** The summary line of a build's output (the last, when a check built again after it). */
const builtLine = (stdout: string) => stdout.trimEnd().split('\n').findLast((l) => l.startsWith('Built '));

/** A build's stderr without what differs between two runs of the same failure: the release ids. */
const sameFailure = (stderr: string) => stderr.replace(/\b\d{6}-\d{8}T\d{6}Z\b/g, '<release>');

const contentDir = contentDirFromEnv();
const distDir = distDirFromEnv();
// Watching begins before the first build, so a change while it runs is built after it.
const watching = cli.values['no-watch'] ? undefined : rebuildOnChange(contentDir, rebuild);
const first = await run('build');
const { CHANGED_FILES: _files, CHANGED_SINCE: _since, BUILD_IF_CHANGED: _if, ...builderEnv } = process.env;
/** The release served after the last good build: the one the changed files are listed since. */
let since = servedRelease(distDir);
// The check after a rebuild found a change the watcher did not report, and built it (or failed):
// the files listed since the rebuild began are still every change since that check began.
const checked = (r: Rebuilt) => {
  if (r.stderr) process.stderr.write(r.stderr);
  const built = builtLine(r.stdout);
  if (r.code === 0 && built) console.log(`start: a change the watcher did not report was found and built.\n${built}`);
  else console.error(`start: the check after the last build failed (exit code ${r.code}); the last good release is still served.`);
  since = servedRelease(distDir);
};
// Served though the first build failed: the release a build made before (a fix is then built as any edit).
const servingOld = first !== 0 && watching !== undefined && since !== undefined;
// After a failed first build, every file changed since that release is unknown: the first rebuild looks at all of them.
if (servingOld) since = undefined;
// The builder waits between edits, holding the served release's record: unlike a one-off build it
// keeps V8's memory reducer, which gives back what an edit left while it waits (docs/scale.md).
const builderArgs = nodeArgsOf('build', root).filter((a) => a !== '--no-memory-reducer');
if (watching && (first === 0 || servingOld)) builder = new Builder(spawnBuilder(process.execPath, builderArgs, root, builderEnv), checked);
let lastStderr = '';
async function rebuild(files: readonly string[]): Promise<Outcome> {
  // Named by count only: an editor or `git pull` writes through temporary files, whose names would mislead.
  // Not again for each try while another build holds the lock.
  // An editor's or `sed -i`'s temporary file, gone by now, is not counted: a removed profile or image is.
  const counted = files.filter((f) => fs.existsSync(path.join(contentDir, f)) || /\.ya?ml$/.test(f) || imageTypeOf(path.basename(f))).length || files.length;
  if (!lastStderr.startsWith('locked: ')) console.log(`start: ${counted === 1 ? 'a file' : `${counted} files`} changed in ${contentDir}: building ...`);
  const listed: Record<string, string> = since && files.length <= MAX_LISTED ? { CHANGED_FILES: files.join('\n'), CHANGED_SINCE: since } : {};
  const r = await builder!.build(listed);
  if (r.code === EX_TEMPFAIL) {
    const said = `locked: ${r.stderr}`;
    if (said !== lastStderr) console.error(`${r.stderr.trimEnd()}\nstart: trying again every ${LOCKED_RETRY_MS / 1000} s until that build ends.`);
    lastStderr = said;
    return 'locked';
  }
  const said = sameFailure(r.stderr);
  // Warnings and problems are shown when they differ from the last build's, so a rebuild failing the same way again is one line.
  if (r.stderr && said !== lastStderr) process.stderr.write(r.stderr);
  if (r.code === 0) console.log(builtLine(r.stdout) ?? 'start: built.');
  else console.error(said === lastStderr ? `start: the build failed as before (exit code ${r.code}); the last good release is still served.` : `start: the build failed (exit code ${r.code}); the last good release is still served.`);
  lastStderr = said;
  if (r.code !== 0) return 'failed';
  since = servedRelease(distDir);
  return 'built';
}

if (first !== 0 && !servingOld) {
  watching?.stop();
  process.exitCode = first;
} else {
  if (servingOld) console.error(`start: the build failed (exit code ${first}): serving the release built before, ${servedRelease(distDir)}, until a change builds.`);
  watching?.start();
  if (watching) console.log(`start: watching ${contentDir}; a change is built and served by itself (--no-watch: off).`);
  const served = await run('serve');
  watching?.stop();
  builder?.stop();
  process.exitCode = served;
}
