// Writes what the build adds beside Astro's output: the pre-rendered API files, the media the
// on-demand routes serve, and the site index the server loads, into a new release (releases.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { CREATORS_PATH, USERS_PATH } from '../../api/handler.ts';
import { prerenderedUserBody, userData } from '../../api/prerendered.ts';
import { columnsOf } from '../../model/site-index.ts';
import { handlerFiles, type ColumnChanges } from '../derived.ts';
import { answerOnlyHeaders, compressedBaseOf } from '../../http/headers.ts';
import { ContentReader } from '../../content/read-file.ts';
import { buildLayout } from '../../release/layout.ts';
import type { SiteIndex } from '../../model/site-index.ts';
import type { DeployTarget } from '../../config.ts';
import { writeStaticHostFiles } from '../hosts/static-host-files.ts';
import { writeStaticHostHeaders } from '../hosts/static-host-headers.ts';
import { writeStaticHostRedirects } from '../hosts/static-host-redirects.ts';
import { writeUserBatch, type UserFilesBatch, type UserFilesTarget } from './user-files.ts';
import { addStats, type CodingLayout, type CompressStats } from './compress.ts';
import type { AnswerTimes } from '../reuse/answer-times.ts';
import type { Layers } from '../../release/layers.ts';
import type { PublicUser } from '../../schemas/api.ts';

export interface WriteStats {
  userFiles: number;
  mediaFiles: number;
}

/** Users per batch sent to the writing thread: ~1 MB, and at most two batches exist at a time. */
const USERS_PER_BATCH = 1_000;
/**
 * Up to this many users (an edit, a small site) are written by the build's own thread: a thread
 * takes ~70 ms to start, more than writing them (~0.2 ms a user, compressed).
 */
const USERS_IN_THIS_THREAD = 64;

/**
 * Writes every user's pre-rendered answer to `<stagingDir>/<username>` (see `recycleUserFiles`) in
 * a worker thread (user-files-worker.ts), in batches, without blocking this thread: the build runs
 * it while Astro renders the pages, and `writeApiFiles` moves the folder into place with one
 * rename; a few users (`USERS_IN_THIS_THREAD`) in this thread. The bytes are
 * `prerenderedUserBody`'s, which `IndexFiles` makes in memory too. Not an Astro endpoint: one cost
 * more than 20% of build time (docs/design.md). With `compressed`, each file written gets its
 * compressed codings too, as its layout keeps them (compress.ts), counted there.
 */
export async function writeUserFiles(stagingDir: string, index: SiteIndex, times: AnswerTimes, users: Iterable<PublicUser> = index.users, compressed?: { stats: CompressStats; layout: CodingLayout }, recycled = true): Promise<number> {
  await fs.promises.mkdir(stagingDir, { recursive: true });
  const target: UserFilesTarget = { dir: stagingDir, rel: `${USERS_PATH.replace(/^\/+/, '').replace(/\/*$/, '/')}`, layout: compressed?.layout };
  const usersLeft = users[Symbol.iterator]();
  /** The next batch of answers, in a buffer of its own (not a slice of Node's pool), so it moves to the worker without a copy; undefined when none is left. */
  const nextBatch = (): UserFilesBatch | undefined => {
    const names: string[] = [];
    const parts: Buffer[] = [];
    const ends: number[] = [];
    let length = 0;
    for (let next = usersLeft.next(); !next.done; next = usersLeft.next()) {
      const data = userData(next.value);
      const body = prerenderedUserBody(times.user(next.value.username, data).timestamp, data);
      names.push(next.value.username);
      parts.push(body as Buffer);
      ends.push(length += body.length);
      if (names.length === USERS_PER_BATCH) break;
    }
    if (!names.length) return undefined;
    const bytes = new Uint8Array(new ArrayBuffer(length));
    let at = 0;
    for (const part of parts) { bytes.set(part, at); at += part.length; }
    return { names, ends, bytes: bytes.buffer };
  };
  let written = 0;
  const count = (done: { written: number; compressed: CompressStats }) => {
    written += done.written;
    if (compressed) addStats(compressed.stats, done.compressed);
  };
  if (Array.isArray(users) && users.length <= USERS_IN_THIS_THREAD) {
    for (let batch = nextBatch(); batch; batch = nextBatch()) count(writeUserBatch(target, batch));
  } else {
    const worker = new Worker(new URL('./user-files-worker.ts', import.meta.url), { workerData: target });
    try {
      await new Promise<void>((resolve, reject) => {
        let inFlight = 0;
        let finished = false;
        const send = () => {
          const batch = nextBatch();
          if (!batch) {
            finished = true;
            if (inFlight === 0) resolve();
            return;
          }
          inFlight++;
          worker.postMessage(batch, [batch.bytes]);
        };
        worker.on('message', (done: { written: number; compressed: CompressStats }) => {
          count(done);
          inFlight--;
          if (!finished) send();
          else if (inFlight === 0) resolve();
        });
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`the user files thread stopped (exit code ${code})`)));
        send();
        send();
      });
    } finally {
      await worker.terminate();
    }
  }
  // Recycled files of profiles that are gone, and with no codings in this build (Cloudflare,
  // PRECOMPRESS=0) the siblings a static build left beside unchanged ones; none in a folder this
  // build started empty, which at 1,000,000 profiles would be a listing of 3 million entries.
  if (!recycled) return written;
  const names = new Set(index.users.map((u) => u.username));
  for (const name of await fs.promises.readdir(stagingDir)) {
    const base = compressedBaseOf(name);
    if ((base !== undefined && !compressed) || !names.has(base ?? name)) await fs.promises.rm(path.join(stagingDir, name), { recursive: true, force: true });
  }
  return written;
}

