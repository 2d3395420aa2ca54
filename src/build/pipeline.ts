// The build, one path for every build: lock -> plan -> render -> write -> publish.
// - lock: one build at a time (src/release/lock.ts); a second one refuses at once.
// - plan (plan.ts): the content against the served release's record; a cold build is a plan
//   against no record. It says which pages to render, which to link, which answers changed and
//   whether the release holds only what changed (layers).
// - render (render.ts): the profile pages and the pages made from the whole index, by Astro.
// - write (write.ts): previews, API files, handler files, the record, compressed siblings.
// - publish (publish.ts): the release is named and served in two renames; old ones are pruned.
// A failure at any step (bad content, a kill, a full disk) leaves the last good release served.
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import type { DeployTarget } from '../config.ts';
import { checkCommand, shownPath } from '../cli.ts';
import { formatProblem } from '../content/problems.ts';
import { BuildLockHeld, acquireBuildLock } from '../release/lock.ts';
import { LOCK_FILE, releasesDir, servedRelease } from '../release/releases.ts';
import { diskFault, diskFaultMessage, faultPoint } from './faults.ts';
import { repairWranglerRedirect } from './astro/wrangler-deploy-config.ts';
import { renderFingerprint } from './reuse/page-reuse.ts';
import { rendererDir } from './astro/keep-renderer.ts';
import { nothingChanged, planRelease, readContent, type ContentRead, type ReleasePlan } from './plan.ts';
import { compileRenderer, renderPages, type Rendered } from './render.ts';
import { startWriting, writeRelease, type Written } from './write.ts';
import { codingLayoutOf, type CodingLayout } from './files/compress.ts';
import { publishRelease, withdrawRelease } from './publish.ts';
import { EX_ELSEWHERE } from './rebuilds.ts';

/** What a build is asked to do: read once from the command line and the environment (scripts/build-site.ts). */
export interface BuildOptions {
  root: string;
  contentDir: string;
  distDir: string;
  siteUrl: string;
  target: DeployTarget;
  /** false: no compressed copies of pages and answers, the host compresses (PRECOMPRESS=0). */
  precompress: boolean;
  /** Asset files a Cloudflare Worker version may upload. */
  assetLimit: number;
  builtAt: Date;
  /** false: parse every file and render every page (PROFILES_INCREMENTAL=0). */
  incremental: boolean;
  /** How long before now a file must have changed for its stamp to prove its bytes (the tests' BUILD_SETTLE_MS). */
  settleMs: number | undefined;
  /** false: read every profile even when few changed (EDIT_PATH=0, for comparing). */
  editPath: boolean;
  /** false: write a whole release even when few files changed (RELEASE_LAYERS=0, for comparing). */
  layers: boolean;
  /** false: throw the kept renderer away and compile anew (KEPT_RENDERER=0). */
  keptRenderer: boolean;
  /** Astro's log level. */
  astroLogLevel: string | undefined;
  /** Render threads, when asked (RENDER_THREADS). */
  renderThreads: string | undefined;
  /** `--heap-growing-percent=…` that `npm run build` starts Node with, set again before many pages render. */
  heapCap: string | undefined;
  /** Print the machine-readable BENCH line (`npm run bench`). */
  benchReport: boolean;
  /**
   * The content files changed since release `since` (CHANGED_FILES, CHANGED_SINCE: `npm start`'s
   * watcher): an edit build stamps only those profiles; the content is checked after (build-site.ts).
   */
  changed: { since: string; files: string[] } | undefined;
  /**
   * BUILD_IF_CHANGED: no new release unless an edit build finds a profile changed since the served
   * release before this time (ms; Infinity: whenever). The check after a build from a list of
   * changed files passes that build's start: what changed later is the watcher's next build.
   */
  ifChangedBefore: number | undefined;
  /**
   * Only an edit build (or BUILD_IF_CHANGED finding nothing) here; one that must read every profile
   * returns EX_ELSEWHERE before it reads any: `npm start`'s builder, which holds the served record
   * (0.7 GB at 1,000,000 profiles), runs it in a process of its own (src/build/rebuilds.ts).
   */
  editOnly?: boolean;
}

