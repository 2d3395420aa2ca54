// What the Astro pages and the dev server read. During `npm run build` the build script has already
// validated the content and hands the public index over in memory (Astro pre-renders in the same
// process), so pages never read YAML, never see private data, and the index is not held twice.
// Under `astro dev` the content is loaded directly.
// Not a content collection: it cost more than 20% of build time and memory (docs/design.md).
import path from 'node:path';
import { buildTimeFromEnv, deployTargetFromEnv, siteUrlFromEnv } from '../../config.ts';
import { contentDirFromEnv, loadContent } from '../../content/load.ts';
import { formatProblem } from '../../content/problems.ts';
import { IndexFiles } from '../../api/index-files.ts';
import { buildSiteIndex, type SiteIndex } from '../../model/site-index.ts';
import { mediaAddressesFor } from '../../model/public-user.ts';

/** Where the build script leaves the index for the pages: a global symbol, since Astro loads its own copy of this module. */
const HANDOFF = Symbol.for('profile-lookup.site-index');
const RENDER = Symbol.for('profile-lookup.pages-to-render');

/** `pagesToRender`: the profiles whose page changed (src/build/page-reuse.ts); the others are linked from the last build. */
export function handOverSiteIndex(index: SiteIndex, pagesToRender?: ReadonlySet<string>): void {
  (globalThis as Record<symbol, unknown>)[HANDOFF] = index;
  (globalThis as Record<symbol, unknown>)[RENDER] = pagesToRender;
}

/** Whether the build script (or a render process) handed an index over: false under a bare `astro build`. */
export const siteIndexHandedOver = (): boolean => (globalThis as Record<symbol, unknown>)[HANDOFF] !== undefined;

const RENDERED = Symbol.for('profile-lookup.pages-rendered');

/** Counts a rendered profile page, for the build's progress lines. */
export function notePageRendered(): void {
  const g = globalThis as Record<symbol, number | undefined>;
  g[RENDERED] = (g[RENDERED] ?? 0) + 1;
}

/** Profile pages rendered in this process so far. */
export const pagesRendered = (): number => (globalThis as Record<symbol, number | undefined>)[RENDERED] ?? 0;

/** Whether Astro renders this profile's page: all of them, unless the build script said otherwise. */
export function shouldRenderPage(username: string): boolean {
  const only = (globalThis as Record<symbol, ReadonlySet<string> | undefined>)[RENDER];
  return only ? only.has(username) : true;
}

let cached: { index: SiteIndex; files?: IndexFiles } | undefined;

function fromContent(): SiteIndex {
  const { content, problems } = loadContent(contentDirFromEnv(), { siteUrl: siteUrlFromEnv() });
  if (problems.length) throw new Error(`The content has ${problems.length} problem(s):\n${problems.map((p) => formatProblem(p)).join('\n')}`);
  return buildSiteIndex(content, { siteUrl: siteUrlFromEnv(), builtAt: buildTimeFromEnv(), media: mediaAddressesFor(deployTargetFromEnv()) });
}

export function getSiteIndex(): SiteIndex {
  if (!cached) {
    const handed = (globalThis as Record<symbol, SiteIndex | undefined>)[HANDOFF];
    cached = { index: handed ?? fromContent() };
  }
  return cached.index;
}

/** The content being built (or served by `astro dev`) as a release's files; media straight from the content folder. */
export function getReleaseFiles(): IndexFiles {
  const index = getSiteIndex();
  const dir = contentDirFromEnv();
  cached!.files ??= new IndexFiles(index, { avatars: path.join(dir, 'avatars'), decorations: path.join(dir, 'decorations') });
  return cached!.files;
}
