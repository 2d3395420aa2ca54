// "All profiles": every username, in pages at /browse/1, /browse/2, …, made at build time from the
// whole index, so they work on every host (static files) and no page sends more than one page of
// names to the browser. Pages rather than a prefix index: names are not spread evenly over their
// first letters (a prefix page could hold most of the site), while pages stay small at any count.
// A page ends where its names say (src/model/content-runs.ts), not every N names: a profile added
// or removed changes the one page it falls in, and the first (which shows how many there are), not
// every page after it. Every profile is listed, suspended ones too (their page says so): the pages
// then change only when a profile is added or removed. They are made from the index's columns
// (src/build/derived.ts), in a cold build and an edit build alike.
import { changedParts, cutAt, runStarts, type RunSizes } from '../model/content-runs.ts';

/**
 * Names per page: 500 to 2,000, about 1,000 (1,000 generated names made 48 KB of HTML, 2.4 KB
 * brotli); 100,000 profiles make about 100 pages.
 */
export const BROWSE_PAGE_SIZES: RunSizes = { min: 500, every: 500, max: 2_000 };

/** The address of page `n` (from 1). */
export const browsePath = (n: number) => `/browse/${n}`;

export interface BrowsePage {
  /** From 1. */
  page: number;
  pages: number;
  /** Its usernames, sorted. */
  names: string[];
  /** How many profiles the site has: on the first page only, so that a name added or removed changes no other. */
  total?: number;
}

/** The pages of `names`: at least one, so the home page's link always leads somewhere. Everything a page shows is here. */
export function browsePages(names: readonly string[], sizes = BROWSE_PAGE_SIZES): BrowsePage[] {
  const parts = cutAt(names, browseStarts(names, sizes));
  if (!parts.length) parts.push([]);
  return parts.map((part, k) => ({ page: k + 1, pages: parts.length, names: part, ...(k === 0 && { total: names.length }) }));
}

/** Where each page of `names` starts (content-runs.ts `runStarts`): what a release's record keeps of its pages (derived.ts `siteRuns`). */
export const browseStarts = (names: readonly string[], sizes = BROWSE_PAGE_SIZES): number[] => runStarts(names, sizes);

/**
 * The pages whose content differs between `before` and `now` (the served release's names and
 * this build's), and those `before` had that `now` has not: what an edit build makes again or
 * drops. The others are the same bytes: a page shows only its BrowsePage, the number of pages on
 * each, the number of names on the first. `starts`: where the pages of each start (browseStarts),
 * when known.
 */
export function changedBrowsePages(
  now: readonly string[], before: readonly string[], starts?: { now: readonly number[]; before: readonly number[] }, sizes = BROWSE_PAGE_SIZES,
): { changed: number[]; gone: number[] } {
  const [a, b] = [starts?.now ?? browseStarts(now, sizes), starts?.before ?? browseStarts(before, sizes)];
  // At least one page each, empty or not (browsePages).
  const [pages, pagesBefore] = [Math.max(1, a.length), Math.max(1, b.length)];
  const gone = Array.from({ length: Math.max(0, pagesBefore - pages) }, (_, k) => pages + 1 + k);
  if (pages !== pagesBefore) return { changed: Array.from({ length: pages }, (_, k) => k + 1), gone };
  const changed = new Set(changedParts(now, a, before, b).changed.map((k) => k + 1));
  if (now.length !== before.length) changed.add(1);
  return { changed: [...changed].sort((x, y) => x - y), gone };
}
