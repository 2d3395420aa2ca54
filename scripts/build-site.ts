// Usage: npm run build            (CONTENT_DIR, SITE_URL, SOURCE_DATE_EPOCH from the environment)
//
// Validates the content, builds the pages with Astro and writes the API files into a new release
// folder, and switches dist/ (a link) to it only when every step succeeded: bad content, a kill or
// a full disk never replaces the last good build (src/release/releases.ts). One build at a time: a
// second one refuses at once, naming the first (src/release/lock.ts); exit code 75.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { DEFAULT_SITE_URL, buildTimeFromEnv, cloudflareAssetLimitFromEnv, deployTargetFromEnv, type DeployTarget, distDirFromEnv, distDirProblem, incrementalFromEnv, siteUrlFromEnv, validationCacheFile } from '../src/config.ts';
import { contentDirFromEnv, loadContentFast } from '../src/content/load.ts';
import { formatProblem } from '../src/content/problems.ts';
import { handOverSiteIndex, pagesRendered } from '../src/build/astro/page-data.ts';
import { goneNames, linkPages, planPages, profilePageKey, readPageManifest, renderFingerprint, userInputKey, type PageManifest, type PagePlan } from '../src/build/page-reuse.ts';
import { isLayered, layeredFiles, listFiles, locator, maxLayeredFiles, releaseFiles, type Layers } from '../src/release/layers.ts';
import type { PublicUser } from '../src/schemas/api.ts';
import { USERS_PATH } from '../src/api/handler.ts';
import { OG_IMAGES_PATH } from '../src/ui/og-image.ts';
import { WORKER_MIN_PAGES, renderProfilePages, threadCount } from '../src/build/astro/render-pages.ts';
import { astroFallback } from '../src/build/astro/fallbacks.ts';
import { buildLayout } from '../src/release/layout.ts';
import { KEPT_FILE, KEPT_SERVER_DIR, keepRendererIn, rendererDir } from '../src/build/astro/keep-renderer.ts';
import { openRenderer, RendererUnavailable, type PageRenderer } from '../src/build/astro/page-renderer.ts';
import { AnswerTimes } from '../src/build/answer-times.ts';
import { buildSiteIndex } from '../src/model/site-index.ts';
import { mediaAddressesFor } from '../src/model/public-user.ts';
import { writeProfilePreviews } from '../src/ui/og-image-png.ts';
import { recycleUserFiles, removeTrees, writeApiFiles, writeEditFiles, writeUserFiles } from '../src/build/write-build.ts';
import { planEdit, type EditPlan } from '../src/build/edit-path.ts';
import { keptIndexOf, othersDigestNow, readKeptIndex, writeKeptIndex, type KeptIndex } from '../src/build/kept-index.ts';
import { exampleUser } from '../src/api/openapi.ts';
import { CREATORS_ROWS_FILE, USER_NAMES_FILE, creatorsRows } from '../src/api/release-files.ts';
import { nameFilterBytes } from '../src/api/name-filter.ts';
import { previewFileOf } from '../src/ui/og-image.ts';
import { writePreviewImages } from '../src/ui/og-image-png.ts';
import { siteSitemap } from '../src/ui/sitemap.ts';
import { BuildLockHeld, acquireBuildLock, type BuildLock } from '../src/release/lock.ts';
import { checkFaults, faultPoint } from '../src/build/faults.ts';
import {
  KEEP_RELEASES, LOCK_FILE, adoptPlainBuild, readReleaseInfo, readsFromOf, buildingPath, leftovers, listReleases, nextReleaseId, recoverLink, releasePath, releasesDir,
  releasesToPrune, retireRelease, servedRelease, switchRelease, syncDir, writeReleaseInfo,
} from '../src/release/releases.ts';
import { parseCli } from '../src/cli.ts';
import { pointWranglerAtServedRelease } from '../src/build/astro/wrangler-deploy-config.ts';
import { assetLimitProblem, uploadedAssetFiles } from '../src/build/cloudflare-assets.ts';
import { addStats, compressRelease, describeStats, emptyStats, type CompressStats } from '../src/build/compress.ts';
import { compressedBaseOf } from '../src/http/headers.ts';

parseCli({
  name: 'build',
  usage: 'Usage: npm run build            (CONTENT_DIR, SITE_URL, SOURCE_DATE_EPOCH from the environment)',
  env: {
    CONTENT_DIR: 'the content folder to build (default ./content)',
    DIST_DIR: 'the link to the served release; releases are kept in <DIST_DIR>.releases/ (default ./dist; inside the project)',
    SITE_URL: `the public address every absolute URL starts with (default ${DEFAULT_SITE_URL})`,
    SOURCE_DATE_EPOCH: 'the build time in seconds since 1970, for reproducible builds (default: now)',
    PROFILES_INCREMENTAL: '`0`: parse every file and render every page (default: reuse what is unchanged)',
    RENDER_SHARDS: 'how many processes (or threads, with a kept renderer) render the pages (default: one per core for big builds)',
    KEPT_RENDERER: '`0`: compile the code anew with `astro build` and render with that, not with what a build of the same code kept (default: use it)',
    ASTRO_LOG_LEVEL: 'Astro\'s log level (default warn)',
    DEPLOY_TARGET: '`node` (default): for `npm run serve`; `cloudflare`: a Worker with static assets; `static`: files only (docs/deploying.md)',
    CLOUDFLARE_ASSET_LIMIT: 'asset files a Worker version may upload on your plan: 20000 (Workers Free, default) or 100000 (Workers Paid); a Cloudflare build with more fails',
  },
});

