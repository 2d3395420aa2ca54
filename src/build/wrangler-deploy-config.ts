// `wrangler deploy` from the project root deploys the served release. The Cloudflare build (Astro's
// adapter, through @cloudflare/vite-plugin) writes the Worker's deploy config into the release's
// server folder and a redirect to it, `.wrangler/deploy/config.json`, which wrangler reads before
// wrangler.jsonc. The redirect names the folder the build wrote into, which is renamed when the
// release is sealed; pointing it at `<DIST_DIR>/server/wrangler.json`, through the link, makes it
// follow every switch, `npm run rollback` included.
import fs from 'node:fs';
import path from 'node:path';

export const DEPLOY_REDIRECT = path.join('.wrangler', 'deploy', 'config.json');

/** Points `<root>/.wrangler/deploy/config.json` at the deploy config of the release `distDir` serves. */
export function pointWranglerAtServedRelease(root: string, distDir: string): void {
  const redirect = path.join(root, DEPLOY_REDIRECT);
  const configPath = path.relative(path.dirname(redirect), path.join(distDir, 'server', 'wrangler.json')).split(path.sep).join('/');
  fs.mkdirSync(path.dirname(redirect), { recursive: true });
  const temp = `${redirect}.${process.pid}`;
  fs.writeFileSync(temp, `${JSON.stringify({ configPath, auxiliaryWorkers: [] })}\n`);
  fs.renameSync(temp, redirect);
}
