// What a build makes from the whole index rather than from one profile, in one place for a cold
// build and an edit build alike: both hand the same columns (src/model/site-index.ts `columnsOf`;
// an edit build's are the served release's kept columns with its changes applied), so both make the
// same bytes by construction (test/build/incremental-property.test.ts checks it).
// - Pages Astro renders from the index (`wholeIndexRoutes`): the home page (creators, the count),
//   the API description and its docs page (the example user), the sitemaps (active profiles), the
//   browse pages (every name).
// - Files the build writes (`handlerFiles`): the handler's lookup tables, the filter of names, the
//   creators rows and the creators list's first page.
import type { DeployTarget } from '../config.ts';
import type { ApiResponse } from '../http/response.ts';
import type { IndexColumns } from '../model/site-index.ts';
import { compressedBaseOf } from '../http/headers.ts';
import { CREATORS_FILE } from '../api/handler.ts';
import { LOOKUP_DIR, lookupFiles } from '../api/release-files.ts';
import { prerenderedCreators } from '../api/prerendered.ts';
import { siteSitemap } from '../ui/sitemap.ts';
import { browsePages, browsePath } from '../ui/browse.ts';

/**
 * The addresses of the pages made from the whole index, as the kept renderer renders them. The
 * browse pages read the names alone: with the same names as the served release (`sameNames`),
 * theirs are these pages' bytes, and an edit build takes them as they are.
 */
export function wholeIndexRoutes(c: IndexColumns, sameNames = false): string[] {
  return ['/', '/openapi.json', '/docs', ...siteSitemap(c).map((f) => f.path), ...(sameNames ? [] : browsePages(c.names).map((p) => browsePath(p.page)))];
}

/**
 * Whether a file of a release (relative to `client/`, compressed siblings included) is made from the
 * whole index: a page of `wholeIndexRoutes` or a file of `handlerFiles`. An edit build makes each anew.
 */
export function isWholeIndexFile(file: string, sameNames = false): boolean {
  const own = compressedBaseOf(file) ?? file;
  return WHOLE_INDEX_PAGE.test(own) || (!sameNames && BROWSE_PAGE.test(own)) || own.startsWith(`${LOOKUP_DIR}/`) || own === CREATORS_FILE;
}
const WHOLE_INDEX_PAGE = /^(index\.html|openapi\.json|docs\.html|sitemap(-\d+)?\.xml)$/;
const BROWSE_PAGE = /^browse\/\d+\.html$/;

/**
 * The files only the on-demand handler reads, by path under `client/`, and the creators list's first
 * page (the same answer `?limit=50&sort=featured` gets on demand). None for a host with files only:
 * it has no handler, and it ignores the query, so every page asked for would be this one.
 * `timestampFor`: the answer time of the creators page's data (answer-times.ts).
 */
export function handlerFiles(c: IndexColumns, target: DeployTarget, timestampFor: (dataEtag: string) => string): { files: Map<string, string | Uint8Array>; creators: ApiResponse | undefined } {
  if (target === 'static') return { files: new Map(), creators: undefined };
  const creators = prerenderedCreators(c, timestampFor);
  const files = lookupFiles(c);
  files.set(CREATORS_FILE, creators.body as string);
  return { files, creators };
}
