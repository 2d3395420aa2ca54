// What a build makes from the whole index rather than from one profile, in one place for a cold
// build and an edit build alike: both hand the same columns (src/model/site-index.ts `columnsOf`;
// an edit build's are the served release's kept columns with its changes applied), so both make the
// same bytes by construction (test/build/incremental-equals-full.test.ts checks it).
// - Pages Astro renders from the index (`wholeIndexFiles`): the home page (the first active creators, their
//   avatars, the counts), the API description and its docs page (the example user), the sitemaps
//   (active profiles), the browse pages (every name).
// - Files the build writes (`handlerFiles`): the handler's lookup tables, the filter of names, the
//   creators rows and the creators list's first page.
// An edit build makes again only those whose inputs it changed (`ColumnChanges`, from edit-path.ts):
// a browse page or a sitemap file whose names are the served release's is not made again, nor a
// file whose columns the edit did not change. It takes the others from the served release as they
// are: the same inputs, the same code, so the same bytes. At 1,000,000 profiles the lookup tables
// alone took 1.9 s an edit; the browse pages and sitemaps, for a name added, 4.5 s.
import type { DeployTarget } from '../config.ts';
import type { ApiResponse } from '../http/response.ts';
import type { IndexColumns } from '../model/site-index.ts';
import { compressedBaseOf } from '../http/headers.ts';
import { CREATORS_FILE } from '../api/handler.ts';
import { CREATORS_ROWS_FILE, LOOKUP_DIR, USER_NAMES_FILE, lookupFiles } from '../api/release-files.ts';
import { prerenderedCreators } from '../api/prerendered.ts';
import { changedSitemapFiles, siteSitemap, sitemapList, sitemapStarts, SITEMAP_SIZES } from '../ui/sitemap.ts';
import { BROWSE_PAGE_SIZES, browsePages, browsePath, browseStarts, changedBrowsePages } from '../ui/browse.ts';
import { runStartsAfter } from '../model/content-runs.ts';

/**
 * What an edit build changed of the columns that the files made from the whole index read
 * (edit-path.ts says how it finds out); a whole build makes every file (`EVERY_COLUMN`).
 */
export interface ColumnChanges {
  /** A profile came or went: the browse pages where names did, and the filter of names. */
  names: boolean;
  /** The profiles the sitemap lists (active, without a custom domain) are others: the sitemap files where they are. */
  listed: boolean;
  /** An avatar or a custom domain changed, came or went: the lookup tables. */
  media: boolean;
  /** An active creator's row changed, came or went: the creators rows. */
  creators: boolean;
  /** The served release's columns: a browse page or a sitemap file is made again where its names differ from theirs. Undefined: all are. */
  before?: SitemapColumns & { runs?: SiteRuns };
  /** With `before.runs`: this build's (`siteRuns`). */
  runs?: SiteRuns;
}
type SitemapColumns = Pick<IndexColumns, 'names' | 'suspended' | 'domains'>;

/**
 * Where a release's browse pages and sitemap files start (browse.ts `browseStarts`, sitemap.ts
 * `sitemapStarts`): its record keeps them (kept-index.ts), so that an edit build finds the next
 * release's from them, hashing only the names around its change (content-runs.ts
 * `runStartsAfter`), not every name of both releases: at 1,000,000 profiles cutting both anew was
 * 0.3 s of an edit that adds or removes a profile.
 */
export interface SiteRuns {
  browse: number[];
  sitemap: number[];
}

/**
 * The runs of columns `c`; from `before` (the served release's columns and runs) where `changes`
 * says the names, or the profiles the sitemap lists, are the same or differ by a few. The same
 * numbers either way (test/model/content-runs.test.ts).
 */
export function siteRuns(c: SitemapColumns, before?: { columns: SitemapColumns; runs: SiteRuns }, changes: Pick<ColumnChanges, 'names' | 'listed'> = EVERY_COLUMN): SiteRuns {
  if (!before) return { browse: browseStarts(c.names), sitemap: sitemapStarts(sitemapList(c)) };
  const { columns, runs } = before;
  return {
    browse: !changes.names ? runs.browse : runStartsAfter(c.names, BROWSE_PAGE_SIZES, { keys: columns.names, starts: runs.browse }),
    sitemap: !changes.listed ? runs.sitemap : runStartsAfter(sitemapList(c), SITEMAP_SIZES, { keys: sitemapList(columns), starts: runs.sitemap }),
  };
}
export const EVERY_COLUMN: ColumnChanges = { names: true, listed: true, media: true, creators: true };

