// The write step: what the release holds besides Astro's pages. The user answers are written while
// the pages render (`startWriting`: disk work beside CPU work); then the preview images, the other
// API files, media and handler files (write-build.ts, derived.ts), the release's record
// (record.ts) and info, and the compressed siblings (compress.ts).
import path from 'node:path';
import { buildLayout } from '../release/layout.ts';
import { releasesDir, writeReleaseInfo } from '../release/releases.ts';
import { PAGES_DIR, gatherLayers } from '../release/layers.ts';
import type { PublicUser } from '../schemas/api.ts';
import { exampleUser } from '../api/openapi.ts';
import { OG_IMAGES_PATH, previewFileOf } from '../ui/og-image.ts';
import { writePreviewImages, writeProfilePreviews } from '../ui/og-image-png.ts';
import { recycleUserFiles, removeTrees, writeApiFiles, writeEditFiles, writeUserFiles } from './files/write-build.ts';
import { keptIndexOf, type KeptIndex } from './reuse/kept-index.ts';
import { writeRecord } from './reuse/record.ts';
import { keepRetiredAssets } from './files/retired-assets.ts';
import { addStats, compressRelease, describeStats, emptyStats, type CompressStats } from './files/compress.ts';
import { assetLimitProblem, uploadedAssetFiles } from './hosts/cloudflare-assets.ts';
import { folderLimitWarning, foldersPastLimit } from './hosts/static-host-files.ts';
import { faultPoint } from './faults.ts';
import { BuildRefused, type Build } from './pipeline.ts';
import { USERS_DIR, keepWrittenRecord, servedRecord, type ContentRead, type ReleasePlan } from './plan.ts';
import type { Rendered } from './render.ts';

/** The layered folder of previews, as layers.ts names files. */
const OG_DIR = `${OG_IMAGES_PATH.replace(/^\//, '')}/`;

/** Work started before the pages render and finished after. */
export interface Background {
  /** The user answers, written into the release's staging folder. */
  writingUsers: Promise<number>;
  /** The retired releases and what dead builds left, removed. */
  clearing: Promise<void>;
  /** What the user files' thread compressed as it wrote (compress.ts). */
  compressed: CompressStats;
  /**
   * Whether the answers overwrite a retired release's: where codings are siblings, those it leaves
   * as they were keep the siblings they had, none if that release was Cloudflare's, so the compress
   * step looks at them.
   */
  recycled: boolean;
}

/**
 * Starts writing the user answers and removing old releases. The answers overwrite those of a
 * retired release (write-build.ts), except in a full build (PROFILES_INCREMENTAL=0); a layered
 * release writes only those that changed.
 */
export function startWriting(build: Build, read: ContentRead, release: ReleasePlan): Background {
  const { index } = read;
  const { layers, times } = release;
  const recycled = recycleUserFiles(release.retired[0], release.usersStaging, build.o.incremental && !layers);
  const clearing = removeTrees(release.trash);
  const changedUsers = layers && new Set(times.changedUsers);
  // Compressed as they are written, beside the render (Cloudflare compresses itself).
  const compressed = emptyStats();
  const layout = build.codings;
  const writingUsers = writeUserFiles(release.usersStaging, index, times, changedUsers ? index.users.filter((u) => changedUsers.has(u.username)) : index.users, layout && { stats: compressed, layout }, recycled);
  // Awaited after the render (writeRelease, publishRelease): a failure before then (a full disk) is
  // handled there, not by Node as an unhandled rejection that ends the build before it cleans up.
  writingUsers.catch(() => {});
  clearing.catch(() => {});
  return { clearing, writingUsers, compressed, recycled };
}

export interface Written {
  userFiles: number;
  mediaFiles: number;
  previews: number;
  compressMs: number;
  compressStats: CompressStats | undefined;
}