/** A build stopped on purpose, with a message that says why and what to do: no stack trace. */
export class BuildRefused extends Error {}

/** What every step shares: the options, the code's fingerprint, and the timing of the steps. */
export interface Build {
  o: BuildOptions;
  /** renderFingerprint of the code and SITE_URL. */
  fingerprint: string;
  /**
   * What a page file's bytes depend on besides its inputs: the fingerprint and how the target keeps
   * compressed codings (compress.ts), so no build links a page another target stored otherwise.
   */
  pagesFingerprint: string;
  /** How this build keeps the compressed codings of pages and answers (compress.ts); undefined: none. */
  codings: CodingLayout | undefined;
  /** Where the renderer `astro build` kept for this code and target is (keep-renderer.ts). */
  keptKey: { fingerprint: string; target: DeployTarget };
  keptDir: string;
  /** `astro build` compiling this code, begun as the build started, when none was kept for it (render.ts `compileRenderer`). */
  compiling?: Promise<void>;
  /** The peak memory (KB) of the process that compiled, once it has ended (render.ts `compileElsewhere`). */
  compilePeakKb?: number;
  /** Runs one step, saying when it starts and how long it took. */
  step<T>(name: string, work: () => T | Promise<T>): Promise<T>;
  /** Seconds since the build started, as printed. */
  seconds(): string;
  timings: string[];
  started: number;
}

/** How a build ended. */
export interface BuildResult {
  /** Its exit code: 0, 1 (failed, or bad content), 2 (bad options), 65 (EX_ELSEWHERE), 75 (another build holds the lock). */
  code: number;
  /** Whether it read every profile (or compiled the code): what `npm start`'s builder does not stay for (rebuilds.ts). */
  readEveryProfile: boolean;
  /** The release it published, if it did. */
  published?: string;
  /** It stopped at problems in the content (code 1), not at a failure of its own (a full disk). */
  contentProblems?: boolean;
}

/**
 * One build, and the check after a build told which files changed (`o.changed`). That build
 * trusted the list for every other profile: once its release is served, the content is checked
 * (`BUILD_IF_CHANGED` as from the build's start: what changed later is the watcher's next build),
 * and anything the list left out is built. With `check: false` the caller checks, told when the
 * build began (`checkBefore`: npm start's builder starts a process for it). `untold`: these
 * options without the list.
 */
export async function runToldBuild(o: BuildOptions, untold: () => BuildOptions, check = true): Promise<BuildResult & { checkBefore?: number }> {
  const startedAt = Date.now();
  const built = await runBuild(o);
  // A build that read every profile (a static or Cloudflare one, or one of new code) trusted no list:
  // a check would build the same release again, and a rollback then go nowhere.
  if (built.code !== 0 || !o.changed || built.readEveryProfile) return built;
  if (!check) return { ...built, checkBefore: startedAt };
  const checked = await runBuild({ ...untold(), changed: undefined, ifChangedBefore: startedAt });
  // What the list left out does not build: nor does the whole, so what it published goes. Not for a
  // failure of the check's own (a full disk): the release was built from content that builds.
  if (checked.contentProblems && built.published) withdrawRelease(o.distDir, built.published);
  // Refused by another build's lock (75): that build looks at every file itself.
  return { code: checked.code === 75 ? 0 : checked.code, readEveryProfile: built.readEveryProfile || checked.readEveryProfile };
}

/** Whether this process stops at SIGINT and SIGTERM as a build should: set once, however many builds it runs. */
let exitsOnSignal = false;

/** Runs a build. */
export async function runBuild(o: BuildOptions): Promise<BuildResult> {
  const result: BuildResult = { code: 0, readEveryProfile: false };
  result.code = await runBuildSteps(o, result);
  return result;
}

