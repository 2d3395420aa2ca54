// The `cacheKey` of a profile page for Astro's incremental build: a hash of what the page shows.
import { createHash } from 'node:crypto';
import type { PublicUser } from '../schemas/api.ts';

/** Everything but `accountAgeDays`, which moves daily while the page shows only the month joined. */
export function profilePageKey(user: PublicUser, avatarFile: string | undefined): string {
  return createHash('sha1').update(JSON.stringify({ ...user, accountAgeDays: 0, avatarFile })).digest('base64url');
}
