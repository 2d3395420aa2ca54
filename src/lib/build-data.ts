// What the Astro pages and the dev server read. During `npm run build` the build script has already
// validated the content and hands the public index over in a file (PROFILES_SITE_INDEX), so pages
// never read YAML and never see private data. Under `astro dev` the content is loaded directly.
import fs from 'node:fs';
import path from 'node:path';
import { buildTimeFromEnv, siteUrlFromEnv } from './config.ts';
import { contentDirFromEnv, loadContent } from './content.ts';
import { formatProblem } from './content-problems.ts';
import { Site, buildSiteIndex, type SiteIndex } from './site.ts';

export const SITE_INDEX_ENV = 'PROFILES_SITE_INDEX';

let cached: { index: SiteIndex; site?: Site } | undefined;

function fromContent(): SiteIndex {
  const { content, problems } = loadContent(contentDirFromEnv());
  if (problems.length) throw new Error(`The content has ${problems.length} problem(s):\n${problems.map((p) => formatProblem(p)).join('\n')}`);
  return buildSiteIndex(content, { siteUrl: siteUrlFromEnv(), builtAt: buildTimeFromEnv() });
}

export function getSiteIndex(): SiteIndex {
  if (!cached) {
    const file = process.env[SITE_INDEX_ENV];
    cached = { index: file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as SiteIndex) : fromContent() };
  }
  return cached.index;
}

/** The Site of the content being built (or served by `astro dev`); media straight from the content folder. */
export function getSite(): Site {
  const index = getSiteIndex();
  const dir = contentDirFromEnv();
  cached!.site ??= new Site(index, { avatars: path.join(dir, 'avatars'), decorations: path.join(dir, 'decorations') });
  return cached!.site;
}
