import { z } from 'astro/zod';
import { USERNAME_PATTERN, USERNAME_RULE, viewCount } from './common.ts';

/** `content/stats/views.yaml`, written by tools: `username: count`; a count replaces the profile's `views`. */
export const ViewsStatsSchema = z.record(
  z.string().regex(USERNAME_PATTERN, { error: `must be a username: ${USERNAME_RULE}` }),
  viewCount()
    .meta({ description: 'The page views of the profile named by the key; replaces the profile\'s own `views`.' }),
  { error: 'must be a mapping of `username: count` lines' },
);
export type ViewsStats = z.infer<typeof ViewsStatsSchema>;
