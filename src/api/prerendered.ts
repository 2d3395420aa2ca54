// The answers the build writes as files (src/build/files/write-build.ts) and `IndexFiles` makes in
// memory: a user's answer and the creators list's first page, with `executionTimeMs` 0, exactly as
// a static host serves them. `meta.timestamp` is the time of the build that last changed the data
// (src/build/reuse/answer-times.ts); in memory, the build time.
import { etagOf, successBody, type ApiResponse } from '../http/response.ts';
import { sortedCreators } from '../model/creators-list.ts';
import type { IndexColumns } from '../model/site-index.ts';
import type { PublicUser } from '../schemas/api.ts';
import { DEFAULT_CREATORS_QUERY, creatorsAnswer } from './handler.ts';

/** The bytes of `/api/v1/users/<username>`: `data` is the public user serialised once. */
export const prerenderedUserBody = (builtAt: string, data: Buffer | string) => successBody(data, { timestamp: builtAt, executionTimeMs: 0 });

export const userData = (user: PublicUser) => Buffer.from(JSON.stringify(user));

/**
 * The first page of `/service-api/v1/creators`: the same answer `?limit=50&sort=featured` gets on
 * demand. `timestampFor` is given the weak ETag (a hash of everything but `meta`) and says the
 * `meta.timestamp` (src/build/reuse/answer-times.ts); the build time without it.
 */
export function prerenderedCreators(index: Pick<IndexColumns, 'siteUrl' | 'builtAt' | 'creatorRows'>, timestampFor?: (dataEtag: string) => string): ApiResponse {
  const sorted = sortedCreators(index.creatorRows);
  let made = creatorsAnswer(sorted, index.siteUrl, DEFAULT_CREATORS_QUERY, index.builtAt, 0);
  const timestamp = timestampFor?.(made.headers.etag!) ?? index.builtAt;
  if (timestamp !== index.builtAt) made = creatorsAnswer(sorted, index.siteUrl, DEFAULT_CREATORS_QUERY, timestamp, 0);
  // A file's ETag, as a static host makes it: strong, over these bytes.
  return { ...made, headers: { ...made.headers, etag: etagOf(made.body!) } };
}
