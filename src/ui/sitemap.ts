// robots.txt (RFC 9309) and the sitemap (sitemaps.org protocol 0.9), made from the public index.
//
// What the sitemap lists: the home page and each active profile's page on this host. Left out:
// - suspended profiles: their pages say `noindex`, and a sitemap would ask for them to be indexed;
// - profiles with a custom domain: their page's canonical address is `https://<customDomain>`, a
//   sitemap may only list addresses on its own host (sitemaps.org, "Sitemap file location"), and
//   listing `SITE_URL/p/<name>` would contradict the page's own `rel="canonical"`.
// No `lastmod`: a profile's only dates are `createdAt` and its suspension's `at`, and neither says
// when its page last changed (bio, links and views change without a date); a date that is not
// the page's last change is worse than none, since search engines stop trusting a site's lastmod.
import type { PublicUser } from '../schemas/api.ts';
import type { IndexColumns } from '../model/site-index.ts';
import { changedParts, cutAt, runStarts, sameItems, type RunSizes } from '../model/content-runs.ts';

/** sitemaps.org: a sitemap file holds at most 50,000 URLs (and 50 MB); so does a sitemap index. */
export const SITEMAP_MAX_URLS = 50_000;

/**
 * Addresses per sitemap file past one file: 25,000 to 50,000, cut where the usernames say
 * (src/model/content-runs.ts), so a profile that comes or goes changes one file, not every later one.
 */
export const SITEMAP_SIZES: RunSizes = { min: 25_000, every: 12_500, max: SITEMAP_MAX_URLS };

/** A file of the sitemap: its address on the site (`/sitemap.xml`, `/sitemap-2.xml`) and its XML. */
export interface SitemapFile {
  path: string;
  xml: string;
}

/**
 * A file of the sitemap before its XML is made: its address, and what it lists, which is all its
 * XML shows: for a file of addresses, the profiles by username and `''` for the home page; for the
 * sitemap index, its files' paths.
 */
export interface SitemapPart {
  path: string;
  index: boolean;
  entries: readonly string[];
}

const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
/** sitemaps.org: URLs must be entity-escaped. */
const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!);

const XMLNS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/** What the sitemap reads of a profile. */
export type SitemapUser = Pick<PublicUser, 'username' | 'status' | 'hasCustomDomain'>;

/** Whether the sitemap lists a profile: active, and without a domain of its own (its page's address is then that domain, not this site's). */
const listed = (suspended: boolean, hasCustomDomain: boolean) => !suspended && !hasCustomDomain;

/** What the sitemap lists, in the index's order: `''` (the home page), then each listed profile's username. */
export function sitemapEntries(users: readonly SitemapUser[]): string[] {
  const entries = [''];
  for (const user of users) if (listed(user.status !== 'active', user.hasCustomDomain)) entries.push(user.username);
  return entries;
}

/** The address of an entry of a file of addresses. */
const entryUrl = (siteUrl: string, entry: string) => (entry === '' ? `${siteUrl}/` : `${siteUrl}/p/${entry}`);

/** The XML of a sitemap file. */
export function sitemapXml(siteUrl: string, part: SitemapPart): string {
  return part.index
    ? `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="${XMLNS}">\n${part.entries.map((p) => `<sitemap><loc>${escapeXml(`${siteUrl}${p}`)}</loc></sitemap>\n`).join('')}</sitemapindex>\n`
    : `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${XMLNS}">\n${part.entries.map((e) => `<url><loc>${escapeXml(entryUrl(siteUrl, e))}</loc></url>\n`).join('')}</urlset>\n`;
}

/**
 * The sitemap's files for `entries` (sitemapEntries): one `/sitemap.xml` while they fit in one
 * file; past that, a sitemap index at `/sitemap.xml` naming `/sitemap-1.xml`, `/sitemap-2.xml`, …
 * of `sizes` addresses each, cut where the usernames say. `/sitemap.xml` is always the entry point,
 * so robots.txt names one address.
 */