/** A build stopped on purpose, with a message that says why and what to do: no stack trace. */
class BuildRefused extends Error {}

/** The layered folders of user answers and previews, as layers.ts names files. */
const USERS_DIR = `${USERS_PATH.replace(/^\//, '')}/`.replace(/\/+$/, '/');
const OG_DIR = `${OG_IMAGES_PATH.replace(/^\//, '')}/`;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
// `npm run build` caps the heap's growth (--heap-growing-percent, docs/scale.md "Memory of the
// build") for rendering many pages. Until then V8's own growth is kept: validating and planning
// hold the whole index and make much garbage beside it, and under the cap V8 marks and compacts
// that index again and again (an edit at 100,000 profiles: 6-7 full collections against 3).
// Set again below before many pages are rendered.
const heapCap = process.execArgv.find((a) => a.startsWith('--heap-growing-percent='));
if (heapCap && process.env.BUILD_HEAP_CAP !== 'always') v8.setFlagsFromString('--heap-growing-percent=0');
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);

// Each step says when it starts and how long it took, so a long build shows where it is.
const timings: string[] = [];
async function step<T>(name: string, work: () => T | Promise<T>): Promise<T> {
  const t0 = performance.now();
  process.stdout.write(`${name}…`);
  const result = await work();
  const s = ((performance.now() - t0) / 1000).toFixed(1);
  process.stdout.write(` ${s} s\n`);
  timings.push(`${name.toLowerCase()} ${s} s`);
  return result;
}

let siteUrl: string;
let target: DeployTarget;
let assetLimit: number;
try {
  siteUrl = siteUrlFromEnv();
  target = deployTargetFromEnv();
  assetLimit = cloudflareAssetLimitFromEnv();
} catch (e) {
  console.error(`build: ${(e as Error).message}`);
  process.exit(2);
}
const contentDir = contentDirFromEnv();
const distDir = distDirFromEnv();
const distProblem = distDirProblem(distDir);
if (distProblem) {
  console.error(`build: ${distProblem}`);
  process.exit(2);
}
try {
  checkFaults();
} catch (e) {
  console.error(`build: ${(e as Error).message}`);
  process.exit(2);
}
const builtAt = buildTimeFromEnv();
const incremental = incrementalFromEnv();

