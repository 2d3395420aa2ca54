// Usage: npm run build            (CONTENT_DIR, SITE_URL, SOURCE_DATE_EPOCH from the environment)
//
// Validates the content, builds the pages with Astro and writes the API files into a new release
// folder, and switches dist/ (a link) to it only when every step succeeded: bad content, a kill or
// a full disk never replaces the last good build (src/release/releases.ts). One build at a time: a
// second one refuses at once, naming the first (src/release/lock.ts); exit code 75.
// The steps are src/build/pipeline.ts's; this reads the options and runs them.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SITE_URL, buildFoldersProblem, buildTimeFromEnv, changedFromEnv, cloudflareAssetLimitFromEnv, deployTargetFromEnv, distDirFromEnv, distDirProblem, incrementalFromEnv, precompressFromEnv, siteUrlFromEnv } from '../src/config.ts';
import { contentDirFromEnv } from '../src/content/load.ts';
import { checkFaults } from '../src/build/faults.ts';
import { runToldBuild, type BuildOptions } from '../src/build/pipeline.ts';
import { serveRebuilds } from '../src/build/rebuilds.ts';
import { readForNextBuild } from '../src/build/plan.ts';
import { parseCli } from '../src/cli.ts';

const cli = parseCli({
  name: 'build',
  usage: 'Usage: npm run build            (CONTENT_DIR, SITE_URL, SOURCE_DATE_EPOCH from the environment)',
  env: {
    CONTENT_DIR: 'the content folder to build (default ./content)',
    DIST_DIR: 'the link to the served release; releases are kept in <DIST_DIR>.releases/ (default ./dist; inside the project)',
    SITE_URL: `the public address every absolute URL starts with (default ${DEFAULT_SITE_URL})`,
    SOURCE_DATE_EPOCH: 'the build time in seconds since 1970, for reproducible builds (default: now)',
    PROFILES_INCREMENTAL: '`0`: parse every file and render every page (default: reuse what is unchanged)',
    RENDER_THREADS: 'how many threads render the profile pages (default: one per core, at most 4, for 2,000 pages or more)',
    KEPT_RENDERER: '`0`: compile the code anew with `astro build` and render with that, not with what a build of the same code kept (default: use it)',
    ASTRO_LOG_LEVEL: 'Astro\'s log level (default warn)',
    DEPLOY_TARGET: '`node` (default): for `npm run serve`; `cloudflare`: a Worker with static assets; `static`: files only (docs/deploying.md)',
    PRECOMPRESS: '`0`: no brotli and gzip copies of pages and answers, for a host or CDN that compresses by itself (Netlify, GitHub Pages); default `1`',
    CLOUDFLARE_ASSET_LIMIT: 'asset files a Worker version may upload on your plan: 20000 (Workers Free, default) or 100000 (Workers Paid); a Cloudflare build with more fails',
    CHANGED_FILES: 'the content files changed since release CHANGED_SINCE, one per line, relative to CONTENT_DIR (`npm start` sets both): only those profiles are looked at, then the rest is checked',
    CHANGED_SINCE: 'the release CHANGED_FILES lists changes since; ignored when another one is served',
    BUILD_IF_CHANGED: '`1`: no new release when no profile changed since the served release (checked as an edit build would); a time in ms since 1970: changed before then',
  },
  options: {
    rebuilds: { type: 'boolean', help: 'for `npm start`: build, then build again for each line of JSON ({"CHANGED_FILES", "CHANGED_SINCE"}) read from stdin (src/build/rebuilds.ts)' },
  },
});

// Output nobody reads any more (`npm run build | head`, a pager quit, a log on a full disk) is
// dropped, not a reason to stop a build halfway: it was ended by an unhandled EPIPE or ENOSPC.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

/** The options of one build: the environment, with `request`'s variables (a rebuild's) over it. */
function optionsFrom(request: Record<string, string | undefined> = {}): BuildOptions {
  const env = { ...process.env, ...request };
  checkFaults();
  const distDir = distDirFromEnv();
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const contentDir = contentDirFromEnv();
  const distProblem = distDirProblem(distDir) ?? buildFoldersProblem(root, distDir, contentDir);
  if (distProblem) throw new Error(distProblem);
  return {
    root,
    contentDir,
    distDir,
    siteUrl: siteUrlFromEnv(),
    target: deployTargetFromEnv(), precompress: precompressFromEnv(),
    assetLimit: cloudflareAssetLimitFromEnv(),
    builtAt: buildTimeFromEnv(),
    incremental: incrementalFromEnv(),
    // The tests' hooks: trust the stamps of files written a moment before; compare the paths.
    settleMs: env.BUILD_SETTLE_MS ? Number(env.BUILD_SETTLE_MS) : undefined,
    editPath: env.EDIT_PATH !== '0',
    layers: env.RELEASE_LAYERS !== '0',
    keptRenderer: env.KEPT_RENDERER !== '0',
    astroLogLevel: env.ASTRO_LOG_LEVEL, renderThreads: env.RENDER_THREADS,
    // `npm run build` caps the heap's growth for rendering many pages (docs/scale.md "Memory of the
    // build"); BUILD_HEAP_CAP=always keeps the cap for the whole build, for comparing the two.
    heapCap: env.BUILD_HEAP_CAP === 'always' ? undefined : process.execArgv.find((a) => a.startsWith('--heap-growing-percent=')),
    benchReport: Boolean(env.BENCH_REPORT),
    changed: changedFromEnv(env),
    ifChangedBefore: env.BUILD_IF_CHANGED === '1' ? Infinity : /^\d+$/.test(env.BUILD_IF_CHANGED ?? '') ? Number(env.BUILD_IF_CHANGED) : undefined,
  };
}

/** One build (`runToldBuild`), `request`'s variables over the environment; 2 for bad options. */
async function build(request?: Record<string, string | undefined>, { check = true, editOnly = false } = {}) {
  let options: BuildOptions;
  try {
    options = { ...optionsFrom(request), editOnly };
  } catch (e) {
    console.error(`build: ${(e as Error).message}`);
    return { code: 2, readEveryProfile: false };
  }
  return runToldBuild(options, () => optionsFrom({ ...request, CHANGED_FILES: undefined, CHANGED_SINCE: undefined }), check);
}

const script = fileURLToPath(import.meta.url);
if (cli.values.rebuilds) {
  await serveRebuilds({ build: (request) => build(request, { check: false, editOnly: true }), read: () => readForNextBuild(optionsFrom()), script });
} else process.exitCode = (await build()).code;
