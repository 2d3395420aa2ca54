// Usage: npm start [-- --no-watch]    (the environment of npm run build and npm run serve)
//
// Builds the content (npm run build), then serves it (npm run serve): each runs as its npm script
// does, with the Node flags package.json gives it, so the two stay the one place they are set.
// A failed first build serves nothing and exits with the build's code. Ctrl-C reaches the server
// from the terminal; SIGTERM and SIGHUP sent to this process are passed on to it.
//
// While it serves it watches the content folder and builds again after each change (an edit, a
// `git pull`), once the folder has been quiet for DEBOUNCE_MS: the build switches the release and
// the server picks the new one up by itself. Changes during a build queue one more build. A failed
// rebuild changes nothing served; what it printed on stderr is shown once, and a rebuild failing
// the same way again says so in one line. A rebuild refused by another build's lock tries again
// every LOCKED_RETRY_MS until that build ends.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from '../src/cli.ts';
import { contentDirFromEnv } from '../src/content/load.ts';

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
const scripts = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The Node arguments of `npm run <name>` (`node <flags> <file>`), for this same Node to run. */
function nodeArgs(command: string | undefined): string[] {
  const words = command?.split(/\s+/) ?? [];
  if (words[0] !== 'node' || !words.at(-1)?.endsWith('.ts') || words.some((w) => /[&|;'"$<>]/.test(w))) {
    throw new Error(`package.json: expected \`node <flags> <file>.ts\`, not \`${command}\``);
  }
  return words.slice(1);
}

/** The children running now, which SIGTERM and SIGHUP sent to this process reach. */
const children = new Set<ChildProcess>();
const pass = (signal: NodeJS.Signals) => { for (const child of children) child.kill(signal); };
process.on('SIGTERM', pass).on('SIGHUP', pass);
// Ctrl-C is sent to the whole process group, the children included: this process only waits for them.
process.on('SIGINT', () => {});

interface Ended { code: number; stdout: string; stderr: string }

/** Runs `npm run <name>`'s command in this environment; `quiet`: its output is captured, not shown. */
function run(name: string, { quiet = false } = {}): Promise<Ended> {
  const child = spawn(process.execPath, nodeArgs(scripts[name]), { cwd: root, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => { stdout += d; });
  child.stderr?.on('data', (d: Buffer) => { stderr += d; });
  return new Promise((resolve) => child.once('close', (code, signal) => {
    children.delete(child);
    // Ended by a signal: the shell's code for it.
    resolve({ code: code ?? 128 + os.constants.signals[signal!], stdout, stderr });
  }));
}

/** Whether a change to `file` (relative to the content folder) can change a build: hidden files and `.git` are never read (content-tree.ts). */
function changesBuild(file: string | null): boolean {
  if (file === null) return true;
  const parts = file.split(path.sep);
  return !parts.includes('.git') && !parts.at(-1)!.startsWith('.');
}

/**
 * Watches `dir` and runs `build` after each change, debounced; one build at a time, and changes
 * during a build queue one more. `build` resolves false when it could not run (another build held
 * the lock): its changes are built again later. Returns the function that stops watching.
 */
function rebuildOnChange(dir: string, build: (changed: string[]) => Promise<boolean>): () => void {
  let changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let building = false;
  let stopped = false;
  const startBuild = async () => {
    timer = undefined;
    if (building || stopped || !changed.size) return;
    building = true;
    const files = [...changed].sort();
    changed = new Set();
    let ran = true;
    try {
      ran = await build(files);
    } finally {
      building = false;
      if (!ran) {
        for (const f of files) changed.add(f);
        clearTimeout(timer);
        timer = setTimeout(startBuild, LOCKED_RETRY_MS);
      // What changed while it ran waits its own quiet time, as any other change.
      } else if (changed.size && !timer) startBuild();
    }
  };
  const watcher = fs.watch(dir, { recursive: true }, (_event, file) => {
    if (!changesBuild(file)) return;
    changed.add(file ?? '.');
    clearTimeout(timer);
    timer = setTimeout(startBuild, DEBOUNCE_MS);
  });
  watcher.on('error', (e) => console.error(`start: stopped watching ${dir}: ${e.message}; restart to watch again.`));
  return () => {
    stopped = true;
    clearTimeout(timer);
    watcher.close();
  };
}

/** A build's stderr without what differs between two runs of the same failure: the release ids. */
const sameFailure = (stderr: string) => stderr.replace(/\b\d{6}-\d{8}T\d{6}Z\b/g, '<release>');

const first = await run('build');
if (first.code !== 0) {
  process.exitCode = first.code;
} else {
  const contentDir = contentDirFromEnv();
  let lastStderr = '';
  const rebuild = async (files: string[]) => {
    // Named by count only: an editor or `git pull` writes through temporary files, whose names would mislead.
    // Not again for each try while another build holds the lock.
    if (!lastStderr.startsWith('locked: ')) console.log(`start: ${files.length === 1 ? 'a file' : `${files.length} files`} changed in ${contentDir}: building ...`);
    const r = await run('build', { quiet: true });
    if (r.code === EX_TEMPFAIL) {
      const said = `locked: ${r.stderr}`;
      if (said !== lastStderr) console.error(`${r.stderr.trimEnd()}\nstart: trying again every ${LOCKED_RETRY_MS / 1000} s until that build ends.`);
      lastStderr = said;
      return false;
    }
    const said = sameFailure(r.stderr);
    // Warnings and problems are shown when they differ from the last build's, so a rebuild failing the same way again is one line.
    if (r.stderr && said !== lastStderr) process.stderr.write(r.stderr);
    if (r.code === 0) console.log(r.stdout.trimEnd().split('\n').findLast((l) => l.startsWith('Built ')) ?? 'start: built.');
    else console.error(said === lastStderr ? `start: the build failed as before (exit code ${r.code}); the last good release is still served.` : `start: the build failed (exit code ${r.code}); the last good release is still served.`);
    lastStderr = said;
    return true;
  };
  const stopWatching = cli.values['no-watch'] ? () => {} : rebuildOnChange(contentDir, rebuild);
  if (!cli.values['no-watch']) console.log(`start: watching ${contentDir}; a change is built and served by itself (--no-watch: off).`);
  const served = await run('serve');
  stopWatching();
  process.exitCode = served.code;
}
