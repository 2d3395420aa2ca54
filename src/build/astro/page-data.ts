// What the Astro pages and the dev server read: the one module pages take their data from. During
// `npm run build` the build script has already validated the content and hands the public index
// over in memory, so pages never read YAML, never see private data, and the index is not held
// twice. Under `astro dev` the content is loaded directly.
// Astro bundles each module a page imports into its own code, which would give the pages a copy
// of this one that the build script never handed anything to: `sharePageData` keeps it out of the
// bundle, imported by its address, so pages and the build script (or a render thread) share it.
// Not a content collection: it cost more than 20% of build time and memory (docs/design.md).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin } from 'vite';
import { buildTimeFromEnv, deployTargetFromEnv, siteUrlFromEnv } from '../../config.ts';
import { contentDirFromEnv, loadContent } from '../../content/load.ts';
import { formatProblem } from '../../content/problems.ts';
import { IndexFiles } from '../../api/index-files.ts';
import { buildSiteIndex, type SiteIndex } from '../../model/site-index.ts';
import { mediaAddressesFor } from '../../model/public-user.ts';

let handed: SiteIndex | undefined;
let toRender: ReadonlySet<string> | undefined;
let rendered = 0;
let cached: { index: SiteIndex; files?: IndexFiles } | undefined;

/** The custom event `astro dev` sends its server modules when the content folder changed (dev-watch.ts `reloadOnContentEdits`). */
export const CONTENT_EDITED_EVENT = 'profile-lookup:content-edited';
// Under `astro dev` the next request reads the content again. An event rather than a reload of the
// modules: Astro keeps the middleware it loaded first, and with it this module's first copy.
import.meta.hot?.on(CONTENT_EDITED_EVENT, () => {
  if (!handed) cached = undefined;
});

/** `pagesToRender`: the profiles whose page changed (src/build/reuse/page-reuse.ts); the others are linked from the last build. */
export function handOverSiteIndex(index: SiteIndex, pagesToRender?: ReadonlySet<string>): void {
  handed = index;
  toRender = pagesToRender;
  cached = undefined;
}

/** Whether the build script (or a render thread) handed an index over: false under a bare `astro build`. */
export const siteIndexHandedOver = (): boolean => handed !== undefined;

/** Counts a rendered profile page, for the build's progress lines. */
export function notePageRendered(): void {
  rendered++;
}

/** Profile pages rendered in this thread so far. */
export const pagesRendered = (): number => rendered;

/** Whether Astro renders this profile's page: all of them, unless the build script said otherwise. */
export function shouldRenderPage(username: string): boolean {
  return toRender ? toRender.has(username) : true;
}

function fromContent(): SiteIndex {
  const { content, problems } = loadContent(contentDirFromEnv(), { siteUrl: siteUrlFromEnv() });
  if (problems.length) throw new Error(`The content has ${problems.length} problem(s):\n${problems.map((p) => formatProblem(p)).join('\n')}`);
  return buildSiteIndex(content, { siteUrl: siteUrlFromEnv(), builtAt: buildTimeFromEnv(), media: mediaAddressesFor(deployTargetFromEnv()) });
}

export function getSiteIndex(): SiteIndex {
  cached ??= { index: handed ?? fromContent() };
  return cached.index;
}

/** The content being built (or served by `astro dev`) as a release's files; media straight from the content folder. */
export function getReleaseFiles(): IndexFiles {
  const index = getSiteIndex();
  const dir = contentDirFromEnv();
  cached!.files ??= new IndexFiles(index, { avatars: path.join(dir, 'avatars'), decorations: path.join(dir, 'decorations') });
  return cached!.files;
}

/** This module's file, and the address the pre-rendered code imports it by. */
const SELF = fileURLToPath(import.meta.url);
export const PAGE_DATA_URL = pathToFileURL(SELF).href;

/**
 * A Vite plugin (public API) for the pre-render build only: every import of this module stays an
 * import of its `file:` address, never bundled, so there is one copy per thread. An address, not
 * a path: Rolldown would make a path relative to the output, which the kept renderer moves.
 */
export const sharePageData = (): Plugin => ({
  name: 'profile-lookup:share-page-data',
  apply: 'build',
  enforce: 'pre',
  applyToEnvironment: (environment) => environment.name === 'prerender',
  resolveId(source, importer) {
    if (!importer || !source.startsWith('.')) return null;
    const from = importer.replace(/[?#].*$/, '');
    if (!path.isAbsolute(from)) return null;
    return path.resolve(path.dirname(from), source) === SELF ? { id: PAGE_DATA_URL, external: true } : null;
  },
});
