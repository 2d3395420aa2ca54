// Configuration by environment, read and checked in one place.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const DEFAULT_SITE_URL = 'http://localhost:4321';

/** `SITE_URL`: the public base address every absolute URL in answers starts with; never a request's Host header. */
export function siteUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const raw = (env.SITE_URL || DEFAULT_SITE_URL).trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`SITE_URL must be an absolute http(s) address like https://profiles.example.com, not \`${raw}\``);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new Error(`SITE_URL must be a plain http(s) address without query, fragment or credentials, not \`${raw}\``);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/**
 * The build time. `SOURCE_DATE_EPOCH` (seconds, the reproducible-builds convention) pins it, so
 * tests and reproducible builds get the same bytes; otherwise now.
 */
export function buildTimeFromEnv(env: NodeJS.ProcessEnv = process.env): Date {
  const epoch = env.SOURCE_DATE_EPOCH;
  if (epoch && /^\d+$/.test(epoch)) return new Date(Number(epoch) * 1000);
  return new Date();
}

export const distDirFromEnv = (env: NodeJS.ProcessEnv = process.env) => path.resolve(env.DIST_DIR || 'dist');

/**
 * Why a build folder cannot work, or undefined: Astro's server bundle imports its packages by name,
 * which Node finds only in a `node_modules` folder beside the bundle or above it. A `DIST_DIR` such
 * as `/tmp/dist` otherwise fails deep in the build with "Cannot find package '@oslojs/encoding'".
 */
export function distDirProblem(distDir: string): string | undefined {
  for (let dir = path.dirname(distDir); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'node_modules', 'astro', 'package.json'))) return undefined;
    if (path.dirname(dir) === dir) break;
  }
  return `DIST_DIR must be inside the project (or below another folder whose node_modules has the project's packages), not \`${distDir}\`: the server bundle loads its packages from there. Build into the project and copy or link the result.`;
}

/** Whether `inner` is `outer` or inside it (both absolute). */
const within = (inner: string, outer: string) => inner === outer || inner.startsWith(outer + path.sep);

/**
 * Why the build's folders would publish or lose what the operator did not mean to, or undefined:
 * Astro copies every file of `public/` into the build (a content folder there was published whole,
 * `private:` notes included); and the build takes a plain `DIST_DIR` over as its first release,
 * which a later build prunes (`DIST_DIR=docs` moved the docs there, and five builds later deleted them).
 */
export function buildFoldersProblem(root: string, distDir: string, contentDir: string): string | undefined {
  const publicDir = path.join(root, 'public');
  if (within(contentDir, publicDir)) return `CONTENT_DIR must not be inside public/ (\`${contentDir}\`): Astro publishes every file there, private: notes included. Keep the content in its own folder.`;
  if (within(distDir, publicDir)) return `DIST_DIR must not be inside public/ (\`${distDir}\`): Astro copies public/ into every build. Build into a folder of its own, such as dist/.`;
  if (within(distDir, contentDir) || within(contentDir, distDir)) return `DIST_DIR (\`${distDir}\`) and CONTENT_DIR (\`${contentDir}\`) must be apart: neither inside the other.`;
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(distDir);
  } catch {
    return undefined;
  }
  // A link is the served release; an empty folder or an earlier build (Astro's client/) is taken over as a release.
  if (!stat.isDirectory() || fs.existsSync(path.join(distDir, 'client')) || fs.readdirSync(distDir).length === 0) return undefined;
  return `DIST_DIR \`${distDir}\` is a folder that holds no build (no client/ in it): the build would move it into its releases, and a later build would delete it. Choose a new or empty folder, such as dist/.`;
}

/**
 * `ACCESS_LOG`: where `npm run serve` appends its access log (src/server/access-log.ts): a file,
 * made absolute here so a reopen finds the same one, or `-` for stdout. Unset or empty: no log.
 */
export const accessLogFromEnv = (env: NodeJS.ProcessEnv = process.env) =>
  !env.ACCESS_LOG ? undefined : env.ACCESS_LOG === '-' ? '-' : path.resolve(env.ACCESS_LOG);

/** `PROFILES_INCREMENTAL=0`: a full build, every file parsed and every page rendered (the caches are still written for the next build). */
export const incrementalFromEnv = (env: NodeJS.ProcessEnv = process.env) => env.PROFILES_INCREMENTAL !== '0';

/**
 * The validation cache of a content folder (src/content/profile-files.ts): one file per folder, under
 * `node_modules/.cache` like other build caches, so `rm -rf node_modules` or a fresh CI clone starts clean.
 */
export function validationCacheFile(root: string, contentDir: string): string {
  const key = createHash('sha1').update(path.resolve(contentDir)).digest('hex').slice(0, 12);
  return path.join(root, 'node_modules', '.cache', 'profile-lookup', `validated-${key}.json`);
}

/** A validation cache's files (`validated-<key>.json` and its `-views`, `-creators` siblings): the key of the content folder they are for. */
const VALIDATION_CACHE_NAME = /^validated-([0-9a-f]{12})(?:-[a-z]+)?\.json$/;
/** How many content folders keep their validation caches; older ones go when a build writes one. */
export const KEPT_VALIDATION_CACHES = 8;

