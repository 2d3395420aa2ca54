// The public API's answers, as schemas: the one definition of what clients receive. The public
// objects are built field by field to these shapes (src/model/public-user.ts), and tests validate
// real responses against them.
import { z } from 'astro/zod';
import { BADGES } from './profile.ts';
import { MAX_LIMIT } from './queries.ts';

export const API_VERSION = 'v1';

export const PublicBadgesSchema = z.strictObject({
  isVerified: z.boolean(),
  isOfficial: z.boolean(),
  isHelper: z.boolean(),
  /** The badges held, in the order verified, official, helper. */
  list: z.array(z.enum(BADGES)),
});

export const PublicDecorationSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  file: z.string(),
  /** `SITE_URL/api/decoration?f=<file>`; in a `DEPLOY_TARGET=static` build, `SITE_URL/media/decorations/<file>`. */
  url: z.url(),
});

export const BanInfoSchema = z.strictObject({
  isBanned: z.boolean(),
  reason: z.string().nullable(),
  message: z.string().nullable(),
  bannedAt: z.iso.datetime().nullable(),
});

export const PublicUserSchema = z.strictObject({
  username: z.string(),
  displayName: z.string(),
  bio: z.string(),
  /**
   * `SITE_URL/api/avatar?u=<username>`: the avatar, or a generated default image. In a
   * `DEPLOY_TARGET=static` build, a file: `SITE_URL/media/avatars/<file>`, or the generated PNG under `/media/og/`.
   */
  avatarUrl: z.url(),
  /** `https://<customDomain>` when set, else `SITE_URL/p/<username>`. */
  pageUrl: z.url(),
  hasCustomDomain: z.boolean(),
  customDomain: z.string().nullable(),
  /** Days from the UTC date of `createdAt` to the UTC date of the build that wrote the answer. */
  accountAgeDays: z.int().min(0),
  /** UTC, ISO 8601. */
  createdAt: z.iso.datetime(),
  views: z.int().min(0),
  badges: PublicBadgesSchema,
  avatarDecoration: PublicDecorationSchema.nullable(),
  socials: z.array(z.strictObject({ platform: z.string(), url: z.url() })),
  status: z.enum(['active', 'suspended']),
  banInfo: BanInfoSchema,
});
export type PublicUser = z.infer<typeof PublicUserSchema>;

export const CreatorSummarySchema = z.strictObject({
  username: z.string(),
  displayName: z.string(),
  avatarUrl: z.url(),
  pageUrl: z.url(),
  badges: PublicBadgesSchema,
  views: z.int().min(0),
  category: z.string(),
  featured: z.boolean(),
});
export type CreatorSummary = z.infer<typeof CreatorSummarySchema>;

export const MetaSchema = z.strictObject({
  timestamp: z.iso.datetime().describe('Made on demand: when the answer was made. Pre-rendered (a file of the build): when its `data` last changed, not when it was sent.'),
  version: z.literal(API_VERSION),
  executionTimeMs: z.number().min(0).describe('Made on demand: milliseconds from the request\'s arrival to the answer. Pre-rendered: 0.'),
});

export const ErrorCodeSchema = z.enum([
  'USER_NOT_FOUND', 'MISSING_USERNAME', 'INVALID_USERNAME', 'INVALID_PARAMETER',
  'DECORATION_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'BAD_REQUEST', 'INTERNAL_ERROR',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

export const ErrorBodySchema = z.strictObject({
  success: z.literal(false),
  error: z.strictObject({ code: ErrorCodeSchema, message: z.string() }),
  meta: MetaSchema,
});

export const UserBodySchema = z.strictObject({ success: z.literal(true), data: PublicUserSchema, meta: MetaSchema });

export const CreatorsBodySchema = z.strictObject({
  success: z.literal(true),
  data: z.array(CreatorSummarySchema),
  meta: MetaSchema.extend({
    /** Creators matching the filters, across all pages. */
    total: z.int().min(0),
    /** Items per page. */
    limit: z.int().min(1).max(MAX_LIMIT),
  }),
  /** Full addresses of the neighbouring pages, or null at the ends. */
  links: z.strictObject({ next: z.url().nullable(), prev: z.url().nullable() }),
});
