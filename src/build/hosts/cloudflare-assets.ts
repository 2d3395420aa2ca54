// What `wrangler deploy` would upload as the static assets of one Worker version, counted before the
// release is served: Cloudflare refuses a version past the plan's file limit at upload time, while
// the build, `wrangler deploy --dry-run` and `wrangler dev` all pass without a word.
import fs from 'node:fs';
import path from 'node:path';
import ignore from 'ignore';
import { CLOUDFLARE_ASSET_LIMITS } from '../../config.ts';

/** The files wrangler never uploads (its `createAssetsIgnoreFunction`, wrangler 4.151); `.assetsignore` adds more, in gitignore syntax. */
const ALWAYS_IGNORED = ['/.assetsignore', '/_redirects', '/_headers'];

/** The files of `clientDir` (the assets directory) that wrangler would upload, as it lists them: every file not ignored, links followed. */
export function uploadedAssetFiles(clientDir: string): string[] {
  let own = '';
  try { own = fs.readFileSync(path.join(clientDir, '.assetsignore'), 'utf8'); } catch { /* none: the defaults only */ }
  const ignored = ignore().add([...ALWAYS_IGNORED, ...own.split('\n')]);
  const files: string[] = [];
  for (const entry of fs.readdirSync(clientDir, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(clientDir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (ignored.ignores(rel)) continue;
    if (entry.isFile() || (entry.isSymbolicLink() && fs.statSync(path.join(clientDir, rel)).isFile())) files.push(rel);
  }
  return files;
}

/** The build's answer when `count` files exceed `limit`: the limit, the count and the ways out; undefined when they fit. */
export function assetLimitProblem(count: number, limit: number, profiles: number): string | undefined {
  if (count <= limit) return undefined;
  const n = (x: number) => x.toLocaleString('en-US');
  const paid = limit < CLOUDFLARE_ASSET_LIMITS.paid
    ? `\n  - on Workers Paid (${n(CLOUDFLARE_ASSET_LIMITS.paid)} files a version), build with CLOUDFLARE_ASSET_LIMIT=${CLOUDFLARE_ASSET_LIMITS.paid};`
    : '';
  return `this Cloudflare build has ${n(count)} asset files for ${n(profiles)} profiles, over the ${n(limit)} files a Worker version may upload `
    + `(CLOUDFLARE_ASSET_LIMIT; Workers Free allows ${n(CLOUDFLARE_ASSET_LIMITS.free)}): \`wrangler deploy\` would be refused. Ways out:${paid}`
    + '\n  - serve the Node server (or nginx on a DEPLOY_TARGET=static build) with Cloudflare\'s CDN in front: no file limit (docs/deploying.md#putting-a-cdn-in-front);'
    + '\n  - or split the profiles over several sites.';
}