fs.mkdirSync(releasesDir(distDir), { recursive: true });
let lock: BuildLock;
try {
  lock = acquireBuildLock(path.join(releasesDir(distDir), LOCK_FILE));
} catch (e) {
  if (!(e instanceof BuildLockHeld)) throw e;
  console.error(`build: ${e.message}`);
  process.exit(75); // EX_TEMPFAIL: try again later
}
// Released on every exit but SIGKILL; a lock left by a dead build is taken over by the next.
process.once('exit', () => {
  // A build that stops after validating (a failure, a signal) still keeps what it validated, when
  // that was written late (validatedIndex); after a switch it was written already, and this does nothing.
  saveValidationCache();
  lock.release();
  // A first build that failed leaves nothing: an empty releases folder goes (rmdir fails otherwise).
  try { fs.rmdirSync(releasesDir(distDir)); } catch { /* not empty: releases kept */ }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
if (lock.tookOverFrom) {
  const dead = lock.tookOverFrom;
  console.warn(`build: took over the lock of build pid ${dead.pid} (started ${dead.startedAt}), which is no longer running.`);
}
await faultPoint('locked');

/**
 * Validates the content and makes the public index; the parsed YAML is dropped when this returns,
 * unless few files changed: then the validation cache is written after the switch (`saveCache`).
 */
let saveValidationCache = () => {};
// BUILD_SETTLE_MS: the tests' hook to trust the stamps of files they wrote a moment before.
const settleMs = process.env.BUILD_SETTLE_MS ? Number(process.env.BUILD_SETTLE_MS) : undefined;
async function validatedIndex() {
  // The files outside profiles/ stamped before they are read, for the next build's edit path (kept-index.ts).
  const others = target === 'node' ? othersDigestNow(contentDir, settleMs) : undefined;
  const { content, problems, warnings, saveCache, stamps } = await loadContentFast(contentDir, { cacheFile: validationCacheFile(root, contentDir), ignoreCache: !incremental, siteUrl, deferCacheWrite: true, settleMs });
  saveValidationCache = saveCache;
  for (const w of warnings) console.warn(`warning: ${formatProblem(w)}`);
  if (problems.length) {
    saveCache();
    for (const p of problems) console.error(formatProblem(p));
    console.error(`\n${problems.length} problem(s) in ${path.relative(process.cwd(), contentDir) || contentDir}. Nothing was built; ${path.relative(process.cwd(), distDir)}/ is untouched.`);
    console.error('Fix each line above (the hint says how), then run `npm run check` to try again quickly.');
    process.exit(1);
  }
  const decorationEntries = [...content.decorations.values()].map((d): [string, string, string] => [d.id, d.name, d.file]);
  return { index: buildSiteIndex(content, { siteUrl, builtAt, media: mediaAddressesFor(target) }), stamps, others, decorationEntries, warnings: warnings.map((w) => formatProblem(w)) };
}

const fingerprint = renderFingerprint(root, siteUrl);
// The pages are rendered with the code the last `astro build` of the same code kept
// (src/build/astro/page-renderer.ts), without its seconds of bundling and on every core in one process;
// the first build of new code runs `astro build`, and keeps its own.
const keptKey = { fingerprint, target };
// KEPT_RENDERER=0: this build compiles anew and renders with its own copy, removed when it ends;
// the store's copy stays untouched for the builds that may be rendering with it now.
const ownKept = process.env.KEPT_RENDERER === '0';
const keptDir = ownKept ? `${rendererDir(root, keptKey)}.own-${process.pid}` : rendererDir(root, keptKey);
if (ownKept) {
  fs.rmSync(keptDir, { recursive: true, force: true });
  process.once('exit', () => fs.rmSync(keptDir, { recursive: true, force: true }));
}
const edit = await editBuild();
const whole = edit ? undefined : await step('Validating content', validatedIndex);
const index = edit ? edit.plan.index : whole!.index;
const stamps = edit ? edit.plan.stamps : whole!.stamps;
if (edit) for (const w of edit.plan.kept.warnings) console.warn(`warning: ${w}`);
await faultPoint('validated');

/**
 * An edit build (src/build/edit-path.ts) when this one can be: few profiles changed in place since
 * the served release, which the same code built today; its pages then rendered with the kept
 * renderer. Else undefined, and the build reads every profile.
 */
async function editBuild(): Promise<{ plan: EditPlan; renderer: PageRenderer; pages: PagePlan; times: AnswerTimes } | undefined> {
  if (!incremental || target !== 'node' || ['EDIT_PATH', 'RELEASE_LAYERS', 'KEPT_RENDERER'].some((name) => process.env[name] === '0')) return undefined;
  const id = servedRelease(distDir);
  if (!id) return undefined;
  const layout = buildLayout(releasePath(distDir, id));
  const info = readReleaseInfo(distDir, id);
  if (!info) return undefined;
  const at = locator(releasesDir(distDir), layout.client, info.layers);
  const readServed = (file: string) => {
    const dir = at(file);
    try { return dir === null ? undefined : fs.readFileSync(path.join(dir, file)); } catch { return undefined; }
  };
  let why = '';
  const made = await step('Finding the changed profiles', async () => {
    const plan = await planEdit({
      contentDir, fingerprint, builtAt, siteUrl, cacheFile: validationCacheFile(root, contentDir), readServed, settleMs,
      kept: () => readKeptIndex(layout.keptIndex),
      meanwhile: () => ({ manifest: readPageManifest(layout.pageManifest), times: new AnswerTimes(builtAt.toISOString(), layout.answerTimes) }),
    });
    if ('reason' in plan) return void (why = plan.reason);
    const layered = Object.keys(info.layers?.from ?? {}).length;
    if (layered + 3 * (plan.changed.length + plan.removed.length) > maxLayeredFiles(plan.kept.names.length)) return void (why = 'the served release holds too many changes: a whole release is due');
    const pages = editPages(plan, plan.meanwhile.manifest, plan.meanwhile.times);
    if ('reason' in pages) return void (why = pages.reason);
    const renderer = await openKeptRenderer();
    if (!renderer) return void (why = 'no kept renderer');
    return { plan, renderer, ...pages };
  });
  if (!made) console.log(`  (every profile is read: ${why})`);
  return made;
}

/** The pages to render and the answer times of an edit build, from the served release's records. */
function editPages(edit: EditPlan, manifest: PageManifest | undefined, times: AnswerTimes): { pages: PagePlan; times: AnswerTimes } | { reason: string } {
  const { kept, servedAt } = edit;
  const names = kept.names;
  if (!manifest || manifest.fingerprint !== fingerprint || manifest.names.length !== edit.servedNames.length) return { reason: 'the served release\'s page manifest is not this code\'s' };
  // Unchanged answers keep the timestamp, and so the bytes, they were published with (answer-times.ts).
  if (!times.hasPrevious) return { reason: 'the served release has no answer times' };
  const changed = new Map(edit.changed.map((u) => [u.username, u]));
  // The served manifest's entries at each profile's place in this build (an added one's made below).
  const pages = new Array<string>(names.length);
  const inputs = new Array<string | null>(names.length);
  const render = new Set<string>();
  const reuse: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const j = servedAt[i]!;
    if (j >= 0 && manifest.names[j] !== name) return { reason: 'the served release\'s page manifest names other profiles' };
    const user = changed.get(name);
    if (!user) {
      if (!times.keep(name)) return { reason: `the served release has no answer time for ${name}` };
      pages[i] = manifest.pages[j]!;
      inputs[i] = manifest.inputs?.[j] ?? null;
      reuse.push(name);
      continue;
    }
    const json = JSON.stringify(user);
    const stamp = edit.stamps.get(name);
    inputs[i] = stamp === undefined ? null : userInputKey(stamp, user);
    const key = profilePageKey(user, kept.avatars[i] ?? undefined, json);
    if (j >= 0 && key === manifest.pages[j]) reuse.push(name);
    else render.add(name);
    pages[i] = key;
    times.user(name, json);
  }
  return { pages: { render, reuse, manifest: { ...manifest, names, pages, inputs }, previousNames: manifest.names, sameInputs: new Set() }, times };
}

// A plain dist/ folder from before releases becomes the first release; what dead builds left
// (half-written releases, a temporary link) is removed, and so are the releases this build prunes.
const adopted = adoptPlainBuild(distDir);
if (adopted.length) console.log(`Kept the earlier build${adopted.length > 1 ? 's' : ''} as release ${adopted.join(' and ')}.`);
const relinked = recoverLink(distDir);
if (relinked) console.warn(`build: ${path.relative(process.cwd(), distDir)} was missing; it serves release ${relinked} again.`);
const trash = leftovers(distDir);
const served = servedRelease(distDir);
const releaseId = nextReleaseId(distDir);
// Retired now (each in one rename), so the user files of one can be recycled: never a kept release.
const retired = releasesToPrune(listReleases(distDir), served, releaseId, KEEP_RELEASES, readsFromOf(distDir)).map((id) => retireRelease(distDir, id));
trash.push(...retired);
await faultPoint('cleaned');

// Pages whose profile and code are unchanged since the build being served are linked from it, not
// rendered (src/build/page-reuse.ts); PROFILES_INCREMENTAL=0 renders them all.
const servedDir = served ? releasePath(distDir, served) : distDir;
const servedLayout = buildLayout(servedDir);
const servedInfo = served ? readReleaseInfo(distDir, served) : undefined;
const servedLayers = servedInfo?.layers;
// Where the served release holds each of its files (it may read some from others: layers.ts).
const servedAt = locator(releasesDir(distDir), servedLayout.client, servedLayers);
const servedFiles = (dir: string) => layeredFiles(releasesDir(distDir), servedLayout.client, servedLayers, dir);
const { plan, times, layers } = edit ? { plan: edit.pages, times: edit.times, layers: editLayers(edit.pages, edit.times, edit.plan.removed) } : await step('Finding what changed', () => {
  // Each user's JSON text made at most once, for the page key and the answer's hash, in a rebuild
  // (which may be layered); not at all for a user whose inputs are those of the served release.
  const json = new Map<PublicUser, string>();
  const jsonOf = (u: PublicUser) => {
    let text = json.get(u);
    if (text === undefined) json.set(u, text = JSON.stringify(u));
    return text;
  };
  const inputKeyOf = (u: PublicUser) => {
    const stamp = stamps.get(u.username);
    return stamp === undefined ? undefined : userInputKey(stamp, u);
  };
  const plan = planPages(index, fingerprint, servedLayout.pageManifest, () => servedFiles('p/').map((f) => f.slice('p/'.length)), incremental, incremental ? jsonOf : undefined, inputKeyOf);
  // Unchanged answers keep the timestamp, and so the bytes, they were published with (answer-times.ts).
  const times = new AnswerTimes(index.builtAt, servedLayout.answerTimes, !incremental);
  return { plan, times, layers: layersOfThisBuild(plan, times, jsonOf) };
});

/**
 * This release holds only what changed (layers.ts) when the served release can be its base: the
 * code is the same (so are the bytes of every unchanged file), the target is the Node server (a
 * static host or Workers upload one folder, so theirs are whole), and few enough files changed.
 */
function layersOfThisBuild(plan: PagePlan, times: AnswerTimes, jsonOf: (user: PublicUser) => string): Layers | undefined {
  if (!incremental || target !== 'node' || !served || !times.hasPrevious) return undefined;
  if (plan.reuse.length === 0 || process.env.RELEASE_LAYERS === '0') return undefined;
  // The same code as the served release (planPages compared the fingerprints), read once.
  const previousNames = plan.previousNames;
  if (!previousNames) return undefined;
  const layers: Layers = servedLayers ? { base: servedLayers.base, from: { ...servedLayers.from } } : { base: served, from: {} };
  // The same public user on the same date (accountAgeDays) has the same answer: its record is kept
  // unhashed. Others are hashed as JSON text, not bytes: the same hash, without a buffer per user.
  const sameDay = servedInfo?.builtAt.slice(0, 10) === index.builtAt.slice(0, 10);
  for (const user of index.users) {
    if (sameDay && plan.sameInputs.has(user.username) && times.keep(user.username)) continue;
    times.user(user.username, jsonOf(user));
  }
  for (const name of plan.render) layers.from[`p/${name}.html`] = releaseId;
  for (const name of times.changedUsers) layers.from[`${USERS_DIR}${name}`] = releaseId;
  const names = plan.manifest.names;
  for (const name of goneNames(previousNames, names)) {
    layers.from[`p/${name}.html`] = null;
    layers.from[`${USERS_DIR}${name}`] = null;
  }
  return Object.keys(layers.from).length <= maxLayeredFiles(index.users.length) ? layers : undefined;
}
/** An edit build's layers: the served release's, the changed pages and answers of this one, and the removed profiles' gone. */
function editLayers(plan: PagePlan, times: AnswerTimes, removed: readonly string[]): Layers {
  const layers: Layers = servedLayers ? { base: servedLayers.base, from: { ...servedLayers.from } } : { base: served!, from: {} };
  for (const name of plan.render) layers.from[`p/${name}.html`] = releaseId;
  for (const name of times.changedUsers) layers.from[`${USERS_DIR}${name}`] = releaseId;
  for (const name of removed) {
    layers.from[`p/${name}.html`] = null;
    layers.from[`${USERS_DIR}${name}`] = null;
  }
  return layers;
}

/** How many profiles this build has: an edit build's index holds the changed ones only. */
const userCount = edit ? edit.plan.kept.names.length : index.users.length;
// One render engine (src/build/astro/render-pages.ts): the kept renderer renders every profile
// page. Cloudflare's adapter compiles for workerd, so its pages are still rendered by `astro build`.
const engine = target !== 'cloudflare' && !astroFallback('kept-renderer');
let keptRenderer = edit?.renderer ?? (engine ? await openKeptRenderer() : undefined);

async function openKeptRenderer(): Promise<PageRenderer | undefined> {
  try {
    // Pages compressed as they are written, but for Cloudflare, which compresses itself.
    return await openRenderer(keptDir, keptKey, target !== 'cloudflare');
  } catch (e) {
    if (!(e instanceof RendererUnavailable)) throw e;
    // A first build of this code has none to use, as expected: said only when asked for Astro's info.
    if (!e.noneKept || ['info', 'debug'].includes(process.env.ASTRO_LOG_LEVEL ?? '')) console.log(`(${e.message}: \`astro build\` compiles the code anew)`);
    return undefined;
  }
}

if (heapCap && plan.render.size >= WORKER_MIN_PAGES) v8.setFlagsFromString(heapCap);
process.env.SITE_URL = siteUrl;
process.env.CONTENT_DIR = contentDir;
// A build is always for production. Vite takes `import.meta.env`'s own names from the environment
// where set, and vitest sets them (DEV=1, MODE=test, ...): the pages then pointed at the dev
// server's image routes instead of the static files. So none of them is inherited.
process.env.NODE_ENV = 'production';
for (const name of ['DEV', 'PROD', 'SSR', 'MODE', 'BASE_URL']) delete process.env[name];
process.env.ASTRO_TELEMETRY_DISABLED = '1';

const fresh = buildingPath(distDir, releaseId);
/** What the compress step did, for the BENCH line. */
let compressStats: CompressStats | undefined;
/** What the render threads and the user files' thread compressed as they wrote (compress.ts). */
const renderCompressed = emptyStats();
let compressMs = 0;
// The user files are written while Astro renders: disk work beside CPU work. They overwrite those
// of a retired release (src/build/write-build.ts), except in a full build (PROFILES_INCREMENTAL=0);
// a layered release writes only those that changed.
const usersStaging = `${fresh}.users`;
recycleUserFiles(retired[0], usersStaging, incremental && !layers);
const clearing = removeTrees(trash);
const changedUsers = layers && new Set(times.changedUsers);
// Compressed as they are written, beside `astro build` (Cloudflare compresses itself).
const writingUsers = writeUserFiles(usersStaging, index, times, changedUsers ? index.users.filter((u) => changedUsers.has(u.username)) : index.users, target === 'cloudflare' ? undefined : renderCompressed);
let rendering: Promise<unknown> = Promise.resolve();
try {
  const compiled = !keptRenderer;
  const threads = edit || !engine ? 1 : threadCount(plan.render.size);
  const how = !engine ? '`astro build`' : compiled ? 'the renderer `astro build` compiles and keeps' : 'Astro\'s kept renderer';
  await step(`Rendering ${plan.render.size} of ${userCount} profile pages with ${how}${threads > 1 ? ` in ${threads} threads` : ''} (and writing the API files)`, async () => {
    // Progress every 5 s while pages render: a 100,000-profile build renders for a minute or two.
    let done = 0;
    let reported = false;
    const progress = setInterval(() => {
      reported = true;
      process.stdout.write(`\n  ${Math.max(done, pagesRendered())} / ${plan.render.size} profile pages rendered (${seconds()} s)`);
    }, 5000);
    try {
      rendering = (async () => {
        if (edit) return renderEdit(edit.renderer, fresh, [...plan.render], edit.plan);
        if (keptRenderer) await renderWithKept(keptRenderer, fresh);
        else {
          // The pages that are not profile pages (or, without the engine, every page), and the kept renderer.
          await astroBuild(engine ? [] : plan.render);
          if (!engine) return;
          keptRenderer = await openKeptRenderer();
          // Astro kept nothing (a warning said why): it renders the profile pages itself, once more.
          if (!keptRenderer) return astroBuild(plan.render);
        }
        await renderProfiles(keptRenderer!, [...plan.render], fresh, (n) => { done = n; });
      })();
      await faultPoint('rendering');
      await rendering;
    } finally {
      clearInterval(progress);
    }
    if (reported) process.stdout.write('\n  finished:');
  });
  await faultPoint('rendered');
  const freshLayout = buildLayout(fresh);
  if (plan.reuse.length && !layers) {
    await step(`Linking ${plan.reuse.length} unchanged pages from the last build`, () => linkPages(plan.reuse, (file) => path.join(servedAt(`p/${file}`) ?? servedLayout.client, 'p', file), freshLayout.pages));
  }
  // Link previews for profiles whose avatar crawlers cannot use (src/ui/og-image.ts); before the
  // API files, whose _headers is made from every file of the build.
  let previewsChanged = false;
  const previews = await step('Writing preview images', async () => {
    if (edit && layers) {
      // Which previews the release uses, from the kept column: those of the changed profiles are written if new.
      const had = new Set(servedFiles(OG_DIR));
      const used = new Set<string>();
      for (const file of edit.plan.kept.previews) if (file !== null) used.add(`${OG_DIR}${file}`);
      const avatarOf = new Map(index.avatars);
      const avatarsDir = path.join(contentDir, 'avatars');
      const needing = edit.plan.changed.filter((u) => previewFileOf(avatarsDir, u, avatarOf.get(u.username)) !== null);
      await writePreviewImages(path.join(freshLayout.client, OG_DIR), needing, (file) => had.has(`${OG_DIR}${file}`));
      for (const file of used) if (!had.has(file)) { layers.from[file] = releaseId; previewsChanged = true; }
      for (const file of had) if (!used.has(file)) { layers.from[file] = null; previewsChanged = true; }
      return used.size;
    }
    if (!layers) return (await writeProfilePreviews(freshLayout.client, index, path.join(contentDir, 'avatars'))).length;
    // A preview's name says what is in it, and the code is the same: those the served release has are kept.
    const had = new Set(servedFiles(OG_DIR));
    const used = await writeProfilePreviews(freshLayout.client, index, path.join(contentDir, 'avatars'), (file) => had.has(`${OG_DIR}${file}`));
    for (const file of used) if (!had.has(`${OG_DIR}${file}`)) layers.from[`${OG_DIR}${file}`] = releaseId;
    const usedNow = new Set(used.map((f) => `${OG_DIR}${f}`));
    for (const file of had) if (!usedNow.has(file)) layers.from[file] = null;
    return used.length;
  });
  const stats = await step('Finishing the API files', async () => {
    await writingUsers;
    let written;
    if (edit && layers) {
      writeEditFiles(fresh, index, usersStaging, times, {
        filesChanged: previewsChanged || edit.plan.namesChanged, servedCreatorRows: edit.plan.servedCreatorRows,
        // Listed before `_headers` is written, as a whole build lists them: the copy of the served one is not a file of this build.
        files: () => releaseFiles(releasesDir(distDir), freshLayout.client, layers).filter((f) => f !== '_headers'),
      });
      written = { userFiles: userCount, mediaFiles: new Set(edit.plan.kept.avatars.filter((a) => a !== null)).size + index.decorationFiles.length };
    } else {
      written = writeApiFiles(fresh, index, usersStaging, contentDir, times, target, layers && {
        id: releaseId, layers, served: servedAt, servedFiles, releasesDir: releasesDir(distDir),
      });
    }
    fs.writeFileSync(freshLayout.pageManifest, JSON.stringify(plan.manifest));
    const kept = edit?.plan.kept ?? (whole?.others === undefined ? undefined : keptIndexOf(
      index, fingerprint, whole.others, (name) => stamps.get(name), (user, avatar) => previewFileOf(path.join(contentDir, 'avatars'), user, avatar),
      whole.decorationEntries, exampleOf(index.users), whole.warnings,
    ));
    if (kept) writeKeptIndex(freshLayout.keptIndex, kept);
    writeReleaseInfo(fresh, { id: releaseId, previous: served ?? null, builtAt: index.builtAt, ...(layers && { layers }) });
    return written;
  });
  // Compressed siblings of what this release wrote itself (src/build/compress.ts); a layered
  // release reads those of the files it leaves to others from there. Cloudflare compresses itself.
  if (target !== 'cloudflare') {
    const t0 = performance.now();
    const compressed = await step('Compressing', () => compressRelease(freshLayout.client));
    addStats(compressed, renderCompressed);
    if (keptRenderer) addStats(compressed, keptRenderer.compressed);
    compressMs = Math.round(performance.now() - t0);
    console.log(`  ${describeStats(compressed)}`);
    compressStats = compressed;
  }
  await faultPoint('written');
  if (target === 'cloudflare') {
    // Cloudflare refuses an upload past the plan's file limit; the build says so before serving it.
    const problem = assetLimitProblem(uploadedAssetFiles(buildLayout(fresh).client).length, assetLimit, userCount);
    if (problem) throw new BuildRefused(problem);
  }
  await step('Switching to the new release', async () => {
    // Complete: named as a release (one rename), then served (one more).
    fs.renameSync(fresh, releasePath(distDir, releaseId));
    syncDir(releasesDir(distDir));
    await faultPoint('sealed');
    let killAt: Promise<void> | undefined;
    switchRelease(distDir, releaseId, () => { killAt = faultPoint('switching'); });
    await killAt;
  });
  const servedAfter = seconds();
  await faultPoint('switched');
  if (target === 'cloudflare') console.log(`Deploy the served release with \`${pointWranglerAtServedRelease(root, distDir)}\`.`);
  // Served. The validation cache, when written late (validatedIndex), goes before the lock, so the
  // next build reads it; that build may then start, while this one deletes the releases pruned (at
  // 100,000 profiles tens of seconds for a whole one), which the next would finish if this one died.
  saveValidationCache();
  lock.release();
  // Removing old releases is housekeeping: a failure here is worth a line, not a failed build.
  await clearing.catch((e: unknown) => console.warn(`build: ${(e as Error).message}; the next build tries again.`));
  const suspended = edit ? edit.plan.kept.suspended.reduce((a, b) => a + b, 0) : index.users.filter((u) => u.status === 'suspended').length;
  const ownRssKb = process.resourceUsage().maxRSS;
  const mb = (kb: number) => `${Math.round(kb / 1024)} MB`;
  // One process: the render threads' memory is in its own peak.
  const memory = mb(ownRssKb);
  console.log(
    `Built ${userCount} profiles (${suspended} suspended), ${index.creators.length} active creators: ` +
    `${userCount} pages (${plan.render.size} rendered, ${plan.reuse.length} unchanged), ${stats.userFiles} API files${layers ? ` (${times.changedUsers.length} changed)` : ''}, ${stats.mediaFiles} images and ${previews} preview images in ${path.relative(process.cwd(), distDir) || distDir}/ (release ${releaseId}${layers ? `, holding only what changed since release ${layers.base}: ${Object.keys(layers.from).length} files` : ''}), ` +
    `in ${seconds()} s, served after ${servedAfter} s (${timings.join(', ')}), peak memory ${memory}.`,
  );
  // For `npm run bench`: one machine-readable line; the memory of every process added up.
  if (process.env.BENCH_REPORT) console.log(`BENCH ${JSON.stringify({ ms: Math.round(performance.now() - started), servedMs: Math.round(Number(servedAfter) * 1000), maxRssKb: ownRssKb, compressMs, compressed: compressStats })}`);
} catch (e) {
  await Promise.allSettled([clearing, writingUsers, rendering]);
  fs.rmSync(fresh, { recursive: true, force: true });
  fs.rmSync(usersStaging, { recursive: true, force: true });
  // Complete but never served (a failure between the two renames): not a release to roll back to.
  if (servedRelease(distDir) !== releaseId && fs.existsSync(releasePath(distDir, releaseId))) fs.rmSync(retireRelease(distDir, releaseId), { recursive: true, force: true });
  console.error(`build failed: ${e instanceof BuildRefused ? e.message : (e as Error).stack ?? e}`);
  const now = servedRelease(distDir);
  console.error(`${path.relative(process.cwd(), distDir)}/ ${now === releaseId ? `serves the new release ${releaseId}` : now ? `still serves release ${now}` : 'is untouched'}.`);
  process.exitCode = 1;
}

/**
 * What `astro build` writes into `outDir` besides the profile pages, made with the kept renderer:
 * every page that reads the whole index (home, sitemaps, docs...), then the rest of Astro's
 * output, which is the same for the same code and so is copied from the kept renderer (the
 * server's code and the bundled styles) or from `public/`, as Astro copies it.
 */
async function renderWithKept(renderer: PageRenderer, outDir: string): Promise<void> {
  // Without Astro's StaticPaths (an internal: src/build/astro/README.md), `astro build` makes them.
  if (astroFallback('static-paths')) return astroBuild([]);
  const to = buildLayout(outDir);
  try {
    await renderer.renderSite(index, [], to.client);
  } catch (e) {
    throw keptRendererFailed(e);
  }
  fs.cpSync(path.join(keptDir, KEPT_SERVER_DIR), to.server, { recursive: true });
  fs.cpSync(path.join(keptDir, '_astro'), path.join(to.client, '_astro'), { recursive: true });
  if (fs.existsSync(path.join(root, 'public'))) fs.cpSync(path.join(root, 'public'), to.client, { recursive: true });
}

/** `astro build` into the fresh release, rendering the profile pages of `profiles` only; it keeps its renderer for the engine. */
async function astroBuild(profiles: Iterable<string>): Promise<void> {
  handOverSiteIndex(index, new Set(profiles));
  keepRendererIn(engine ? { ...keptKey, dir: keptDir } : undefined);
  // Imported here: loading Astro's build takes 1-4 s, which a build with the kept renderer skips.
  const { build } = await import('astro');
  await build({ root, outDir: fresh, logLevel: process.env.ASTRO_LOG_LEVEL as 'info' | undefined ?? 'warn' });
}

/** The profile pages of `names`, on every core (src/build/astro/render-pages.ts). */
async function renderProfiles(renderer: PageRenderer, names: string[], outDir: string, onProgress: (rendered: number) => void): Promise<void> {
  try {
    const { compressed } = await renderProfilePages({ renderer, dir: keptDir, key: keptKey, index, names, clientDir: buildLayout(outDir).client, compress: target !== 'cloudflare', onProgress });
    addStats(renderCompressed, compressed);
  } catch (e) {
    throw keptRendererFailed(e);
  }
}

/**
 * A cache, which a bad copy must not keep failing: without its record the next build compiles
 * anew (a page that fails for its content fails there too, with Astro's words). Its files stay for
 * a build of another release that may be using them.
 */
function keptRendererFailed(e: unknown): Error {
  fs.rmSync(path.join(keptDir, KEPT_FILE), { force: true });
  return new Error(`the kept renderer failed (the next build compiles anew): ${(e as Error)?.stack ?? e}`);
}

/**
 * What an edit build writes besides its answers and previews: every file of the served release
 * outside the layered folders (the same code built them from the same inputs), the changed
 * profiles' pages, and the files that change with any profile: the API description (its example)
 * and the docs page made from it; the sitemaps when a profile's status changed or one was added or
 * removed (made from the kept columns); the creators rows and the home page when a creator changed;
 * the home page (its count) and the filter of names when profiles were added or removed.
 */
async function renderEdit(renderer: PageRenderer, outDir: string, names: string[], edit: EditPlan): Promise<void> {
  const to = buildLayout(outDir);
  process.env.CONTENT_DIR = contentDir;
  // The home page lists the creators.
  // The home page lists the creators and counts the profiles.
  const home = edit.creatorsChanged || edit.namesChanged;
  const remade = new Set(['openapi.json', 'docs.html', ...(home ? ['index.html'] : []), ...(edit.namesChanged ? [USER_NAMES_FILE] : [])]);
  const isSitemap = (file: string) => /^sitemap(-\d+)?\.xml$/.test(file);
  const { kept } = edit;
  const sitemaps = edit.statusChanged
    ? siteSitemap({ siteUrl, users: kept.names.map((username, i) => ({ username, status: kept.suspended[i] ? 'suspended' as const : 'active' as const, hasCustomDomain: kept.domains[i] !== null })) })
    : [];
  const from = buildLayout(releasePath(distDir, servedRelease(distDir)!)).client;
  const made = new Set<string>();
  for (const file of listFiles(from)) {
    // A remade file's compressed siblings go with it: the compress step makes them again.
    const own = compressedBaseOf(file) ?? file;
    if (isLayered(file) || remade.has(own) || (edit.statusChanged && isSitemap(own))) continue;
    const dir = path.dirname(path.join(to.client, file));
    if (!made.has(dir)) fs.mkdirSync(dir, { recursive: true });
    made.add(dir);
    fs.copyFileSync(path.join(from, file), path.join(to.client, file));
  }
  try {
    await renderer.renderChangedPages(edit.index, names, to.client);
    await renderer.renderPaths(edit.index, ['/openapi.json', '/docs', ...(home ? ['/'] : [])], to.client);
  } catch (e) {
    throw keptRendererFailed(e);
  }
  for (const file of sitemaps) fs.writeFileSync(path.join(to.client, file.path.slice(1)), file.xml);
  if (edit.creatorsChanged) fs.writeFileSync(path.join(to.client, CREATORS_ROWS_FILE), JSON.stringify(creatorsRows(edit.index)));
  if (edit.namesChanged) {
    fs.mkdirSync(path.dirname(path.join(to.client, USER_NAMES_FILE)), { recursive: true });
    fs.writeFileSync(path.join(to.client, USER_NAMES_FILE), nameFilterBytes(kept.names));
  }
  fs.cpSync(path.join(keptDir, KEPT_SERVER_DIR), to.server, { recursive: true });
}

/** The example user of a whole build's API description, for the next edit build (edit-path.ts). */
function exampleOf(users: readonly PublicUser[]): KeptIndex['example'] {
  const example = exampleUser(users);
  return example ? { name: example.user.username, full: example.full } : null;
}
