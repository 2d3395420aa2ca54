// The plan step: the content against the served release's record (record.ts). A rebuild after a few
// profile edits reads only those (edit-path.ts); any other build reads and validates every file,
// and a cold build is the same plan against no record. Then which pages to render or link
// (page-reuse.ts), which answers changed (answer-times.ts), and whether the new release can hold
// only what changed since the served one (src/release/layers.ts).
import fs from 'node:fs';
import path from 'node:path';
import { validationCacheFile } from '../config.ts';
import { loadContentFast } from '../content/load.ts';
import { formatProblem, type ContentProblem } from '../content/problems.ts';
import { buildSiteIndex, type SiteIndex } from '../model/site-index.ts';
import { mediaAddressesFor } from '../model/public-user.ts';
import type { PublicUser } from '../schemas/api.ts';
import { USERS_PATH } from '../api/handler.ts';
import { buildLayout } from '../release/layout.ts';
import { layeredFiles, locator, maxLayeredFiles, type Layers } from '../release/layers.ts';
import {
  KEEP_RELEASES, adoptPlainBuild, buildingPath, leftovers, listReleases, nextReleaseId, readReleaseInfo, readsFromOf, recoverLink,
  releasePath, releasesDir, releasesToPrune, retireRelease, servedRelease,
} from '../release/releases.ts';
import { AnswerTimes } from './reuse/answer-times.ts';
import { changedProfiles, planEdit, readCachedInputs, type EditPlan } from './reuse/edit-path.ts';
import { otherDigestsNow, validKeptIndex } from './reuse/kept-index.ts';
import { digestFiles, digestMap, folderDigest, validFileDigests, type FileDigests } from '../content/file-digests.ts';
import { KeyColumn } from './reuse/key-column.ts';
import { avatarKey, goneNames, planPages, profilePageKey, userInputKey, validManifest, type PageManifest, type PagePlan } from './reuse/page-reuse.ts';
import { openKeptRenderer, type PageRenderer } from './render.ts';
import { readRecord, type ReleaseRecord } from './reuse/record.ts';
import { faultPoint } from './faults.ts';
import type { Build, BuildOptions } from './pipeline.ts';
import { identityOf } from '../release/coded-file.ts';
import { stampOf } from '../content/file-stamps.ts';
import { shownPath } from '../cli.ts';

/** The layered folder of user answers, as layers.ts names files. */
export const USERS_DIR = `${USERS_PATH.replace(/^\//, '')}/`.replace(/\/+$/, '/');

/** An edit build's plan, with the kept renderer that renders it. */
export interface EditRead {
  plan: EditPlan;
  renderer: PageRenderer;
  pages: PagePlan;
  times: AnswerTimes;
}

/** What the build read of the content. */
export interface ContentRead {
  /** The public index; an edit build's holds the changed profiles (and its `columns` the whole site's). */
  index: SiteIndex;
  /** username → the stamp that proves its profile file's bytes. */
  stamps: Map<string, string>;
  /** The digests of the content files outside `profiles/` (undefined: the folder could not be walked). */
  digests: FileDigests | undefined;
  /** The digest of an avatar file's bytes, for page keys (page-reuse.ts avatarKey). */
  avatarDigest: (file: string) => string;
  edit: EditRead | undefined;
  /** A whole read's extras for the kept index: the digest of the files outside profiles/, each profile's bytes where its stamp proved nothing, the decorations, the warnings. */
  whole: { others: string | undefined; profileDigests: Map<string, string>; decorationEntries: [string, string, string][]; warnings: string[] } | undefined;
  /** How many profiles this build has: an edit build's index holds the changed ones only. */
  userCount: number;
  suspended: number;
  /** Writes the validation cache when it was written late; a no-op after. */
  saveValidationCache: () => void;
}

