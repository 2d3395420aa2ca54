// Issue 31's "every file byte-equal to what the same pipeline writes for the same profiles in a
// smaller build": the first m profiles of the generator are the same at any size, so a build of m
// profiles and the big build must write the same per-profile files for them, byte for byte.
import fs from 'node:fs';
import path from 'node:path';
import { locator } from '../../src/release/layers.ts';
import { readReleaseInfo, releasesDir, servedRelease } from '../../src/release/releases.ts';

/** The served release of `dist` as files: the path of each (through its layers), or null when it has none. */
export function servedFiles(distDir: string): (file: string) => string | null {
  const dist = path.resolve(distDir);
  const served = servedRelease(dist);
  if (!served) throw new Error(`${dist} serves no release`);
  const at = locator(releasesDir(dist), path.join(dist, 'client'), readReleaseInfo(dist, served)?.layers);
  return (file) => {
    const dir = at(file);
    return dir === null ? null : path.join(dir, file);
  };
}

/** The files of one profile in a release: its page and its API answer, each with its compressed siblings where a `static` build writes them (a `node` build keeps them inside the file). */
export const profileFiles = (name: string) => [`p/${name}.html`, `api/v1/users/${name}`].flatMap((f) => [f, `${f}.br`, `${f}.gz`]);

export interface Comparison {
  /** Files compared: those the small build has, each looked for in the big one. */
  files: number;
  equal: number;
  /** In the small build, not in the big one. */
  missing: string[];
  /** In both, with other bytes. */
  different: string[];
}

const read = (file: string | null) => {
  if (file === null) return null;
  try {
    return fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
};

/**
 * Compares, between the served releases of `small` and `big`, the files of every profile of
 * `names` and every image under media/ of the small build (previews, avatars, decorations: shared
 * by name, so the small build's are a subset of the big one's). A file neither build has is skipped.
 */
export function compareBuilds(small: string, big: string, names: readonly string[]): Comparison {
  const inSmall = servedFiles(small);
  const inBig = servedFiles(big);
  const media = fs.readdirSync(path.join(small, 'client', 'media'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(path.join(small, 'client'), path.join(e.parentPath, e.name)));
  const result: Comparison = { files: 0, equal: 0, missing: [], different: [] };
  for (const file of [...names.flatMap(profileFiles), ...media]) {
    const a = read(inSmall(file));
    if (a === null) continue;
    result.files++;
    const b = read(inBig(file));
    if (b === null) result.missing.push(file);
    else if (a.equals(b)) result.equal++;
    else result.different.push(file);
  }
  return result;
}

/** One line for the report: `1,000 profiles' 6,000 files equal`, or what differs. */
export function comparisonLine(c: Comparison, profiles: number, big: number): string {
  const head = `${profiles.toLocaleString('en')} profiles' files (pages and API answers with their compressed codings, and the images under media/) against the ${big.toLocaleString('en')}-profile build: `;
  if (!c.missing.length && !c.different.length) return `${head}${c.files.toLocaleString('en')} files equal`;
  const some = (xs: string[]) => `${xs.slice(0, 5).join(', ')}${xs.length > 5 ? ', …' : ''}`;
  return `${head}${c.equal.toLocaleString('en')} of ${c.files.toLocaleString('en')} equal, NOT all`
    + `${c.different.length ? `; ${c.different.length.toLocaleString('en')} differ (${some(c.different)})` : ''}`
    + `${c.missing.length ? `; ${c.missing.length.toLocaleString('en')} missing from the big build (${some(c.missing)})` : ''}`;
}