/**
 * Prepares `stagingDir` for `writeUserFiles`: empty, or, with `recycle`, holding the user files of
 * `retiredRelease` (a release this build removes anyway: releases.ts `retireRelease`; never a kept
 * one), moved there with one rename so they are overwritten in place instead of deleted and
 * created anew (far cheaper on disk: user-files-worker.ts). Returns whether files were recycled.
 */
export function recycleUserFiles(retiredRelease: string | undefined, stagingDir: string, recycle: boolean): boolean {
  fs.rmSync(stagingDir, { recursive: true, force: true });
  if (!recycle || !retiredRelease) return false;
  const old = path.join(buildLayout(retiredRelease).client, ...USERS_PATH.split('/').filter(Boolean));
  if (!fs.existsSync(old)) return false;
  fs.renameSync(old, stagingDir);
  return true;
}

/** How a layered release (layers.ts) is written: only what differs from the served release. */
export interface LayeredWrite {
  /** The new release's id. */
  id: string;
  /** Its layers, which `writeApiFiles` adds the media it writes or removes to. */
  layers: Layers;
  /** Where the served release holds a file, or null. */
  served: (file: string) => string | null;
  /** The served release's files of a layered folder. */
  servedFiles: (dir: string) => string[];
}

/**
 * Adds the API files (from `usersStaging`, see `writeUserFiles`), media, the handler's lookup
 * files, the answer times and `_headers` to Astro's output.
 */
export function writeApiFiles(outDir: string, index: SiteIndex, usersStaging: string, contentDir: string, times: AnswerTimes, target: DeployTarget = 'node', layered?: LayeredWrite): WriteStats {
  const layout = buildLayout(outDir);
  const usersDir = path.join(layout.client, ...USERS_PATH.split('/').filter(Boolean));
  fs.mkdirSync(path.dirname(usersDir), { recursive: true });
  fs.renameSync(usersStaging, usersDir);
  // The files made from the whole index (derived.ts), the same whether or not the build is an edit.
  const { files: wholeIndex, creators } = handlerFiles(columnsOf(index), target, (hash) => times.creators(hash));
  writeFiles(layout.client, wholeIndex);

  let mediaFiles = 0;
  // Read as content is (src/content/read-file.ts): never through a link, within the image size
  // limit, and the bytes checked again, so what is published is what `npm run check` passed even
  // if the folder changed since. copyFileSync would follow a link.
  const reader = new ContentReader(contentDir);
  const copy = (from: string, toDir: string, file: string) => {
    const r = reader.readImage(path.join(from, file));
    if (!r.ok) throw new Error(`refused to publish ${path.join(from, file)}: ${r.problems.map((p) => `${p.message}${p.hint ? ` (${p.hint})` : ''}`).join('; ')}`);
    mediaFiles++;
    const rel = path.relative(layout.client, path.join(toDir, file)).split(path.sep).join('/');
    if (layered) {
      // The same bytes in the served release: read from there (or from where it reads them).
      const was = layered.served(rel);
      if (was !== null && sameBytes(path.join(was, rel), r.bytes)) return;
      layered.layers.from[rel] = layered.id;
    }
    fs.mkdirSync(toDir, { recursive: true });
    fs.writeFileSync(path.join(toDir, file), r.bytes, { flag: 'wx' });
  };
  const avatars = new Set(index.avatars.map(([, f]) => f));
  for (const file of avatars) copy(path.join(contentDir, 'avatars'), layout.media.avatars, file);
  for (const file of index.decorationFiles) copy(path.join(contentDir, 'decorations'), layout.media.decorations, file);
  if (layered) {
    // Images no profile uses any more.
    const published = new Set([...[...avatars].map((f) => `media/avatars/${f}`), ...index.decorationFiles.map((f) => `media/decorations/${f}`)]);
    for (const dir of ['media/avatars/', 'media/decorations/']) {
      for (const file of layered.servedFiles(dir)) if (!published.has(file) && compressedBaseOf(file) === undefined) layered.layers.from[file] = null;
    }
  }

  fs.mkdirSync(layout.server, { recursive: true });
  // What a host serving the files reads (hosts/): `_headers` for static hosts and Cloudflare's asset
  // server, and for static hosts the rest. Never for the Node server, which decides every header
  // itself: there `_headers` was a listing of every file of the release, remade at each edit that
  // added one. Those releases are whole (layers are the Node server's), so these come last and
  // cover every file of the build.
  if (target === 'static') writeStaticHostFiles(layout.client, index.builtAt);
  if (target !== 'node') writeStaticHostHeaders(layout.client, creators ? { [CREATORS_PATH]: answerOnlyHeaders(CREATORS_PATH, creators.headers) } : {});
  if (target === 'static') writeStaticHostRedirects(layout.client);
  // One answer a user (writeUserFiles): counted, not listed, since at 1,000,000 profiles the folder holds three million files.
  return { userFiles: index.users.length, mediaFiles };
}