/** Reads the content: an edit build's few files, or every file, validated; for BUILD_IF_CHANGED, maybe nothing changed. */
export async function readContent(build: Build): Promise<ContentRead | { problems: ContentProblem[]; saveValidationCache: () => void } | { unchanged: string } | { elsewhere: true }> {
  const { o } = build;
  const edit = await editBuild(build);
  if (edit === 'unchanged') return { unchanged: servedRelease(o.distDir)! };
  // npm start's builder, which holds the served record, hands a build of every profile to a process of its own.
  if (!edit && o.editOnly) return { elsewhere: true };
  if (edit) {
    for (const w of edit.plan.kept.warnings) console.warn(`warning: ${w}`);
    const { plan } = edit;
    return {
      index: plan.index, stamps: plan.stamps, digests: plan.digests, avatarDigest: avatarDigestIn(o.contentDir, plan.digests), edit, whole: undefined, userCount: plan.kept.names.length,
      suspended: plan.kept.suspended.reduce((a, b) => a + b, 0), saveValidationCache: () => {},
    };
  }
  return build.step('Validating content', async () => {
    // The bytes of the files outside profiles/, digested before they are read: page keys take the
    // avatars' (avatarKey), the next build's edit path all of them (kept-index.ts).
    const servedId = servedRelease(o.distDir);
    const served = servedId ? servedRecord(build, servedId).files : undefined;
    const digests = otherDigestsNow(o.contentDir, validFileDigests(served), o.settleMs);
    const others = o.target === 'node' && digests ? folderDigest(digests) : undefined;
    const { content, problems, warnings, saveCache, stamps, digests: profileDigests } = await loadContentFast(o.contentDir, {
      cacheFile: validationCacheFile(o.root, o.contentDir), ignoreCache: !o.incremental, siteUrl: o.siteUrl, deferCacheWrite: true, settleMs: o.settleMs,
    });
    for (const w of warnings) console.warn(`warning: ${formatProblem(w)}`);
    if (problems.length) {
      saveCache();
      return { problems, saveValidationCache: () => {} };
    }
    const decorationEntries = [...content.decorations.values()].map((d): [string, string, string] => [d.id, d.name, d.file]);
    const index = buildSiteIndex(content, { siteUrl: o.siteUrl, builtAt: o.builtAt, media: mediaAddressesFor(o.target) });
    return {
      index, stamps, digests, avatarDigest: avatarDigestIn(o.contentDir, digests), edit: undefined,
      whole: { others, profileDigests, decorationEntries, warnings: warnings.map((w) => formatProblem(w)) },
      userCount: index.users.length, suspended: index.users.filter((u) => u.status === 'suspended').length, saveValidationCache: saveCache,
    };
  });
}

/**
 * For BUILD_IF_CHANGED, before the build takes the lock: whether no profile changed since the served
 * release (before the time it gives), as an edit build finds it. Reads only; false when it cannot tell.
 */
export async function nothingChanged(build: Build): Promise<boolean> {
  return servedRelease(build.o.distDir) !== undefined && (await editBuild(build, { lookOnly: true })) === 'unchanged';
}

/**
 * An edit build (edit-path.ts) when this one can be: few profiles changed in place since the served
 * release, which the same code built today; its pages then rendered with the kept renderer. Else
 * undefined, and the build reads every profile.
 */
