// The answers the build writes as files (src/build/write-build.ts) and `IndexFiles` makes in
// memory: a user's answer and the creators list's first page, with `meta.timestamp` the build time
// and `executionTimeMs` 0, exactly as a static host serves them.
import { etagOf, successBody, type ApiResponse } from '../http/response.ts';
import { sortedCreators } from '../model/creators-list.ts';
import type { SiteIndex } from '../model/site-index.ts';
import type { PublicUser } from '../schemas/api.ts';
import { DEFAULT_CREATORS_QUERY, creatorsAnswer } from './handler.ts';
import { creatorsRows } from './release-files.ts';

/** The bytes of `/api/v1/users/<username>`: `data` is the public user serialised once. */
export const prerenderedUserBody = (builtAt: string, data: Buffer | string) => successBody(data, { timestamp: builtAt, executionTimeMs: 0 });

export const userData = (user: PublicUser) => Buffer.from(JSON.stringify(user));

/** The first page of `/service-api/v1/creators`: the same answer `?limit=50&sort=featured` gets on demand, at the build time. */
export function prerenderedCreators(index: SiteIndex): ApiResponse {
  const made = creatorsAnswer(sortedCreators(creatorsRows(index).rows), index.siteUrl, DEFAULT_CREATORS_QUERY, index.builtAt, 0);
  // A file's ETag, as a static host makes it: strong, over these bytes.
  return { ...made, headers: { ...made.headers, etag: etagOf(made.body!) } };
}