/** The pages made from the whole index that `changes` makes again, and what a release holds of them. */
export interface WholeIndexFiles {
  /**
   * Their addresses, as the kept renderer renders them: the API description and its docs page every
   * time (the example user: small pages), the home page when a profile came or went or a creator
   * changed (it shows the number of profiles and creators, and the first creators: src/ui/home.ts),
   * and the sitemap files and browse pages whose names changed.
   */
  routes: string[];
  /**
   * Whether a file of a release (relative to `client/`, compressed siblings included) is made from
   * the whole index and made again for `changes` (or gone): a page of `routes` or a file of
   * `handlerFiles`. An edit build links every other file of the served release as it is.
   */
  remade(file: string): boolean;
}

/** The files made from the whole index of columns `c` that `changes` makes again. */
export function wholeIndexFiles(c: IndexColumns, changes: ColumnChanges = EVERY_COLUMN): WholeIndexFiles {
  const { before } = changes;
  const runs = before?.runs && changes.runs && { now: changes.runs, before: before.runs };
  const sitemaps = !changes.listed ? undefined : before
    ? changedSitemapFiles(c, before, runs && { now: runs.now.sitemap, before: runs.before.sitemap })
    : { changed: siteSitemap(c).map((f) => f.path), gone: [] };
  const browse = !changes.names ? undefined : before
    ? changedBrowsePages(c.names, before.names, runs && { now: runs.now.browse, before: runs.before.browse })
    : { changed: browsePages(c.names).map((p) => p.page), gone: [] };
  const remadeSitemaps = new Set([...sitemaps?.changed ?? [], ...sitemaps?.gone ?? []].map((p) => p.slice(1)));
  const remadeBrowse = new Set([...browse?.changed ?? [], ...browse?.gone ?? []].map((n) => `${browsePath(n).slice(1)}.html`));
  return {
    routes: [...homeChanged(changes) ? ['/'] : [], '/openapi.json', '/docs', ...sitemaps?.changed ?? [], ...(browse?.changed ?? []).map(browsePath)],
    remade: (file) => isWholeIndexFile(file, changes, (own) => (SITEMAP.test(own) ? remadeSitemaps.has(own) : remadeBrowse.has(own))),
  };
}

/**
 * Whether a file of a release (relative to `client/`, compressed siblings included) is made from
 * the whole index and made again for `changes` (by default: every one, as in a whole build).
 * `named`: with `changes.before`, whether a sitemap file or browse page is among those made again.
 */
export function isWholeIndexFile(file: string, changes: ColumnChanges = EVERY_COLUMN, named?: (own: string) => boolean): boolean {
  const own = compressedBaseOf(file) ?? file;
  if (ALWAYS_MADE.test(own) || own === CREATORS_FILE) return true;
  if (own === HOME_PAGE) return homeChanged(changes);
  if (SITEMAP.test(own)) return changes.listed && (!changes.before || named!(own));
  if (BROWSE_PAGE.test(own)) return changes.names && (!changes.before || named!(own));
  if (own === USER_NAMES_FILE) return changes.names;
  if (own === CREATORS_ROWS_FILE) return changes.creators;
  return own.startsWith(`${LOOKUP_DIR}/`) && changes.media;
}
const ALWAYS_MADE = /^(openapi\.json|docs\.html)$/;
const HOME_PAGE = 'index.html';
/** The home page shows the number of profiles and creators, and the first creators' rows (src/ui/home.ts) with their avatars. */
const homeChanged = (changes: ColumnChanges) => changes.names || changes.creators || changes.media;
const SITEMAP = /^sitemap(-\d+)?\.xml$/;
const BROWSE_PAGE = /^browse\/\d+\.html$/;

/**
 * The files only the on-demand handler reads, by path under `client/`, and the creators list's first
 * page (the same answer `?limit=50&sort=featured` gets on demand). None for a host with files only:
 * it has no handler, and it ignores the query, so every page asked for would be this one.
 * `timestampFor`: the answer time of the creators page's data (answer-times.ts).
 */
export function handlerFiles(
  c: IndexColumns, target: DeployTarget, timestampFor: (dataEtag: string) => string, changes: ColumnChanges = EVERY_COLUMN,
): { files: Map<string, string | Uint8Array>; creators: ApiResponse | undefined } {
  if (target === 'static') return { files: new Map(), creators: undefined };
  const creators = prerenderedCreators(c, timestampFor);
  const files = lookupFiles(c, { tables: changes.media, creators: changes.creators, names: changes.names });
  files.set(CREATORS_FILE, creators.body as string);
  return { files, creators };
}