async function editBuild(build: Build, { lookOnly = false } = {}): Promise<EditRead | 'unchanged' | undefined> {
  const { o } = build;
  if (!o.incremental || o.target !== 'node' || !o.editPath || !o.layers || !o.keptRenderer) return undefined;
  const id = servedRelease(o.distDir);
  if (!id) return undefined;
  const layout = buildLayout(releasePath(o.distDir, id));
  const info = readReleaseInfo(o.distDir, id);
  const record = () => servedRecord(build, id);
  if (!info) return undefined;
  const at = locator(releasesDir(o.distDir), layout.client, info.layers);
  const readServed = (file: string) => {
    const dir = at(file);
    try { return dir === null ? undefined : Buffer.from(identityOf(fs.readFileSync(path.join(dir, file)))); } catch { return undefined; }
  };
  let why = '';
  const t0 = performance.now();
  const made = await build.step('Finding the changed profiles', async () => {
    // A list of changed files is trusted only against the release it was made since, and when it names what changed.
    const named = o.changed && o.changed.since !== id ? { reason: `they were listed since release ${o.changed.since}, not the served ${id}` } : o.changed && changedProfiles(o.contentDir, o.changed.files);
    if (named && 'reason' in named) console.log(`  (every profile is stamped, not only the changed files: ${named.reason})`);
    const plan = await planEdit({
      contentDir: o.contentDir, fingerprint: build.pagesFingerprint, builtAt: o.builtAt, siteUrl: o.siteUrl, cacheFile: validationCacheFile(o.root, o.contentDir), readServed, settleMs: o.settleMs,
      changedNames: named && 'names' in named ? named.names : undefined, listedOthers: named && 'names' in named ? named.listedOthers : undefined, ifChangedBefore: o.ifChangedBefore,
      kept: () => validKeptIndex(record().kept),
      digests: () => validFileDigests(record().files),
      meanwhile: () => ({ manifest: record().manifest, times: new AnswerTimes(o.builtAt.toISOString(), record().times) }),
    });
    // BUILD_IF_CHANGED, as after a build from a list of changed files: nothing it left out.
    if ('unchanged' in plan) return 'unchanged' as const;
    if ('reason' in plan) return void (why = plan.reason);
    if (lookOnly) return undefined;
    const layered = Object.keys(info.layers?.from ?? {}).length;
    if (layered + 3 * (plan.changed.length + plan.removed.length) > maxLayeredFiles(plan.kept.names.length)) return void (why = 'the served release holds too many changes: a whole release is due');
    const pages = editPages(build, plan, plan.meanwhile.manifest, plan.meanwhile.times);
    if ('reason' in pages) return void (why = pages.reason);
    const renderer = await openKeptRenderer(build);
    if (!renderer) return void (why = 'no kept renderer');
    return { plan, renderer, ...pages };
  });
  if (!made && !lookOnly) console.log(`  (every profile is read: ${why})`);
  // Not for a build told the files, nor for the check after one (BUILD_IF_CHANGED): they are the faster way.
  const hint = o.changed || o.ifChangedBefore !== undefined ? undefined : stampingHint(performance.now() - t0);
  if (hint) console.log(hint);
  return made;
}

/** Past this, finding the changed profiles by stamping every file is worth a word on the faster way. */
export const SLOW_FINDING_MS = 3000;

/**
 * What to say when a build told of no changed files took `ms` to find them: stamping every file of
 * a large `profiles/` (4-6 s at 1,000,000) is what `npm start` and the post-merge hook spare.
 */
export function stampingHint(ms: number): string | undefined {
  if (ms < SLOW_FINDING_MS) return undefined;
  return `  (finding the changed profiles took ${(ms / 1000).toFixed(1)} s, stamping every file of profiles/: \`npm start\` and the post-merge hook `
    + 'tell the build which files changed, and it looks at those only: docs/operators.md#edits-going-live)';
}

/** The pages to render and the answer times of an edit build, from the served release's records. */
function editPages(build: Build, edit: EditPlan, manifest: PageManifest | undefined, times: AnswerTimes): { pages: PagePlan; times: AnswerTimes } | { reason: string } {
  const { kept, servedAt } = edit;
  const names = kept.names;
  if (!manifest || manifest.fingerprint !== build.pagesFingerprint || manifest.names.length !== edit.servedNames.length) return { reason: 'the served release\'s page manifest is not this code\'s' };
  // Unchanged answers keep the timestamp, and so the bytes, they were published with (answer-times.ts).
  if (!times.hasPrevious) return { reason: 'the served release has no answer times' };
  const changed = new Map(edit.changed.map((u) => [u.username, u]));
  const avatarDigestOf = avatarDigestIn(build.o.contentDir, edit.digests);
  // The served manifest's entries at each profile's place in this build (an added one's made below).
  // With the same names, its own columns, copied when a changed profile's entry differs: the
  // record's writer compares no column that is the served one (record.ts `sameRows`).
  const sameNames = names === manifest.names && manifest.inputs !== undefined;
  // Names came or went: the served keys by place (an added profile's are null until made below).
  let pages = sameNames ? manifest.pages : manifest.pages.gather(edit.servedAt);
  let inputs = sameNames ? manifest.inputs! : manifest.inputs?.gather(edit.servedAt) ?? new KeyColumn(names.length);
  let copied = !sameNames;
  const put = (i: number, page: string, input: string | null) => {
    if (!copied && pages.has(i, page) && inputs.has(i, input)) return;
    if (!copied) [pages, inputs, copied] = [pages.copy(), inputs.copy(), true];
    pages.set(i, page);
    inputs.set(i, input);
  };
  const render = new Set<string>();
  const reuse: string[] = [];
  // Every other answer keeps its record by its place in the served release: no Map of every name.
  if (!times.carry(names, edit.servedAt, changed)) return { reason: 'the served release has no answer time for every profile' };
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const j = servedAt[i]!;
    if (j >= 0 && manifest.names[j] !== name) return { reason: 'the served release\'s page manifest names other profiles' };
    const user = changed.get(name);
    if (!user) {
      reuse.push(name);
      continue;
    }
    const json = JSON.stringify(user);
    const stamp = edit.stamps.get(name);
    const avatar = avatarKey(kept.avatars[i], avatarDigestOf);
    const key = profilePageKey(user, avatar, json);
    if (j >= 0 && manifest.pages.has(j, key)) reuse.push(name);
    else render.add(name);
    put(i, key, stamp === undefined ? null : userInputKey(stamp, user, avatar));
    times.user(name, json, j);
  }
  return { pages: { render, reuse, manifest: { ...manifest, names, pages, inputs }, previousNames: manifest.names, sameInputs: new Set() }, times };
}