export function sitemapParts(entries: readonly string[], sizes = SITEMAP_SIZES): SitemapPart[] {
  if (sizes.max > SITEMAP_MAX_URLS) throw new RangeError(`a sitemap file holds at most ${SITEMAP_MAX_URLS} addresses, not ${sizes.max}`);
  if (entries.length <= sizes.max) return [{ path: '/sitemap.xml', index: false, entries }];
  const parts = cutAt(entries, runStarts(entries, sizes)).map((part, k): SitemapPart => ({ path: partPath(k), index: false, entries: part }));
  if (parts.length > SITEMAP_MAX_URLS) throw new RangeError(`${entries.length} addresses need more than ${SITEMAP_MAX_URLS} sitemap files`);
  return [{ path: '/sitemap.xml', index: true, entries: parts.map((p) => p.path) }, ...parts];
}

/** sitemapParts with each file's XML. */
export const sitemapFiles = (siteUrl: string, entries: readonly string[], sizes = SITEMAP_SIZES): SitemapFile[] =>
  sitemapParts(entries, sizes).map((part) => ({ path: part.path, xml: sitemapXml(siteUrl, part) }));

/** The address of the sitemap's file of addresses `k` (from 0) past one file. */
const partPath = (k: number) => `/sitemap-${k + 1}.xml`;

type SitemapColumns = Pick<IndexColumns, 'names' | 'suspended' | 'domains'>;
const BY_COLUMNS = new WeakMap<object, SitemapPart[]>();
const ENTRIES = new WeakMap<object, string[]>();

/** What the sitemap of a build's index columns lists (as sitemapEntries), made once however many ask. */
export function sitemapList(c: SitemapColumns): string[] {
  let entries = ENTRIES.get(c);
  if (!entries) {
    entries = [''];
    for (let i = 0; i < c.names.length; i++) if (listed(Boolean(c.suspended[i]), c.domains[i] !== null)) entries.push(c.names[i]!);
    ENTRIES.set(c, entries);
  }
  return entries;
}

/** Where each file of addresses of `entries` would start past one file (content-runs.ts `runStarts`): what a release's record keeps of its sitemap (derived.ts `siteRuns`). */
export const sitemapStarts = (entries: readonly string[]): number[] => runStarts(entries, SITEMAP_SIZES);

/** The sitemap's files of a build's index columns (src/model/site-index.ts), cut once however many routes ask; the XML is made by the file's route. */
export function siteSitemap(c: SitemapColumns): SitemapPart[] {
  let parts = BY_COLUMNS.get(c);
  if (!parts) BY_COLUMNS.set(c, (parts = sitemapParts(sitemapList(c))));
  return parts;
}

/**
 * The sitemap files whose content differs between `before` and `now` (the served release's
 * columns and this build's), compared entry for entry, and the files `before` had that `now` has
 * not: what an edit build makes again or drops. The others are the same bytes (the same SITE_URL:
 * the code's fingerprint holds it). `starts`: sitemapStarts of each, when known.
 */
export function changedSitemapFiles(
  now: SitemapColumns, before: SitemapColumns, starts?: { now: readonly number[]; before: readonly number[] },
): { changed: string[]; gone: string[] } {
  const [a, b] = [sitemapList(now), sitemapList(before)];
  if (a.length > SITEMAP_SIZES.max && b.length > SITEMAP_SIZES.max) {
    // An index and files of addresses in both: a file is the same where its entries are; the index, where the number of files is.
    const [sa, sb] = [starts?.now ?? sitemapStarts(a), starts?.before ?? sitemapStarts(b)];
    const changed = changedParts(a, sa, b, sb).changed.map(partPath);
    if (sa.length !== sb.length) changed.unshift('/sitemap.xml');
    return { changed, gone: Array.from({ length: Math.max(0, sb.length - sa.length) }, (_, k) => partPath(sa.length + k)) };
  }
  const [x, y] = [siteSitemap(now), new Map(siteSitemap(before).map((p) => [p.path, p]))];
  const same = (p: SitemapPart, q: SitemapPart | undefined) => q !== undefined && p.index === q.index && sameItems(p.entries, q.entries);
  const paths = new Set(x.map((p) => p.path));
  return { changed: x.filter((p) => !same(p, y.get(p.path))).map((p) => p.path), gone: [...y.keys()].filter((p) => !paths.has(p)) };
}

/**
 * Everything may be crawled: a suspended page's `noindex` is in the page, and a crawler refused
 * the page would never read it (a `noindex` works only on a page robots.txt lets crawlers fetch).
 * The API stays crawlable too: link-preview crawlers fetch `og:image` from `/api/avatar`.
 */
export const robotsTxt = (siteUrl: string) => `User-agent: *\nAllow: /\n\nSitemap: ${siteUrl}/sitemap.xml\n`;
