// How `npm run check:deploy` serves a build on each target's own software, on 127.0.0.1: our
// server, wrangler dev, nginx, netlify dev. Each says first whether its software is installed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { DEBIAN_MIME_TYPES, NGINX_MISSING, findNginx, startNginx } from '../support/nginx.ts';
import { netlifyMissing, startNetlifyDev } from '../support/netlify.ts';
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

const nginxMissing = () => (findNginx() ? undefined : NGINX_MISSING);

/** scripts/deploy/nginx.conf, as written but its `# ADJUST` lines, in front of our server. */
const nginxProxy: Host = {
  missing: nginxMissing,
  async start({ dist, port, work }) {
    const server = await serve({ env: { DIST_DIR: dist } });
    try {
      const upstream = server.base.replace(/^http:\/\//, '');
      const nginx = await startNginx(findNginx()!, 'nginx.conf', { dir: path.join(work, 'nginx'), port, adjust: { proxy_cache_path: (current) => current.replace(/^\S+/, `${work}/nginx/cache`), server: upstream } });
      return { stop: async () => { await nginx.stop(); await server.stop(); } };
    } catch (e) {
      await server.stop();
      throw e;
    }
  },
};

/** scripts/deploy/nginx-static.conf, as written but its `# ADJUST` lines, on the static build. */
const nginxStatic: Host = {
  missing: nginxMissing,
  async start({ dist, port, work }) {
    const nginx = await startNginx(findNginx()!, 'nginx-static.conf', { dir: path.join(work, 'nginx'), port, adjust: { root: path.join(dist, 'client'), include: DEBIAN_MIME_TYPES } });
    return { stop: nginx.stop };
  },
};

const netlify: Host = {
  missing: netlifyMissing,
  async start({ dist, port }) {
    const dev = await startNetlifyDev(path.join(dist, 'client'), port);
    return { stop: dev.stop };
  },
};

export const HOSTS: Record<TargetId, Host> = {
  node: nodeServer,
  'nginx-proxy': nginxProxy,
  cloudflare,
  'nginx-static': nginxStatic,
  netlify,
  'github-pages': { missing: () => 'GitHub Pages runs on GitHub\'s servers only', start: () => Promise.reject(new Error('not here')) },
};