/** The new release: its id and folders, the served release it may read from, and what it holds. */
export interface ReleasePlan {
  id: string;
  /** Where the release is written until it is complete. */
  fresh: string;
  /** Where the user answers are written while pages render (write-build.ts). */
  usersStaging: string;
  /** Releases this build removes, retired (renamed) already; the first one's user files are recycled. */
  retired: string[];
  /** Folders to remove: the retired releases and what dead builds left. */
  trash: string[];
  served: ServedRelease;
  pages: PagePlan;
  times: AnswerTimes;
  /** When the release holds only what changed since the served one. */
  layers: Layers | undefined;
  /** Removes what a failed build made. */
  abandon(): void;
}

/** The release being served, where the new one may read or link from. */
export interface ServedRelease {
  id: string | undefined;
  client: string;
  layers: Layers | undefined;
  /** Where the served release holds a file (it may read some from others: layers.ts), or null. */
  at: (file: string) => string | null;
  /** The served release's files of a layered folder. */
  files: (dir: string) => string[];
  /** The assets it keeps for pages cached before it (src/build/files/retired-assets.ts). */
  retiredAssets: Record<string, string> | undefined;
}

/**
 * Prepares the new release: a plain dist/ folder from before releases becomes the first release;
 * what dead builds left is found, and the releases this build prunes are retired. Then the plan of
 * its pages, answers and layers against the served release.
 */
