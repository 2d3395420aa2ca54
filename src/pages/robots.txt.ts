// /robots.txt: pre-rendered; names the sitemap (src/ui/sitemap.ts).
import type { APIRoute } from 'astro';
import { getSiteIndex } from '../build/astro/page-data.ts';
import { robotsTxt } from '../ui/sitemap.ts';

export const GET: APIRoute = () => new Response(robotsTxt(getSiteIndex().siteUrl));
