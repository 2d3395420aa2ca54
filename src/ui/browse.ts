// "All profiles": every username, in pages of BROWSE_PAGE_SIZE at /browse/1, /browse/2, …, made at
// build time from the whole index, so they work on every host (static files) and no page sends more
// than one page of names to the browser. Pages rather than a prefix index: names are not spread
// evenly over their first letters (a prefix page could hold most of the site), while pages of a
// fixed size stay small at any count. Every profile is listed, suspended ones too (their page says
// so): the pages then change only when a profile is added or removed. They are made from the index's
// columns (src/build/derived.ts), in a cold build and an edit build alike.
/** Names per page: 1,000 generated names made 48 KB of HTML, 2.4 KB brotli; 100,000 profiles make 100 pages. */
export const BROWSE_PAGE_SIZE = 1_000;

/** The address of page `n` (from 1). */
export const browsePath = (n: number) => `/browse/${n}`;

export interface BrowsePage {
  /** From 1. */
  page: number;
  pages: number;
  /** Its usernames, sorted. */
  names: string[];
  /** How many profiles the site has. */
  total: number;
}

/** The pages of `names`: at least one, so the home page's link always leads somewhere. */
export function browsePages(names: readonly string[], size = BROWSE_PAGE_SIZE): BrowsePage[] {
  const pages = Math.max(1, Math.ceil(names.length / size));
  return Array.from({ length: pages }, (_, k) => ({ page: k + 1, pages, names: names.slice(k * size, (k + 1) * size), total: names.length }));
}
