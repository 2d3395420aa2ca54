// Runs one of the nginx deploy recipes (scripts/deploy/nginx*.conf) on this machine, as written, with
// each `# ADJUST` line pointed at a temp folder and a free port on 127.0.0.1: what operators copy is
// what `npm run check:edge` and the nginx tests run. Used by scripts and tests alike.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT, freePort } from './serve-build.ts';


export const RECIPES_DIR = path.join(ROOT, 'scripts', 'deploy');
/** Debian's list of types by extension, which the static recipe includes. */
export const DEBIAN_MIME_TYPES = '/etc/nginx/mime.types';
export const NGINX_MISSING = 'nginx is not installed (Debian/Ubuntu: `apt-get install -y nginx-light`)';

/** The nginx binary on the PATH or in the usual sbin folders, or undefined. */
export function findNginx(): string | undefined {
  return ['nginx', '/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((bin) => !spawnSync(bin, ['-v']).error);
}


/** The value for one `# ADJUST` directive (`root`, `proxy_cache_path`...) given its line's current text after the name. */
export type Adjust = Record<string, string | ((current: string) => string)>;

/**
 * `recipe` with every `# ADJUST` line set for a run in `dir` on `port`: `pid`, `error_log`,
 * `access_log` and `listen` always, the other directives from `adjust` (the directive's arguments,
 * without `;`). Fails when an ADJUST line is left unset or an `adjust` entry matches no line, so a
 * recipe and its runners cannot drift apart.
 */
export function localRecipe(recipe: string, { dir, port, adjust = {} }: { dir: string; port: number; adjust?: Adjust }): string {
  const all: Adjust = {
    pid: `${dir}/nginx.pid`,
    error_log: `${dir}/error.log warn`,
    access_log: `${dir}/access.log combined`,
    listen: `127.0.0.1:${port}`,
    ...adjust,
  };
  const used = new Set<string>();
  const lines = recipe.split('\n').map((line) => {
    if (!line.includes('# ADJUST')) return line;
    const m = /^(\s*)([a-z_]+)\s+(.*?);\s*# ADJUST/.exec(line);
    const value = m && all[m[2]!];
    if (!m || value === undefined) throw new Error(`an # ADJUST line nothing sets: ${line.trim()}`);
    used.add(m[2]!);
    return `${m[1]}${m[2]} ${typeof value === 'function' ? value(m[3]!) : value};`;
  });
  const unused = Object.keys(all).filter((k) => !used.has(k) && k in adjust);
  if (unused.length) throw new Error(`no # ADJUST line for ${unused.join(', ')}`);
  // Single process, in the foreground; temp files in `dir` (Debian's defaults are under /var/lib/nginx).
  // As root, workers would run as `nobody` and could not read or write our folders.
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `    ${t}_temp_path ${dir}/${t};`).join('\n');
  const conf = lines.join('\n')
    .replace(/^worker_processes .*$/m, 'worker_processes 1;')
    .replace(/^http \{$/m, `http {\n${temp}`);
  return `daemon off;\n${process.getuid?.() === 0 ? 'user root root;\n' : ''}${conf}`;
}

export interface RunningNginx {
  /** `http://127.0.0.1:<port>`. */
  base: string;
  port: number;
  /** The config nginx runs, as written to `dir`. */
  conf: string;
  child: ChildProcess;
  errorLog(): string;
  /** Stops nginx (SIGQUIT: finish what is under way) and resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts nginx with the recipe `name` (a file of scripts/deploy) made local by `localRecipe`, in
 * `dir` (created), and resolves once it accepts connections. `nginx -t` runs first, so a broken
 * recipe fails with nginx's own message.
 */
export async function startNginx(bin: string, name: string, { dir, adjust = {}, port }: { dir: string; adjust?: Adjust; port?: number }): Promise<RunningNginx> {
  fs.mkdirSync(dir, { recursive: true });
  const listenPort = port ?? await freePort();
  const conf = localRecipe(fs.readFileSync(path.join(RECIPES_DIR, name), 'utf8'), { dir, port: listenPort, adjust });
  const file = path.join(dir, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const args = ['-p', dir, '-c', file, '-e', path.join(dir, 'error.log')];
  const test = spawnSync(bin, [...args, '-t'], { encoding: 'utf8' });
  if (test.status !== 0) throw new Error(`nginx -t refused ${name} (made local in ${file}):\n${test.stderr}`);
  const child = spawn(bin, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const errorLog = () => (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}):\n${errorLog()}`);
    // A connection, not a request: nothing is cached or logged before the caller's first request.
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(listenPort, '127.0.0.1', () => { socket.destroy(); resolve(true); }).once('error', () => resolve(false));
    });
    if (up) break;
    if (i > 100) { child.kill('SIGTERM'); throw new Error(`nginx did not listen on ${listenPort} within 10 s:\n${errorLog()}`); }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base: `http://127.0.0.1:${listenPort}`, port: listenPort, conf, child, errorLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}
