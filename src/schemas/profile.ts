import { z } from 'astro/zod';
import { DECORATION_ID_PATTERN, DateTimeSchema, IMAGE_FILE_PATTERN, IMAGE_TYPES, charLength, text } from './common.ts';

/** The badges a profile can carry, in the order they are listed in answers. */
export const BADGES = ['verified', 'official', 'helper'] as const;
export type Badge = (typeof BADGES)[number];

/** A bare host name: labels of letters, digits and `-`, at least one dot, no scheme, path or port. */
const HOST_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export const SocialSchema = z.strictObject({
  /** Lowercase platform name, e.g. `github`, `youtube`, `mastodon`. */
  platform: z.string({ error: 'must be a lowercase platform name like `github`' })
    .regex(/^[a-z][a-z0-9.-]{0,31}$/, { error: 'must be a lowercase platform name like `github` (a-z, 0-9, `.`, `-`)' }),
  /** The full address of the profile on that platform, `https:` or `http:`. */
  url: z.url({
    protocol: /^https?$/,
    hostname: z.regexes.domain,
    error: 'must be a full `https://` or `http://` address, like `https://github.com/alice`',
  }).max(2048, { error: 'must be at most 2048 characters' }),
});
export type Social = z.infer<typeof SocialSchema>;

export const SuspensionSchema = z.strictObject({
  /** A short machine-friendly reason, e.g. `spam`. Published as `banInfo.reason`. */
  reason: text(200).refine((s) => s.trim().length > 0, { error: 'must not be empty' }),
  /** The notice shown on the profile page and published as `banInfo.message`. */
  message: text(1000, { multiline: true }).optional(),
  /** When the suspension started. */
  at: DateTimeSchema,
});
export type Suspension = z.infer<typeof SuspensionSchema>;

/** One profile: `content/profiles/<username>.yaml`. The file name is the username. */
export const ProfileSchema = z.strictObject({
  /** The name shown for the profile: 1-64 characters, any Unicode. */
  displayName: text(64).refine((s) => charLength(s.trim()) >= 1, { error: 'must not be empty' }),
  /** About the person, shown as plain text (never as markup). At most 1000 characters. */
  bio: text(1000, { multiline: true }).default(''),
  /** When the account was created: ISO 8601 with a zone. */
  createdAt: DateTimeSchema,
  /** A file name in `content/avatars/`, e.g. `alice.png`. */
  avatar: z.string({ error: 'must be a file name in content/avatars/, like `alice.png`' })
    .regex(IMAGE_FILE_PATTERN, {
      error: `must be a plain file name in content/avatars/ ending in .${Object.keys(IMAGE_TYPES).join(', .')}`,
    })
    .optional(),
  /** A bare host name that serves this profile, e.g. `alice.example.com`. */
  customDomain: z.string({ error: 'must be a host name like `alice.example.com`' })
    .transform((s) => s.toLowerCase())
    .pipe(z.string().regex(HOST_PATTERN, {
      error: 'must be a bare host name like `alice.example.com`: no `https://`, path or port',
    }))
    .optional(),
  /** Page views; a count in `content/stats/views.yaml` replaces it. */
  views: z.int({ error: 'must be a whole number >= 0' }).min(0, { error: 'must be a whole number >= 0' }).default(0),
  /** Badges shown on the profile. */
  badges: z.array(z.enum(BADGES, { error: `must be one of ${BADGES.map((b) => `\`${b}\``).join(', ')}` }), {
    error: 'must be a list, like `[verified, helper]`',
  })
    .refine((list) => new Set(list).size === list.length, { error: 'must not list a badge twice' })
    .default([]),
  /** The id of a decoration in `content/decorations/<id>.yaml`. */
  decoration: z.string({ error: 'must be the id of a file in content/decorations/' })
    .regex(DECORATION_ID_PATTERN, { error: 'must be the id of a file in content/decorations/ (its name without `.yaml`)' })
    .optional(),
  /** Links to the profile elsewhere, shown in this order. */
  socials: z.array(SocialSchema, { error: 'must be a list of `{ platform, url }`' }).max(32, { error: 'must have at most 32 links' }).default([]),
  /** Present when the profile is suspended: its page then shows the message instead of links. */
  suspension: SuspensionSchema.optional(),
  /** The operator's own notes (contact e-mail, an internal id). Never published anywhere. */
  private: z.record(z.string(), z.unknown(), { error: 'must be a mapping of notes (`key: value` lines)' }).optional(),
});
export type Profile = z.infer<typeof ProfileSchema>;