/** Writes everything but the pages into the new release, complete when this returns. */
export async function writeRelease(build: Build, read: ContentRead, release: ReleasePlan, background: Background, rendered: Rendered): Promise<Written> {
  const { o } = build;
  const { index, edit, whole } = read;
  const { layers, times, id, fresh, served } = release;
  const freshLayout = buildLayout(fresh);
  const avatarsDir = path.join(o.contentDir, 'avatars');
  // Link previews for profiles whose avatar crawlers cannot use (src/ui/og-image.ts); before the
  // API files, whose `_headers` (static and Cloudflare builds) covers every file of the build.
  const previews = await build.step('Writing preview images', async () => {
    if (edit && layers) {
      // Which previews the release uses, from the kept column: those of the changed profiles are written if new.
      const had = new Set(served.files(OG_DIR));
      // A few distinct files among a million entries: each named once.
      const files = new Set<string>();
      for (const file of edit.plan.kept.previews) if (file !== null) files.add(file);
      const used = new Set([...files].map((file) => `${OG_DIR}${file}`));
      const avatarOf = new Map(index.avatars);
      const needing = edit.plan.changed.filter((u) => previewFileOf(avatarsDir, u, avatarOf.get(u.username)) !== null);
      await writePreviewImages(path.join(freshLayout.client, OG_DIR), needing, (file) => had.has(`${OG_DIR}${file}`));
      for (const file of used) if (!had.has(file)) layers.from[file] = id;
      for (const file of had) if (!used.has(file)) layers.from[file] = null;
      return used.size;
    }
    if (!layers) return (await writeProfilePreviews(freshLayout.client, index, avatarsDir)).length;
    // A preview's name says what is in it, and the code is the same: those the served release has are kept.
    const had = new Set(served.files(OG_DIR));
    const used = await writeProfilePreviews(freshLayout.client, index, avatarsDir, (file) => had.has(`${OG_DIR}${file}`));
    for (const file of used) if (!had.has(`${OG_DIR}${file}`)) layers.from[`${OG_DIR}${file}`] = id;
    const usedNow = new Set(used.map((f) => `${OG_DIR}${f}`));
    for (const file of had) if (!usedNow.has(file)) layers.from[file] = null;
    return used.length;
  });
  const stats = await build.step('Finishing the API files', async () => {
    await background.writingUsers;
    let written;
    if (edit && layers) {
      writeEditFiles(fresh, index, release.usersStaging, times, edit.plan.changes);
      const avatars = new Set<string | null>(edit.plan.kept.avatars);
      written = { userFiles: read.userCount, mediaFiles: avatars.size - (avatars.has(null) ? 1 : 0) + index.decorationFiles.length };
    } else {
      written = writeApiFiles(fresh, index, release.usersStaging, o.contentDir, times, o.target, layers && {
        id, layers, served: served.at, servedFiles: served.files,
      });
    }
    const kept = edit?.plan.kept ?? (whole?.others === undefined ? undefined : keptIndexOf(
      index, build.pagesFingerprint, whole.others, (name) => read.stamps.get(name), (name) => whole.profileDigests.get(name), (user, avatar) => previewFileOf(avatarsDir, user, avatar),
      whole.decorationEntries, exampleOf(index.users), whole.warnings,
    ));
    // Lines of rows the same as the served record's are copied from it (record.ts).
    const record = writeRecord(freshLayout.record, { manifest: release.pages.manifest, times: times.record(), kept, files: read.digests }, served.id ? servedRecord(build, served.id) : undefined);
    // The next build of this process (the check after, `npm start`'s next edit) need not read it.
    keepWrittenRecord(o.distDir, id, freshLayout.record, record);
    // Read from the base, this release and the one it replaces, no older one (layers.ts).
    if (layers) gatherLayers(releasesDir(o.distDir), freshLayout.client, id, layers, served.id);
    const retiredAssets = keepRetiredAssets(served.id ? served.client : undefined, served.retiredAssets, freshLayout.client, index.builtAt);
    writeReleaseInfo(fresh, { id, previous: served.id ?? null, builtAt: index.builtAt, ...(layers && { layers }), ...(Object.keys(retiredAssets).length && { retiredAssets }) });
    return written;
  });
  // Compressed codings of what this release wrote itself (compress.ts); a layered release reads
  // those of the files it leaves to others from there. Cloudflare compresses itself.
  let compressStats: CompressStats | undefined;
  let compressMs = 0;
  const layout = build.codings;
  if (layout) {
    const t0 = performance.now();
    // The user answers are compressed by their thread as it writes them (write-build.ts), and so are
    // the pages by the kept renderer. Recycled answers it found the same keep the siblings they had
    // (none if their release was Cloudflare's); packed, it packs any it finds plain (user-files.ts).
    const usersAsWritten = !background.recycled || layout === 'packed';
    const compressedAsWritten = [...usersAsWritten ? [USERS_DIR] : [], ...rendered.pagesCompressed ? [PAGES_DIR] : []];
    compressStats = await build.step('Compressing', () => compressRelease(freshLayout.client, layout, compressedAsWritten, rendered.linked));
    addStats(compressStats, background.compressed);
    addStats(compressStats, rendered.compressed);
    compressMs = Math.round(performance.now() - t0);
    console.log(`  ${describeStats(compressStats)}`);
  }
  await faultPoint('written');
  if (o.target === 'cloudflare') {
    // Cloudflare refuses an upload past the plan's file limit; the build says so before serving it.
    const problem = assetLimitProblem(uploadedAssetFiles(freshLayout.client).length, o.assetLimit, read.userCount);
    if (problem) throw new BuildRefused(problem);
  }
  // A static build serves many hosts: only Netlify refuses a full folder, so this is a warning.
  if (o.target === 'static') for (const past of foldersPastLimit(freshLayout.client)) console.warn(folderLimitWarning(past, layout !== undefined));
  return { ...stats, previews, compressMs, compressStats };
}

/** The example user of a whole build's API description, for the next edit build (edit-path.ts). */
function exampleOf(users: readonly PublicUser[]): KeptIndex['example'] {
  const example = exampleUser(users);
  return example ? { name: example.user.username, full: example.full } : null;
}