export async function planRelease(build: Build, read: ContentRead): Promise<ReleasePlan> {
  const { o } = build;
  const distDir = o.distDir;
  const adopted = adoptPlainBuild(distDir);
  if (adopted.length) console.log(`Kept the earlier build${adopted.length > 1 ? 's' : ''} as release ${adopted.join(' and ')}.`);
  const relinked = recoverLink(distDir);
  if (relinked) console.warn(`build: ${shownPath(distDir)} was missing; it serves release ${relinked} again.`);
  const trash = leftovers(distDir);
  const servedId = servedRelease(distDir);
  const id = nextReleaseId(distDir);
  // Retired now (each in one rename), so the user files of one can be recycled: never a kept release.
  const retired = releasesToPrune(listReleases(distDir), servedId, id, KEEP_RELEASES, readsFromOf(distDir)).map((r) => retireRelease(distDir, r));
  trash.push(...retired);
  await faultPoint('cleaned');

  const servedLayout = buildLayout(servedId ? releasePath(distDir, servedId) : distDir);
  const servedInfo = servedId ? readReleaseInfo(distDir, servedId) : undefined;
  const served: ServedRelease = {
    id: servedId, client: servedLayout.client, layers: servedInfo?.layers,
    at: locator(releasesDir(distDir), servedLayout.client, servedInfo?.layers),
    files: (dir: string) => layeredFiles(releasesDir(distDir), servedLayout.client, servedInfo?.layers, dir),
    retiredAssets: servedInfo?.retiredAssets,
  };
  const fresh = buildingPath(distDir, id);
  const usersStaging = `${fresh}.users`;
  const abandon = () => {
    fs.rmSync(fresh, { recursive: true, force: true });
    fs.rmSync(usersStaging, { recursive: true, force: true });
    // Complete but never served (a failure between the two renames): not a release to roll back to.
    if (servedRelease(distDir) !== id && fs.existsSync(releasePath(distDir, id))) fs.rmSync(retireRelease(distDir, id), { recursive: true, force: true });
  };
  const common = { id, fresh, usersStaging, retired, trash, served, abandon };
  if (read.edit) {
    const { pages, times, plan } = read.edit;
    return { ...common, pages, times, layers: editLayers(served, id, pages, times, plan.removed) };
  }
  // Pages whose profile and code are unchanged since the build being served are linked from it, not
  // rendered (page-reuse.ts); PROFILES_INCREMENTAL=0 renders them all.
  let everyPage: string | undefined;
  const plan = await build.step('Finding what changed', () => {
    const { index, stamps } = read;
    const record = servedId ? servedRecord(build, servedId) : readRecord(servedLayout.record);
    // Each user's JSON text made at most once, for the page key and the answer's hash, in a rebuild
    // (which may be layered); not at all for a user whose inputs are those of the served release.
    // Kept only where a second call may come (layersOfThisBuild, against a served release this code
    // built): a cold build or one of new code asks once a user, and keeping every text (1 GB at
    // 1,000,000 profiles) made its planning 18.3-24.2 s instead of 10.5 s, the collector marking them
    // again and again (docs/scale.md).
    const layerable = servedId !== undefined && record.manifest?.fingerprint === build.pagesFingerprint;
    const json = new Map<PublicUser, string>();
    const jsonOf = !layerable ? (u: PublicUser) => JSON.stringify(u) : (u: PublicUser) => {
      let text = json.get(u);
      if (text === undefined) json.set(u, text = JSON.stringify(u));
      return text;
    };
    const avatarOf = new Map(index.avatars);
    const inputKeyOf = (u: PublicUser) => {
      const stamp = stamps.get(u.username);
      return stamp === undefined ? undefined : userInputKey(stamp, u, avatarKey(avatarOf.get(u.username), read.avatarDigest));
    };
    const pages = planPages(index, build.pagesFingerprint, record.manifest, () => served.files('p/').map((f) => f.slice('p/'.length)), o.incremental, o.incremental ? jsonOf : undefined, inputKeyOf, read.avatarDigest);
    if (servedId && o.incremental && pages.reuse.length === 0 && pages.render.size > 0) everyPage = whyEveryPage(build, servedId, record.manifest);
    // Unchanged answers keep the timestamp, and so the bytes, they were published with (answer-times.ts).
    const times = new AnswerTimes(index.builtAt, record.times, !o.incremental);
    return { ...common, pages, times, layers: layersOfThisBuild(build, read, served, servedInfo?.builtAt, id, pages, times, jsonOf) };
  });
  // At a million profiles that is minutes: the operator is told why, after the step's line.
  if (everyPage) console.log(`  (every page is rendered: ${everyPage})`);
  return plan;
}

/**
 * Why a build renders every page though a release is served, when it is not that every profile
 * changed: the served release's pages were made by other code or settings (`renderFingerprint`:
 * src/, public/, the config, the lock file, SITE_URL; and PRECOMPRESS), or it keeps no page list.
 */
function whyEveryPage(build: Build, servedId: string, manifest: PageManifest | undefined): string | undefined {
  const kept = validManifest(manifest);
  if (!kept) return `release ${servedId} keeps no list of its pages that this code reads`;
  if (kept.fingerprint === build.pagesFingerprint) return undefined;
  return `release ${servedId} was made by other code or settings: a change in src/, public/, astro.config.mjs, tsconfig.json or package-lock.json, or another SITE_URL or PRECOMPRESS`;
}

/**
 * This release holds only what changed (layers.ts) when the served release can be its base: the
 * code is the same (so are the bytes of every unchanged file), the target is the Node server (a
 * static host or Workers upload one folder, so theirs are whole), and few enough files changed.
 */
