// /sitemap-<n>.xml: the parts a sitemap index names when one file cannot hold every address
// (src/ui/sitemap.ts); none on a site with fewer than 50,000.
import type { APIRoute, GetStaticPaths } from 'astro';
import { getSiteIndex } from '../build/astro/page-data.ts';
import { siteSitemap } from '../ui/sitemap.ts';
import { columnsOf } from '../model/site-index.ts';

export const getStaticPaths: GetStaticPaths = () =>
  siteSitemap(columnsOf(getSiteIndex())).slice(1).map((file) => ({ params: { part: file.path.slice('/sitemap-'.length, -'.xml'.length) }, props: { xml: file.xml } }));

export const GET: APIRoute = ({ props }) => new Response((props as { xml: string }).xml);