/** The build's steps; returns its exit code, and says in `result` what it read, found and published. */
async function runBuildSteps(o: BuildOptions, result: BuildResult): Promise<number> {
  const heavy = () => { result.readEveryProfile = true; };
  const started = performance.now();
  // Until many pages render, V8's own heap growth (docs/scale.md "Memory of the build"):
  // validating and planning hold the whole index beside much garbage.
  if (o.heapCap) v8.setFlagsFromString('--heap-growing-percent=0');
  const timings: string[] = [];
  const fingerprint = renderFingerprint(o.root, o.siteUrl);
  const keptKey = { fingerprint, target: o.target };
  // KEPT_RENDERER=0: this build compiles anew and renders with its own copy, removed when it ends;
  // the store's copy stays untouched for the builds that may be rendering with it now.
  const keptDir = o.keptRenderer ? rendererDir(o.root, keptKey) : `${rendererDir(o.root, keptKey)}.own-${process.pid}`;
  if (!o.keptRenderer) {
    fs.rmSync(keptDir, { recursive: true, force: true });
    process.once('exit', () => fs.rmSync(keptDir, { recursive: true, force: true }));
  }
  const codings = codingLayoutOf(o.target, o.precompress);
  const build: Build = {
    o, fingerprint, keptKey, keptDir, timings, started, codings,
    pagesFingerprint: `${fingerprint}.${codings ?? 'plain'}`,
    seconds: () => ((performance.now() - started) / 1000).toFixed(1),
    async step(name, work) {
      const t0 = performance.now();
      process.stdout.write(`${name}…`);
      const elapsed = () => ((performance.now() - t0) / 1000).toFixed(1);
      let result;
      try {
        result = await work();
      } catch (e) {
        // The line ends before the reason is printed (on stderr, after it).
        process.stdout.write(` stopped after ${elapsed()} s\n`);
        throw e;
      }
      const s = elapsed();
      process.stdout.write(` ${s} s\n`);
      timings.push(`${name.toLowerCase()} ${s} s`);
      return result;
    },
  };

  // BUILD_IF_CHANGED looks before it locks: looking writes nothing, and a build that starts
  // meanwhile (`npm start`'s next edit) need not wait for it. It locks only to build what it found.
  if (o.ifChangedBefore !== undefined && await nothingChanged(build)) {
    reportNothingChanged(build);
    return 0;
  }
  fs.mkdirSync(releasesDir(o.distDir), { recursive: true });
  let lock;
  try {
    lock = acquireBuildLock(path.join(releasesDir(o.distDir), LOCK_FILE));
  } catch (e) {
    const disk = diskFault(e);
    if (disk) {
      console.error(`build failed: ${diskFaultMessage(disk, `${shownPath(releasesDir(o.distDir))}/`)}`);
      return 1;
    }
    if (!(e instanceof BuildLockHeld)) throw e;
    console.error(`build: ${e.message}`);
    return 75; // EX_TEMPFAIL: try again later
  }
  let saveValidationCache = () => {};
  const unlock = () => {
    // A build that stops after validating still keeps what it validated (plan.ts).
    saveValidationCache();
    lock.release();
    // A first build that failed leaves nothing: an empty releases folder goes (rmdir fails otherwise).
    try { fs.rmdirSync(releasesDir(o.distDir)); } catch { /* not empty: releases kept */ }
  };
  // Released on every exit but SIGKILL; a lock left by a dead build is taken over by the next.
  process.once('exit', unlock);
  if (!exitsOnSignal) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  exitsOnSignal = true;
  if (lock.tookOverFrom) {
    const dead = lock.tookOverFrom;
    console.warn(`build: took over the lock of build pid ${dead.pid} (started ${dead.startedAt}), which is no longer running.`);
  }
  await faultPoint('locked');
  // A build killed during a compile left `wrangler deploy` naming the compile's scratch folder.
  if (o.target === 'cloudflare') repairWranglerRedirect(o.root, o.distDir);
  // The code holds no content: a first build of it compiles beside validating (render.ts).
  // npm start's builder does not: a build that needs it runs in a process of its own (editOnly).
  if (!o.editOnly) build.compiling = compileRenderer(build);
  /** Ends a build that stops before rendering, once the compile it began has kept its renderer or failed. */
  const stop = async (code: number) => {
    await build.compiling?.catch(() => {});
    process.off('exit', unlock);
    unlock();
    return code;
  };

  const read = await readContent(build);
  if (!('unchanged' in read) && !('edit' in read && read.edit)) heavy();
  if ('elsewhere' in read) return stop(EX_ELSEWHERE);
  if ('unchanged' in read) {
    reportNothingChanged(build);
    return stop(0);
  }
  saveValidationCache = read.saveValidationCache;
  if ('problems' in read) {
    for (const p of read.problems) console.error(formatProblem(p));
    console.error(`\n${read.problems.length} problem(s) in ${shownPath(o.contentDir)}. Nothing was built; ${shownPath(o.distDir)}/ is untouched.`);
    console.error(`Fix each line above (the hint says how), then run \`${checkCommand(o.contentDir, process.env.SITE_URL ? o.siteUrl : undefined)}\` to try again quickly.`);
    result.contentProblems = true;
    return stop(1);
  }
  await faultPoint('validated');
  const release = await planRelease(build, read);
  const background = startWriting(build, read, release);
  let rendering: Promise<Rendered> | undefined;
  try {
    rendering = renderPages(build, read, release);
    const rendered = await rendering;
    const written = await writeRelease(build, read, release, background, rendered);
    const servedAfter = await publishRelease(build, release, background, () => {
      saveValidationCache();
      saveValidationCache = () => {};
      lock.release();
    });
    report(build, read, release, written, servedAfter);
    result.published = release.id;
    return 0;
  } catch (e) {
    await Promise.allSettled([background.clearing, background.writingUsers, rendering]);
    release.abandon();
    const disk = diskFault(e);
    // A full disk in words, then what it was doing: a stack of Node's internals helps nobody.
    if (disk) console.error(`build failed: ${diskFaultMessage(disk, `${shownPath(releasesDir(o.distDir))}/`)}\n  (${String((e as Error)?.message ?? e).split('\n')[0]})`);
    else console.error(`build failed: ${e instanceof BuildRefused ? e.message : (e as Error).stack ?? e}`);
    const now = servedRelease(o.distDir);
    console.error(`${shownPath(o.distDir)}/ ${now === release.id ? `serves the new release ${release.id}` : now ? `still serves release ${now}` : 'is untouched'}.`);
    return 1;
  } finally {
    process.off('exit', unlock);
    unlock();
  }
}