/**
 * What an edit build (edit-path.ts) adds to the pages it rendered and the files it took from the
 * served release: the changed users' answers (from `usersStaging`), the files made from the whole
 * index (the creators list's first page with its answer time kept when unchanged), and the answer times.
 */
export function writeEditFiles(outDir: string, index: SiteIndex, usersStaging: string, times: AnswerTimes, changes: ColumnChanges): void {
  const layout = buildLayout(outDir);
  const usersDir = path.join(layout.client, ...USERS_PATH.split('/').filter(Boolean));
  fs.mkdirSync(path.dirname(usersDir), { recursive: true });
  fs.renameSync(usersStaging, usersDir);
  // The files made from the whole index whose columns the edit changed (derived.ts): the others
  // were copied from the served release (render.ts renderEdit), so no sibling of these is there to drop.
  writeFiles(layout.client, handlerFiles(columnsOf(index), 'node', (hash) => times.creators(hash), changes).files);
  fs.mkdirSync(layout.server, { recursive: true });
}

/** Writes `files` (paths under `dir`, with `/`), making their folders; a file there is replaced, not written into (it may be a hard link: render.ts `renderEdit`). */
function writeFiles(dir: string, files: ReadonlyMap<string, string | Uint8Array>): void {
  const made = new Set<string>();
  for (const [file, bytes] of files) {
    const to = path.join(dir, ...file.split('/'));
    const folder = path.dirname(to);
    if (!made.has(folder)) fs.mkdirSync(folder, { recursive: true });
    made.add(folder);
    fs.rmSync(to, { force: true });
    fs.writeFileSync(to, bytes);
  }
}

function sameBytes(file: string, bytes: Uint8Array): boolean {
  try {
    return Buffer.from(bytes).equals(fs.readFileSync(file));
  } catch {
    return false;
  }
}

/**
 * Trees of at most this many entries in all are removed in this thread: starting a thread costs
 * about 100 ms of CPU (a small site's whole build is 0.5 s), removing a release of a few hundred
 * files a few milliseconds.
 */
export const TREE_ENTRIES_IN_THIS_THREAD = 2_000;

/** Whether the trees of `dirs` hold at most `max` entries, counted one by one until past it (a folder of a million is never listed whole). */
export function atMostEntries(dirs: readonly string[], max: number): boolean {
  let left = max;
  const stack = [...dirs];
  while (stack.length) {
    const dir = stack.pop()!;
    let handle: fs.Dir;
    try { handle = fs.opendirSync(dir); } catch { continue; }
    try {
      for (let entry; (entry = handle.readSync()) !== null;) {
        if (--left < 0) return false;
        if (entry.isDirectory()) stack.push(path.join(dir, entry.name));
      }
    } finally {
      handle.closeSync();
    }
  }
  return true;
}

/**
 * Removes folder trees (releases being pruned, what dead builds left) in a thread of its own
 * (remove-tree-worker.ts says why). Started when a build starts and awaited at its end, so deleting
 * tens of thousands of files overlaps the page rendering instead of adding to it; small trees
 * (`TREE_ENTRIES_IN_THIS_THREAD`) at once, in this thread.
 */
export function removeTrees(dirs: readonly string[]): Promise<void> {
  if (!dirs.length) return Promise.resolve();
  if (atMostEntries(dirs, TREE_ENTRIES_IN_THIS_THREAD)) {
    try {
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./remove-tree-worker.ts', import.meta.url), { workerData: { dirs } });
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`could not remove ${dirs.join(', ')} (exit code ${code})`))));
  });
}
