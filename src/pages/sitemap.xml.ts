// /sitemap.xml: the sitemap, or past 50,000 addresses the sitemap index (src/ui/sitemap.ts).
import type { APIRoute } from 'astro';
import { getSiteIndex } from '../build/astro/page-data.ts';
import { siteSitemap, sitemapXml } from '../ui/sitemap.ts';
import { columnsOf } from '../model/site-index.ts';

export const GET: APIRoute = () => new Response(sitemapXml(getSiteIndex().siteUrl, siteSitemap(columnsOf(getSiteIndex()))[0]!));