/** What a BUILD_IF_CHANGED build says when it found nothing to build. */
function reportNothingChanged(build: Build): void {
  const when = Number.isFinite(build.o.ifChangedBefore) ? ' before the last build began' : '';
  console.log(`Nothing else changed${when}: release ${servedRelease(build.o.distDir)} stays served (checked in ${build.seconds()} s).`);
}

/** The build's summary line, and for `npm run bench` one machine-readable line (the memory of every process added up). */
function report(build: Build, read: ContentRead, release: ReleasePlan, written: Written, servedAfter: string): void {
  const { o } = build;
  // The render threads' memory is in this process's peak; a compile's process is said beside it.
  const ownRssKb = process.resourceUsage().maxRSS;
  const memory = `${Math.round(ownRssKb / 1024)} MB${build.compilePeakKb ? ` (and ${Math.round(build.compilePeakKb / 1024)} MB in the process that compiled, while it ran)` : ''}`;
  const { layers, times, pages } = release;
  console.log(
    `Built ${read.userCount} profiles (${read.suspended} suspended), ${read.index.creators.length} active creators: ` +
    `${read.userCount} pages (${pages.render.size} rendered, ${pages.reuse.length} unchanged), ${written.userFiles} API files${layers ? ` (${times.changedUsers.length} changed)` : ''}, ${written.mediaFiles} images and ${written.previews} preview images in ${shownPath(o.distDir)}/ (release ${release.id}${layers ? `, holding only what changed since release ${layers.base}: ${Object.keys(layers.from).length} files` : ''}), ` +
    `in ${build.seconds()} s, served after ${servedAfter} s (${build.timings.join(', ')}), peak memory ${memory}.`,
  );
  if (o.benchReport) console.log(`BENCH ${JSON.stringify({ ms: Math.round(performance.now() - build.started), servedMs: Math.round(Number(servedAfter) * 1000), maxRssKb: ownRssKb, compressMs: written.compressMs, compressed: written.compressStats })}`);
}
