// /sitemap-<n>.xml: the parts a sitemap index names when one file cannot hold every address
// (src/ui/sitemap.ts); none on a site with fewer than 50,000.
import type { APIRoute, GetStaticPaths } from 'astro';
import { getSiteIndex } from '../build/astro/page-data.ts';
import { siteSitemap, sitemapXml, type SitemapPart } from '../ui/sitemap.ts';
import { columnsOf } from '../model/site-index.ts';

export const getStaticPaths: GetStaticPaths = () =>
  siteSitemap(columnsOf(getSiteIndex())).slice(1).map((part) => ({ params: { part: part.path.slice('/sitemap-'.length, -'.xml'.length) }, props: { part } }));

// Each file's XML when it is rendered: an edit build renders the one or two that changed.
export const GET: APIRoute = ({ props }) => new Response(sitemapXml(getSiteIndex().siteUrl, (props as { part: SitemapPart }).part));
