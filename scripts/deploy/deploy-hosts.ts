// How `npm run check:deploy` serves a build on each target's own software, on 127.0.0.1: our
// server, wrangler dev, nginx, netlify dev. Each says first whether its software is installed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT, serve } from '../support/serve-build.ts';
import type { TargetId } from './deploy-matrix.ts';

export interface RunningHost {
  stop(): Promise<void>;
}

export interface Host {
  /** Why the host's software cannot run here, or undefined. */
  missing(): string | undefined;
  /** Serves the build `dist` (a release link) on 127.0.0.1:`port`; `work` is a folder of its own for configs and logs. */
  start(at: { dist: string; port: number; work: string }): Promise<RunningHost>;
}

/** A child process stopped with SIGTERM (its whole group when `group`), resolved once it has exited. */
export function stopper(child: ChildProcess, group = false): () => Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return () => {
    if (child.exitCode === null && child.signalCode === null) {
      try { if (group && child.pid) process.kill(-child.pid, 'SIGTERM'); else child.kill('SIGTERM'); } catch { /* gone */ }
    }
    return exited;
  };
}

/** Resolves when `pattern` shows in the child's output; rejects with the output when it exits first. */
export function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      if (pattern.test(out)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready:\n${out.slice(-2000)}`)));
  });
}

const nodeServer: Host = {
  missing: () => undefined,
  async start({ dist, port }) {
    const server = await serve({ env: { DIST_DIR: dist, PORT: String(port) } });
    return { stop: server.stop };
  },
};

const WORKERD = path.join(ROOT, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');

const cloudflare: Host = {
  missing: () => (spawnSync(WORKERD, ['--version']).status === 0 ? undefined : `workerd (from the wrangler package) does not run on this machine`),
  async start({ dist, port }) {
    const child = spawn(process.execPath, ['scripts/deploy/preview-cloudflare.ts', '--no-build'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DIST_DIR: dist, HOST: '127.0.0.1', PORT: String(port) },
    });
    const stop = stopper(child);
    try {
      await waitFor(child, /Ready on /, 'wrangler dev');
    } catch (e) {
      await stop();
      throw e;
    }
    return { stop };
  },
};

const notYet = (what: string): Host => ({ missing: () => what, start: () => Promise.reject(new Error(what)) });

export const HOSTS: Record<TargetId, Host> = {
  node: nodeServer,
  'nginx-proxy': notYet('nginx-proxy: not wired yet'),
  cloudflare,
  'nginx-static': notYet('nginx-static: not wired yet'),
  netlify: notYet('netlify: not wired yet'),
  'github-pages': notYet('GitHub Pages runs on GitHub\'s servers only'),
};
