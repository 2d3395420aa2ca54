// Fingerprinted assets (`/_astro/*`) that a new release no longer makes, kept in it for a day from
// the first release without them. A page a shared cache or a browser kept from before the deploy
// (30 s, 90 s stale, a tab restored later) still links the old stylesheet, and every host serves
// only the served release's files: without this, such a page comes unstyled, and the 404 for the
// stylesheet is itself kept by caches. Kept files are recorded in release.json (`retiredAssets`),
// so that each is dropped a day after it was retired, not carried from release to release.
import fs from 'node:fs';
import path from 'node:path';
import { identityOf, isPacked } from '../../release/coded-file.ts';
import { compressedBaseOf } from '../../http/headers.ts';

/** Where Astro writes the bundled, fingerprinted files (styles, scripts), relative to the client folder. */
export const ASSETS_DIR = '_astro';
/** How long a retired asset stays, from the build time of the first release without it. */
export const RETIRED_ASSET_SECONDS = 86_400;

/** Retired asset files (`_astro/<name>`) and when each was retired (an ISO build time). */
export type RetiredAssets = Record<string, string>;

/**
 * Whether `file` (relative to the client folder, a compressed sibling included) is a retired asset
 * of a release whose `retiredAssets` is `retired`: the edit path, which links the served release's
 * other files, leaves these to `keepRetiredAssets`, which knows their age.
 */
export const isRetiredAsset = (retired: RetiredAssets | undefined, file: string): boolean =>
  retired !== undefined && Object.hasOwn(retired, compressedBaseOf(file) ?? file);

const assetsOf = (client: string): string[] => {
  try {
    return fs.readdirSync(path.join(client, ASSETS_DIR)).filter((name) => compressedBaseOf(name) === undefined);
  } catch {
    return [];
  }
};

/**
 * Copies into `freshClient` the assets of the served release (`servedClient`, its own and those it
 * kept, `servedRetired`) that this release does not make, while they are under a day retired at
 * `builtAt`; returns what it kept, for its release.json. Their bytes as they were made (a `node`
 * release packs its codings into each file): the compress step then codes them as this release does.
 */
export function keepRetiredAssets(servedClient: string | undefined, servedRetired: RetiredAssets | undefined, freshClient: string, builtAt: string): RetiredAssets {
  const kept: RetiredAssets = {};
  if (servedClient === undefined) return kept;
  const own = new Set(assetsOf(freshClient));
  const now = Date.parse(builtAt);
  for (const name of assetsOf(servedClient)) {
    const file = `${ASSETS_DIR}/${name}`;
    if (own.has(name)) continue;
    const since = servedRetired?.[file] ?? builtAt;
    if (now - Date.parse(since) >= RETIRED_ASSET_SECONDS * 1000) continue;
    const bytes = fs.readFileSync(path.join(servedClient, file));
    fs.mkdirSync(path.join(freshClient, ASSETS_DIR), { recursive: true });
    fs.writeFileSync(path.join(freshClient, file), isPacked(bytes) ? identityOf(bytes) : bytes);
    kept[file] = since;
  }
  return kept;
}
