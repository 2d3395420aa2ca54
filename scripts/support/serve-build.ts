// Build a content folder and serve it, as `npm run build` and `npm run serve` do, from a script or a
// test: the tests' shared fixture build, the edge check and the benchmarks all start here. The build
// folder must be inside the project (src/config.ts distDirProblem), so callers build under
// node_modules/.cache.
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns, type StdioOptions } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SERVER_SCRIPT = 'src/server/main.ts';
const COMPILE_CACHE_PRELOAD = './scripts/support/compile-cache.mjs';

export interface BuildOptions {
  contentDir: string;
  distDir: string;
  siteUrl: string;
  /** More environment for the build: SOURCE_DATE_EPOCH, RENDER_THREADS, PROFILES_INCREMENTAL... */
  env?: Record<string, string>;
}

/** Runs scripts/build-site.ts to its end; the caller reads `status`, `stdout` and `stderr`. */
export function buildSite({ contentDir, distDir, siteUrl, env = {} }: BuildOptions): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ['scripts/build-site.ts'], {
    cwd: ROOT, encoding: 'utf8',
    env: { ...process.env, CONTENT_DIR: contentDir, DIST_DIR: distDir, SITE_URL: siteUrl, ...env },
  });
}

/**
 * The same build without blocking, so the caller can print progress while it runs (`step` in
 * cli.ts); resolves with its exit status and output when it ends.
 */
export function buildSiteAsync({ contentDir, distDir, siteUrl, env = {} }: BuildOptions): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['scripts/build-site.ts'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CONTENT_DIR: contentDir, DIST_DIR: distDir, SITE_URL: siteUrl, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d; });
  child.stderr.on('data', (d: Buffer) => { stderr += d; });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface ServeOptions {
  /** The server to run, relative to the project: ours by default (with `npm run serve`'s node flags), or scripts/bench/serve-bare.ts. */
  script?: string;
  /** Arguments after the script. */
  args?: string[];
  /** Node options before the script, such as `--expose-gc`. */
  nodeArgs?: string[];
  /** More environment: DIST_DIR for our server. HOST is 127.0.0.1 and PORT 0 (a free port). */
  env?: Record<string, string>;
  /** An IPC channel to the child (child.send / 'message'). */
  ipc?: boolean;
}

export interface RunningServer {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>`, as the server printed it. */
  base: string;
  /** Milliseconds from the spawn until the server said it listens. */
  startMs: number;
  /** Everything the server has printed so far, stdout and stderr. */
  output(): string;
  /** Resolves with the first match of `pattern` in what the server prints from now on. */
  nextOutput(pattern: RegExp): Promise<RegExpExecArray>;
  /** SIGTERM, resolved when the process has exited. */
  stop(): Promise<void>;
}

/**
 * The node flags of `npm run serve` (package.json), so that tests and benchmarks run our server as
 * operators do; without the compile cache's preload (compile-cache.mjs), a file of the project that
 * the Docker image's bundle does not hold: the environment gives the tests' processes their cache.
 */
export const SERVE_NODE_FLAGS: readonly string[] = (() => {
  const command = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { serve: string } }).scripts.serve.split(/\s+/);
  if (command[0] !== 'node' || command.at(-1) !== SERVER_SCRIPT) throw new Error(`unexpected serve script: ${command.join(' ')}`);
  return command.slice(1, -1).filter((flag, i, flags) => flag !== COMPILE_CACHE_PRELOAD && !(flag === '--import' && flags[i + 1] === COMPILE_CACHE_PRELOAD));
})();

/** Starts a server on 127.0.0.1 and a free port; resolves once it prints its address, rejects with its output when it exits before. */
export function serve({ script = SERVER_SCRIPT, args = [], nodeArgs = [], env = {}, ipc = false }: ServeOptions = {}): Promise<RunningServer> {
  if (script === SERVER_SCRIPT) nodeArgs = [...SERVE_NODE_FLAGS, ...nodeArgs];
  const started = performance.now();
  const stdio: StdioOptions = ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd: ROOT, stdio, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
  });
  let out = '';
  const waiters: { pattern: RegExp; from: number; resolve: (m: RegExpExecArray) => void }[] = [];
  const onData = (d: Buffer) => {
    out += d;
    for (const w of [...waiters]) {
      const m = w.pattern.exec(out.slice(w.from));
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const nextOutput = (pattern: RegExp) => new Promise<RegExpExecArray>((resolve) => waiters.push({ pattern, from: out.length, resolve }));

  return new Promise((resolve, reject) => {
    const early = (code: number | null) => reject(new Error(`${script} exited (${code}) before listening:\n${out}`));
    child.once('exit', early);
    nextOutput(/http:\/\/127\.0\.0\.1:\d+/).then(([base]) => {
      child.off('exit', early);
      resolve({
        child, base, startMs: performance.now() - started, nextOutput,
        output: () => out,
        stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    });
  });
}

/** A TCP port nothing listens on now, on 127.0.0.1: for a server that must know its address before it starts (a build's SITE_URL). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
