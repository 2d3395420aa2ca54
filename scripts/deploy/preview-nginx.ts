// Usage: npm run preview:nginx -- --recipe static|proxy [--no-build]   (CONTENT_DIR, SITE_URL, PORT, DIST_DIR from the environment)
//
// Builds the content and serves it with one of the nginx deploy recipes as written, each `# ADJUST`
// line pointed at this build, a port on 127.0.0.1 and a temp folder (scripts/support/nginx.ts):
//   static  nginx alone (scripts/deploy/nginx-static.conf) on a DEPLOY_TARGET=static build;
//   proxy   nginx as a caching proxy (scripts/deploy/nginx.conf) in front of `npm run serve`.
// For running a client or the shared conformance suite against either. Runs until SIGINT or
// SIGTERM, then stops nginx (and the server) and removes its temp folder.
import fs from 'node:fs';
import path from 'node:path';
import { parseCli, shownPath } from '../../src/cli.ts';
import { distDirFromEnv } from '../../src/config.ts';
import { DEBIAN_MIME_TYPES, NGINX_MISSING, findNginx, startNginx, type RunningNginx } from '../support/nginx.ts';
import { ROOT, buildSiteAsync, serve, type RunningServer } from '../support/serve-build.ts';

const cli = parseCli({
  name: 'preview:nginx',
  usage: 'Usage: npm run preview:nginx -- --recipe static|proxy [--no-build]   (CONTENT_DIR, SITE_URL, PORT, DIST_DIR from the environment)',
  options: {
    recipe: { type: 'string', default: 'static', help: '`static` (nginx-static.conf on a static build) or `proxy` (nginx.conf in front of the server)' },
    'no-build': { type: 'boolean', default: false, help: 'serve the last build of DIST_DIR as it is' },
  },
  env: {
    CONTENT_DIR: 'the content folder to build (default ./content)',
    SITE_URL: 'the public address every absolute URL starts with (default http://127.0.0.1:PORT)',
    PORT: 'the port nginx listens on, on 127.0.0.1 (default 8080)',
    DIST_DIR: 'the build link, as for npm run build (default ./dist; inside the project)',
  },
});

const recipe = cli.values.recipe;
if (recipe !== 'static' && recipe !== 'proxy') cli.usageError(`--recipe is \`static\` or \`proxy\`, not \`${recipe}\``);
const portText = process.env.PORT || '8080';
const port = Number(portText);
if (!Number.isInteger(port) || port < 1 || port > 65535) cli.usageError(`PORT must be a port number from 1 to 65535, not \`${portText}\``);
const siteUrl = process.env.SITE_URL || `http://127.0.0.1:${port}`;
const distDir = distDirFromEnv();
const nginxBin = findNginx();
if (!nginxBin) {
  console.error(`preview:nginx: ${NGINX_MISSING}.`);
  process.exit(1);
}

if (!cli.values['no-build']) {
  const target = recipe === 'static' ? 'static' : 'node';
  console.log(`Building ${process.env.CONTENT_DIR || './content'} (DEPLOY_TARGET=${target}, SITE_URL=${siteUrl}) ...`);
  const built = await buildSiteAsync({ contentDir: process.env.CONTENT_DIR || 'content', distDir, siteUrl, env: { DEPLOY_TARGET: target } });
  process.stdout.write(built.stdout);
  if (built.status !== 0) {
    console.error(`${built.stderr}preview:nginx: the build failed (exit code ${built.status}); nothing is served.`);
    process.exit(1);
  }
}

const dir = path.join(ROOT, 'node_modules', '.cache', 'preview-nginx', String(process.pid));
let server: RunningServer | undefined;
let nginx: RunningNginx | undefined;
let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  await nginx?.stop();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(0));

try {
  if (recipe === 'proxy') {
    server = await serve({ env: { DIST_DIR: distDir } });
    const upstream = server.base.replace(/^http:\/\//, '');
    nginx = await startNginx(nginxBin, 'nginx.conf', { dir, port, adjust: { proxy_cache_path: (current) => current.replace(/^\S+/, `${dir}/cache`), server: upstream } });
    console.log(`Serving ${shownPath(distDir)}/ with the server on ${server.base} and nginx (scripts/deploy/nginx.conf) in front on ${nginx.base} (Ctrl-C stops both) ...`);
  } else {
    const root = path.join(distDir, 'client');
    nginx = await startNginx(nginxBin, 'nginx-static.conf', { dir, port, adjust: { root, include: DEBIAN_MIME_TYPES } });
    console.log(`Serving ${shownPath(root)}/ with nginx alone (scripts/deploy/nginx-static.conf) on ${nginx.base} (Ctrl-C stops it) ...`);
  }
} catch (e) {
  console.error(`preview:nginx: ${(e as Error).message}`);
  await stop(1);
}
nginx!.child.once('exit', (code, signal) => {
  if (stopping) return;
  // Ctrl-C reaches nginx too (the terminal signals the whole group), maybe before this process: a stop, not a failure.
  if (code === 0 || signal === 'SIGINT' || signal === 'SIGTERM') return void stop(0);
  const log = nginx!.errorLog().trim();
  console.error(`preview:nginx: nginx stopped (exit code ${code}${signal ? `, ${signal}` : ''})${log ? `:\n${log}` : ''}`);
  void stop(1);
});
