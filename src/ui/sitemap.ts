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

/** sitemaps.org: a sitemap file holds at most 50,000 URLs (and 50 MB); so does a sitemap index. */
export const SITEMAP_MAX_URLS = 50_000;

/** A file of the sitemap: its address on the site (`/sitemap.xml`, `/sitemap-2.xml`) and its XML. */
export interface SitemapFile {
  path: string;
  xml: string;
}

const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
/** sitemaps.org: URLs must be entity-escaped. */
const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!);

const XMLNS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/** What the sitemap reads of a profile. */
export type SitemapUser = Pick<PublicUser, 'username' | 'status' | 'hasCustomDomain'>;

/** The addresses the sitemap lists, in the index's order: the home page first. */
export function sitemapUrls(siteUrl: string, users: readonly SitemapUser[]): string[] {
  const urls = [`${siteUrl}/`];
  for (const user of users) {
    if (user.status === 'active' && !user.hasCustomDomain) urls.push(`${siteUrl}/p/${user.username}`);
  }
  return urls;
}

const urlset = (urls: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${XMLNS}">\n${urls.map((u) => `<url><loc>${escapeXml(u)}</loc></url>\n`).join('')}</urlset>\n`;

const sitemapIndex = (locs: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="${XMLNS}">\n${locs.map((u) => `<sitemap><loc>${escapeXml(u)}</loc></sitemap>\n`).join('')}</sitemapindex>\n`;

/**
 * The sitemap files for `urls`: one `/sitemap.xml` while they fit in one file; past `max`, a
 * sitemap index at `/sitemap.xml` naming `/sitemap-1.xml`, `/sitemap-2.xml`, … of at most `max`
 * URLs each. `/sitemap.xml` is always the entry point, so robots.txt names one address.
 */
export function sitemapFiles(siteUrl: string, urls: readonly string[], max = SITEMAP_MAX_URLS): SitemapFile[] {
  if (!Number.isInteger(max) || max < 1 || max > SITEMAP_MAX_URLS) throw new RangeError(`max must be 1 to ${SITEMAP_MAX_URLS}, not ${max}`);
  if (urls.length <= max) return [{ path: '/sitemap.xml', xml: urlset(urls) }];
  const parts: SitemapFile[] = [];
  for (let start = 0, n = 1; start < urls.length; start += max, n++) {
    parts.push({ path: `/sitemap-${n}.xml`, xml: urlset(urls.slice(start, start + max)) });
  }
  if (parts.length > SITEMAP_MAX_URLS) throw new RangeError(`${urls.length} URLs need more than ${SITEMAP_MAX_URLS} sitemap files`);
  return [{ path: '/sitemap.xml', xml: sitemapIndex(parts.map((p) => `${siteUrl}${p.path}`)) }, ...parts];
}

const BY_COLUMNS = new WeakMap<object, SitemapFile[]>();

/** The sitemap files of a build's index columns (src/model/site-index.ts), made once however many routes ask. */
export function siteSitemap(c: Pick<IndexColumns, 'siteUrl' | 'names' | 'suspended' | 'domains'>): SitemapFile[] {
  let files = BY_COLUMNS.get(c);
  if (!files) {
    const users: SitemapUser[] = new Array(c.names.length);
    for (let i = 0; i < c.names.length; i++) users[i] = { username: c.names[i]!, status: c.suspended[i] ? 'suspended' : 'active', hasCustomDomain: c.domains[i] !== null };
    BY_COLUMNS.set(c, (files = sitemapFiles(c.siteUrl, sitemapUrls(c.siteUrl, users))));
  }
  return files;
}
/**
 * Everything may be crawled: a suspended page's `noindex` is in the page, and a crawler refused
 * the page would never read it (a `noindex` works only on a page robots.txt lets crawlers fetch).
 * The API stays crawlable too: link-preview crawlers fetch `og:image` from `/api/avatar`.
 */
export const robotsTxt = (siteUrl: string) => `User-agent: *\nAllow: /\n\nSitemap: ${siteUrl}/sitemap.xml\n`;
