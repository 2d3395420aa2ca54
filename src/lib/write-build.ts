// Writes what the build adds beside Astro's output: the pre-rendered API files, the media the
// on-demand routes serve, and the site index the server loads. Then swaps the new build in.
import fs from 'node:fs';
import path from 'node:path';
import { CREATORS_PATH, USERS_PATH, creatorsAnswer, prerenderedUserBody } from './api.ts';
import { DEFAULT_LIMIT } from '../schemas/api.ts';
import { Site, buildLayout, type SiteIndex } from './site.ts';
import { writeStaticHostHeaders } from './static-host-headers.ts';

export interface WriteStats {
  userFiles: number;
  mediaFiles: number;
}

/** User files written at once; enough to keep the disk busy while Astro renders pages on the CPU. */
const WRITES_IN_FLIGHT = 64;

/**
 * Writes every user's pre-rendered answer to `<stagingDir>/<username>`, a few at a time and without
 * blocking the event loop: the build runs it while Astro renders the pages, and `writeApiFiles`
 * moves the folder into place with one rename. The bytes are `prerenderedUser`'s, which the server
 * answers from memory.
 */
export async function writeUserFiles(stagingDir: string, site: Site): Promise<number> {
  await fs.promises.rm(stagingDir, { recursive: true, force: true });
  await fs.promises.mkdir(stagingDir, { recursive: true });
  const users = site.users();
  let written = 0;
  const worker = async () => {
    for (let next = users.next(); !next.done; next = users.next()) {
      const { username, data } = next.value;
      await fs.promises.writeFile(path.join(stagingDir, username), prerenderedUserBody(site, data));
      written++;
    }
  };
  await Promise.all(Array.from({ length: WRITES_IN_FLIGHT }, worker));
  return written;
}

/** Adds the API files (from `usersStaging`, see `writeUserFiles`), media, the site index and `_headers` to Astro's output. */
export function writeApiFiles(outDir: string, index: SiteIndex, site: Site, usersStaging: string, contentDir: string): WriteStats {
  const layout = buildLayout(outDir);
  const usersDir = path.join(layout.client, ...USERS_PATH.split('/').filter(Boolean));
  fs.mkdirSync(path.dirname(usersDir), { recursive: true });
  fs.renameSync(usersStaging, usersDir);
  const creatorsFile = path.join(layout.client, ...CREATORS_PATH.split('/').filter(Boolean));
  fs.mkdirSync(path.dirname(creatorsFile), { recursive: true });
  // The default page of the list: the same answer `?limit=50&sort=featured` gets on demand.
  fs.writeFileSync(creatorsFile, creatorsAnswer(site, { limit: DEFAULT_LIMIT, sort: 'featured' }, index.builtAt, 0).body as string);

  let mediaFiles = 0;
  const copy = (from: string, toDir: string, file: string) => {
    fs.mkdirSync(toDir, { recursive: true });
    fs.copyFileSync(path.join(from, file), path.join(toDir, file));
    mediaFiles++;
  };
  for (const file of new Set(index.avatars.map(([, f]) => f))) copy(path.join(contentDir, 'avatars'), layout.media.avatars, file);
  for (const file of index.decorationFiles) copy(path.join(contentDir, 'decorations'), layout.media.decorations, file);

  fs.mkdirSync(layout.server, { recursive: true });
  fs.writeFileSync(layout.siteIndex, JSON.stringify(index));
  // Last, so its rules cover every file of the build.
  writeStaticHostHeaders(layout.client);
  return { userFiles: fs.readdirSync(usersDir).length, mediaFiles };
}

/** Where the build before the current one is kept: a rollback is `mv dist dist.bad && mv dist.prev dist`. */
export const previousBuildDir = (target: string) => `${target}.prev`;

/**
 * Makes room for the next swap: removes the build before last. Started when a build starts and
 * awaited before its swap, so deleting tens of thousands of files overlaps the page rendering
 * instead of adding to it.
 */
export const clearPreviousBuild = (target: string) => fs.promises.rm(previousBuildDir(target), { recursive: true, force: true });

/**
 * Replaces `target` with `fresh` in two renames, so a failed build never leaves a half-written
 * `dist/`: until the swap the old build is untouched, and after it the old build is kept as
 * `<target>.prev`. Call `clearPreviousBuild` first.
 */
export function swapInBuild(fresh: string, target: string): void {
  const prev = previousBuildDir(target);
  const hadOld = fs.existsSync(target);
  if (hadOld) fs.renameSync(target, prev);
  try {
    fs.renameSync(fresh, target);
  } catch (e) {
    if (hadOld) fs.renameSync(prev, target);
    throw e;
  }
}