/**
 * Removes the validation caches of all but the `KEPT_VALIDATION_CACHES` content folders validated
 * last, never `cacheFile`'s: every folder ever built had one kept forever, and the test suite,
 * which builds hundreds of temporary folders, left 1,600 files (244 MB) after a day. A cache
 * removed only costs its folder's next build the time of validating anew.
 */
export function pruneValidationCaches(cacheFile: string, kept = KEPT_VALIDATION_CACHES): void {
  const own = VALIDATION_CACHE_NAME.exec(path.basename(cacheFile))?.[1];
  if (!own) return; // a cache file named by its caller (tests): not the store's
  const dir = path.dirname(cacheFile);
  const newest = new Map<string, number>();
  const files: [name: string, key: string][] = [];
  for (const name of fs.readdirSync(dir)) {
    const key = VALIDATION_CACHE_NAME.exec(name)?.[1];
    if (!key) continue;
    files.push([name, key]);
    let mtime = 0;
    try { mtime = fs.statSync(path.join(dir, name)).mtimeMs; } catch { continue; } // removed meanwhile
    newest.set(key, Math.max(newest.get(key) ?? 0, mtime));
  }
  const keep = new Set([own, ...[...newest].filter(([k]) => k !== own).sort((a, b) => b[1] - a[1]).slice(0, kept - 1).map(([k]) => k)]);
  for (const [name, key] of files) if (!keep.has(key)) fs.rmSync(path.join(dir, name), { force: true });
}

/** `FILE_CACHE_MB`: megabytes of file bodies the Node server keeps in memory (src/server/disk-files.ts); default 128. */
export function fileCacheBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.FILE_CACHE_MB;
  if (raw === undefined || raw === '') return 128 * 2 ** 20;
  if (!/^\d+$/.test(raw) || Number(raw) > 65536) throw new Error(`FILE_CACHE_MB must be a whole number of megabytes (0 to 65536), not \`${raw}\``);
  // Multiplied, not shifted: `<<` works on 32-bit integers, so 2048 MB and more became a negative budget that kept nothing.
  return Number(raw) * 2 ** 20;
}

/** Where a build is served (`DEPLOY_TARGET`): docs/deploying.md has a table of what works on each. */
export const DEPLOY_TARGETS = ['node', 'cloudflare', 'static'] as const;
export type DeployTarget = (typeof DEPLOY_TARGETS)[number];

export function deployTargetFromEnv(env: NodeJS.ProcessEnv = process.env): DeployTarget {
  const raw = env.DEPLOY_TARGET || 'node';
  if (!(DEPLOY_TARGETS as readonly string[]).includes(raw)) throw new Error(`DEPLOY_TARGET must be one of ${DEPLOY_TARGETS.join(', ')}, not \`${raw}\``);
  return raw as DeployTarget;
}

/**
 * `PRECOMPRESS`: `0` writes no compressed copies of pages and answers, for a host or CDN that
 * compresses by itself (Netlify, GitHub Pages, a CDN in front of the server): they would only add
 * files, bytes and a third of the build's time there. Default `1` (`node` and `static`; a
 * `cloudflare` build never has them).
 */
export function precompressFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env.PRECOMPRESS;
  if (raw === undefined || raw === '' || raw === '1') return true;
  if (raw === '0') return false;
  throw new Error(`PRECOMPRESS must be 1 (write brotli and gzip copies, the default) or 0 (none: the host compresses), not \`${raw}\``);
}

/** Files per Worker version Cloudflare accepts (static assets), by plan: developers.cloudflare.com/workers/static-assets/billing-and-limitations/. */
export const CLOUDFLARE_ASSET_LIMITS = { free: 20_000, paid: 100_000 } as const;

/**
 * `CLOUDFLARE_ASSET_LIMIT`: how many asset files the account's Workers plan accepts in one version;
 * default Workers Free's 20,000, `100000` on Workers Paid. A Cloudflare build with more fails.
 */
export function cloudflareAssetLimitFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CLOUDFLARE_ASSET_LIMIT;
  if (raw === undefined || raw === '') return CLOUDFLARE_ASSET_LIMITS.free;
  if (!/^[1-9]\d{0,8}$/.test(raw)) throw new Error(`CLOUDFLARE_ASSET_LIMIT must be a whole number of files (${CLOUDFLARE_ASSET_LIMITS.free} on Workers Free, ${CLOUDFLARE_ASSET_LIMITS.paid} on Workers Paid), not \`${raw}\``);
  return Number(raw);
}

/**
 * `CHANGED_FILES` and `CHANGED_SINCE` (`npm start` sets them for each rebuild): the content files
 * changed since that release, one per line, relative to the content folder. Undefined when either
 * is missing: the build looks at every file.
 */
export function changedFromEnv(env: NodeJS.ProcessEnv = process.env): { since: string; files: string[] } | undefined {
  const since = env.CHANGED_SINCE;
  if (!since || env.CHANGED_FILES === undefined) return undefined;
  return { since, files: env.CHANGED_FILES.split('\n').filter(Boolean) };
}