function layersOfThisBuild(
  build: Build, read: ContentRead, served: ServedRelease, servedBuiltAt: string | undefined, id: string,
  plan: PagePlan, times: AnswerTimes, jsonOf: (user: PublicUser) => string,
): Layers | undefined {
  const { o } = build;
  if (!o.incremental || !o.layers || o.target !== 'node' || !served.id || !times.hasPrevious || plan.reuse.length === 0) return undefined;
  // The same code as the served release (planPages compared the fingerprints), read once.
  const previousNames = plan.previousNames;
  if (!previousNames) return undefined;
  const { index } = read;
  const layers: Layers = served.layers ? { base: served.layers.base, from: { ...served.layers.from } } : { base: served.id, from: {} };
  // The same public user on the same date (accountAgeDays) has the same answer: its record is kept
  // unhashed. Others are hashed as JSON text, not bytes: the same hash, without a buffer per user.
  const sameDay = servedBuiltAt?.slice(0, 10) === index.builtAt.slice(0, 10);
  for (const user of index.users) {
    if (sameDay && plan.sameInputs.has(user.username) && times.keep(user.username)) continue;
    times.user(user.username, jsonOf(user));
  }
  for (const name of plan.render) layers.from[`p/${name}.html`] = id;
  for (const name of times.changedUsers) layers.from[`${USERS_DIR}${name}`] = id;
  for (const name of goneNames(previousNames, plan.manifest.names)) {
    layers.from[`p/${name}.html`] = null;
    layers.from[`${USERS_DIR}${name}`] = null;
  }
  return Object.keys(layers.from).length <= maxLayeredFiles(index.users.length) ? layers : undefined;
}

/** An edit build's layers: the served release's, the changed pages and answers of this one, and the removed profiles' gone. */
function editLayers(served: ServedRelease, id: string, plan: PagePlan, times: AnswerTimes, removed: readonly string[]): Layers {
  const layers: Layers = served.layers ? { base: served.layers.base, from: { ...served.layers.from } } : { base: served.id!, from: {} };
  for (const name of plan.render) layers.from[`p/${name}.html`] = id;
  for (const name of times.changedUsers) layers.from[`${USERS_DIR}${name}`] = id;
  for (const name of removed) {
    layers.from[`p/${name}.html`] = null;
    layers.from[`${USERS_DIR}${name}`] = null;
  }
  return layers;
}

/**
 * The digest of an avatar file's bytes (page-reuse.ts avatarKey), from the digests of the files
 * outside profiles/; read from the file when there are none (a folder that cannot be walked).
 */
function avatarDigestIn(contentDir: string, digests: FileDigests | undefined): (file: string) => string {
  const known = digests ? digestMap(digests) : new Map<string, string>();
  return (file) => known.get(`avatars/${file}`) ?? digestFiles(path.join(contentDir, 'avatars'), [file], undefined).digests[0]!;
}

/** The record last read, with the identity of its file then: releases never change once written. */
let lastRecord: { file: string; identity: string; record: ReleaseRecord } | undefined;

/**
 * The record of release `id`, read once however many steps, and builds in one process, ask: 137 MB
 * and about 1 s to read at 1,000,000 profiles, which `npm start`'s builder reads while it waits for
 * the next edit (src/build/rebuilds.ts). Only the last one read is kept.
 */
export function servedRecord(build: Build, id: string): ReleaseRecord {
  return readServedRecord(build.o.distDir, id);
}

/**
 * What the next edit build reads first, read now so that it finds it in memory (`npm start`'s
 * builder, between builds): the served release's record, and what the edit path takes of the
 * validation cache (edit-path.ts `readCachedInputs`).
 */
export function readForNextBuild(o: BuildOptions): void {
  const id = servedRelease(o.distDir);
  if (id) readServedRecord(o.distDir, id);
  readCachedInputs(validationCacheFile(o.root, o.contentDir));
}

/**
 * The record a build wrote for release `id` (at `writtenAt`, before the release is named), as
 * readRecord will read it once the release is served (record.ts `writeRecord`): the record the next
 * build of this process reads, unless the file has changed since.
 */
export function keepWrittenRecord(distDir: string, id: string, writtenAt: string, record: ReleaseRecord | undefined): void {
  const identity = record?.source && stampOf(writtenAt)?.stamp;
  if (!identity) return;
  const file = buildLayout(releasePath(distDir, id)).record;
  // Its lines are read (copied) from where the release will be.
  lastRecord = { file, identity, record: Object.defineProperty({ ...record }, 'source', { value: { ...record.source!, file }, enumerable: false }) };
}

/** The record of release `id` of `distDir`, from memory when its file is the one read last. */
export function readServedRecord(distDir: string, id: string): ReleaseRecord {
  const file = buildLayout(releasePath(distDir, id)).record;
  const identity = stampOf(file)?.stamp ?? '';
  if (lastRecord?.file === file && lastRecord.identity === identity && identity) return lastRecord.record;
  lastRecord = undefined;
  const record = readRecord(file);
  if (identity) lastRecord = { file, identity, record };
  return record;
}
