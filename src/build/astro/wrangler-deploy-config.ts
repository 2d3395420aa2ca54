// `wrangler deploy` from the project root deploys the served release. The Cloudflare build (Astro's
// adapter, through @cloudflare/vite-plugin) writes the Worker's deploy config into the release's
// server folder and a redirect to it, `.wrangler/deploy/config.json`, which wrangler reads before
// wrangler.jsonc. The redirect names the folder the build wrote into, which is renamed when the
// release is sealed; pointing it at `<DIST_DIR>/server/wrangler.json`, through the link, makes it
// follow every switch, `npm run rollback` included. The redirect's format is the plugin's, not
// Astro's public API: its fallback (ASTRO_FALLBACK=wrangler-redirect) removes it and names
// `wrangler deploy --config`, which any wrangler reads.
import fs from 'node:fs';
import path from 'node:path';
import { astroFallback } from './fallbacks.ts';

export const DEPLOY_REDIRECT = path.join('.wrangler', 'deploy', 'config.json');

/**
 * Points `<root>/.wrangler/deploy/config.json` at the deploy config of the release `distDir`
 * serves; under the fallback, removes it instead. Returns the command that deploys the served release.
 */
export function pointWranglerAtServedRelease(root: string, distDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const redirect = path.join(root, DEPLOY_REDIRECT);
  const deployConfig = path.join(distDir, 'server', 'wrangler.json');
  if (astroFallback('wrangler-redirect', env)) {
    // A redirect left naming the sealed build folder would deploy nothing, or an older release.
    fs.rmSync(redirect, { force: true });
    return `npx wrangler deploy --config ${path.relative(root, deployConfig).split(path.sep).join('/')}`;
  }
  const configPath = path.relative(path.dirname(redirect), deployConfig).split(path.sep).join('/');
  writeRedirect(redirect, `${JSON.stringify({ configPath, auxiliaryWorkers: [] })}\n`);
  return 'npx wrangler deploy';
}

/** Replaces the redirect whole (written beside it, then renamed), so wrangler never reads half of one. */
function writeRedirect(redirect: string, text: string | Buffer): void {
  fs.mkdirSync(path.dirname(redirect), { recursive: true });
  const temp = `${redirect}.${process.pid}`;
  fs.writeFileSync(temp, text);
  fs.renameSync(temp, redirect);
}

/**
 * Whether the redirect at `redirect` names a deploy config that exists outside the renderers'
 * scratch folders: one left by a compile that was killed names its scratch folder, which is gone
 * (or, if the whole build was killed, still there, holding a Worker built from no profiles).
 */
function redirectSound(redirect: string, text: Buffer): boolean {
  try {
    const target = path.resolve(path.dirname(redirect), (JSON.parse(text.toString()) as { configPath: string }).configPath);
    return !/\.tmp(\/|\\)/.test(target) && fs.existsSync(target);
  } catch {
    return false;
  }
}

/**
 * Puts right a redirect a killed build left naming a compile's scratch folder: at the release
 * `distDir` serves, where there is one, else none. A sound redirect is left as it is (it may name
 * another DIST_DIR's release). Returns the redirect's bytes as they now are.
 */
export function repairWranglerRedirect(root: string, distDir: string, env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  const redirect = path.join(root, DEPLOY_REDIRECT);
  let text: Buffer;
  try { text = fs.readFileSync(redirect); } catch { return undefined; }
  if (redirectSound(redirect, text)) return text;
  if (fs.existsSync(path.join(distDir, 'server', 'wrangler.json'))) pointWranglerAtServedRelease(root, distDir, env);
  else fs.rmSync(redirect, { force: true });
  try { return fs.readFileSync(redirect); } catch { return undefined; }
}

/**
 * Before a compile of the renderer (src/build/astro/compile-process.ts), in the build's process:
 * returns what puts back the redirect as it was once the compile has ended, however it ended. The
 * plugin points it at the compile's scratch folder, removed when the compile ends, and a build
 * stopped after the compile (bad content), or a compile killed (by the OOM killer, say) before it
 * could put it back itself, would leave `wrangler deploy` deploying nothing, or a Worker without
 * profiles. The served release's stays until a build publishes another.
 */
export function holdWranglerRedirect(root: string, distDir: string): () => void {
  const redirect = path.join(root, DEPLOY_REDIRECT);
  const before = repairWranglerRedirect(root, distDir);
  return () => {
    if (before === undefined) fs.rmSync(redirect, { force: true });
    else writeRedirect(redirect, before);
  };
}
