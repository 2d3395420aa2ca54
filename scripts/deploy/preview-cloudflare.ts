// Usage: npm run preview:cloudflare [-- --no-build]   (CONTENT_DIR, SITE_URL, HOST, PORT, DIST_DIR from the environment)
//
// Builds the content for Cloudflare Workers (`DEPLOY_TARGET=cloudflare npm run build`) and serves
// that build with `wrangler dev`: the Worker and the asset server in workerd, on this machine, as
// `wrangler deploy` would run them. No Cloudflare account and no network: wrangler's metrics, its
// update check and miniflare's download of the `Request.cf` object are turned off. Runs until
// SIGINT or SIGTERM, which it passes to wrangler, and exits once wrangler (and workerd) have.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli, shownPath } from '../../src/cli.ts';
import { DEFAULT_SITE_URL, distDirFromEnv } from '../../src/config.ts';
import { nodeArgsOf } from '../support/npm-scripts.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const cli = parseCli({
  name: 'preview:cloudflare',
  usage: 'Usage: npm run preview:cloudflare [-- --no-build]   (CONTENT_DIR, SITE_URL, HOST, PORT, DIST_DIR from the environment)',
  options: { 'no-build': { type: 'boolean', default: false, help: 'serve the last Cloudflare build of DIST_DIR as it is' } },
  env: {
    CONTENT_DIR: 'the content folder to build (default ./content)',
    SITE_URL: `the public address every absolute URL starts with (default http://HOST:PORT; npm run build's is ${DEFAULT_SITE_URL})`,
    HOST: 'the address wrangler dev listens on (default 127.0.0.1)',
    PORT: 'the port wrangler dev listens on (default 8787)',
    DIST_DIR: 'the build link, as for npm run build (default ./dist; inside the project)',
  },
});

const host = process.env.HOST || '127.0.0.1';
const portText = process.env.PORT || '8787';
const port = Number(portText);
if (!Number.isInteger(port) || port < 1 || port > 65535) cli.usageError(`PORT must be a port number from 1 to 65535, not \`${portText}\``);
const siteUrl = process.env.SITE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
const distDir = distDirFromEnv();
const deployConfig = path.join(distDir, 'server', 'wrangler.json');

/** The running child (the build, then wrangler); a signal is passed to it, and we exit when it does. */
let child: ChildProcess | undefined;
let stopping = false;
/** Wrangler runs in a process group of its own: workerd is its child, and must not outlive it. */
const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try { process.kill(-pid, signal); } catch { /* the group is gone */ }
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!child?.pid) process.exit(130);
    if (stopping) return;
    stopping = true;
    const { pid } = child;
    child.kill(signal);
    // Wrangler stops workerd itself within a second; the group is signalled only if it has not.
    setTimeout(() => signalGroup(pid, 'SIGTERM'), 5000).unref();
    setTimeout(() => signalGroup(pid, 'SIGKILL'), 10000).unref();
  });
}

function run(args: string[], env: NodeJS.ProcessEnv, { group = false } = {}): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const started = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], env, detached: group });
    child = started;
    started.once('error', reject);
    started.once('exit', (code, signal) => {
      child = undefined;
      // Anything wrangler left behind (workerd, esbuild) goes with it.
      if (group && started.pid) signalGroup(started.pid, 'SIGTERM');
      resolve(signal ? null : code);
    });
  });
}

if (!cli.values['no-build']) {
  console.log(`Building ${process.env.CONTENT_DIR || './content'} for Cloudflare (SITE_URL=${siteUrl}) ...`);
  const status = await run(nodeArgsOf('build'), {
    ...process.env, DEPLOY_TARGET: 'cloudflare', SITE_URL: siteUrl,
  });
  if (stopping) process.exit(0);
  if (status !== 0) {
    console.error(`preview:cloudflare: the build failed (exit code ${status}); nothing is served.`);
    process.exit(1);
  }
}
if (!fs.existsSync(deployConfig)) {
  console.error(`preview:cloudflare: ${shownPath(deployConfig)} is missing: ${shownPath(distDir)}/ is not a Cloudflare build.`);
  console.error('    hint: run without --no-build, or `DEPLOY_TARGET=cloudflare npm run build` first');
  process.exit(1);
}

console.log(`Serving ${shownPath(distDir)}/ with wrangler dev on http://${host}:${port} (Ctrl-C stops it) ...`);
// wrangler's CLI itself, not its bin/wrangler.js, which re-spawns it and exits on a signal at once,
// leaving workerd running.
const status = await run([
  '--no-warnings', path.join(ROOT, 'node_modules', 'wrangler', 'wrangler-dist', 'cli.js'), 'dev',
  '--config', deployConfig, '--ip', host, '--port', String(port),
  '--local', '--show-interactive-dev-session=false', '--live-reload=false',
], {
  ...process.env,
  // Offline and quiet: no usage metrics, no update check (it runs with the banner), no download
  // of the `Request.cf` object from workers.cloudflare.com (a placeholder is used).
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
}, { group: true });
if (stopping) process.exit(0);
console.error(`preview:cloudflare: wrangler dev stopped (exit code ${status}).`);
process.exit(status === 0 ? 0 : 1);
