import { z } from 'astro/zod';
import { DECORATION_ID_PATTERN, DateTimeSchema, HOST_PATTERN, IMAGE_FILE_PATTERN, IMAGE_TYPES, NOT_EMPTY, text, URL_FORBIDDEN, URL_FORBIDDEN_RULE, hasVisible, viewCount } from './common.ts';

/** The badges a profile can carry, in the order they are listed in answers. */
export const BADGES = ['verified', 'official', 'helper'] as const;
export type Badge = (typeof BADGES)[number];

/** A bare host name: labels of letters, digits and `-`, at least one dot, no scheme, path or port. */
const HOST_RULE = 'must be a bare host name like `alice.example.com`: no `https://`, path or port';
const URL_RULE = 'must be a full `https://` or `http://` address with a host name, like `https://github.com/alice` (not an IP address or a name without a dot, like `localhost`)';
/** `https://github.com@evil.example/` goes to evil.example: a user name before `@` passes for the host. */
const USERINFO_RULE = 'must not hold a user name or password before the host (`name@`): `https://github.com@evil.example` goes to evil.example';
/** Browsers read `\` as `/`, other parsers do not: `https://evil.example\@github.com/` goes to evil.example, and to github.com by Python's urlsplit. */
const BACKSLASH_RULE = 'must not contain `\\` (browsers read it as `/`, other programs do not, so the address names two hosts): percent-encode it (`%5C`)';

export const SocialSchema = z.strictObject({
  /** Lowercase platform name, e.g. `github`, `youtube`, `mastodon`. */
  platform: z.string({ error: 'must be a lowercase platform name like `github`' })
    .regex(/^[a-z][a-z0-9.-]{0,31}$/, { error: 'must be a lowercase platform name like `github` (a-z, 0-9, `.`, `-`)' })
    .meta({ description: 'Lowercase platform name, e.g. `github`, `youtube`, `mastodon`.' }),
  /** The full address of the profile on that platform, `https:` or `http:`. */
  url: z.url({
    protocol: /^https?$/,
    hostname: z.regexes.domain,
    error: URL_RULE,
  }).max(2048, { error: 'must be at most 2048 characters' })
    .refine((u) => !URL_FORBIDDEN.test(u), { error: URL_FORBIDDEN_RULE })
    .refine((u) => !u.includes('\\'), { error: BACKSLASH_RULE })
    .refine((u) => !URL.canParse(u) || (new URL(u).username === '' && new URL(u).password === ''), { error: USERINFO_RULE })
    .meta({
      description: 'The full address of the profile on that platform, `https://` or `http://`, e.g. `https://github.com/alice`.',
      // The scheme only: the host is checked on the parsed URL (IDNA, percent-decoding), which a pattern cannot follow.
      editorPatterns: [
        { pattern: '^https?:', caseInsensitive: true, message: URL_RULE },
        { pattern: `^[^${URL_FORBIDDEN.source.slice(1, -1)}]*$`, message: URL_FORBIDDEN_RULE },
        { pattern: '^[^\\\\]*$', message: BACKSLASH_RULE },
        { pattern: '^(?![a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]*@)', message: USERINFO_RULE },
      ],
    }),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'must be a link of two lines, `- platform: github` and under it `url: https://github.com/alice`, not the address alone' : undefined) });
export type Social = z.infer<typeof SocialSchema>;

export const SuspensionSchema = z.strictObject({
  /** A short machine-friendly reason, e.g. `spam`. Published as `banInfo.reason`. */
  reason: text(200).refine(hasVisible, { error: 'must not be empty' })
    .meta({ editorNotEmpty: NOT_EMPTY, description: 'A short machine-friendly reason, e.g. `spam`; at most 200 characters. Published as `banInfo.reason`.' }),
  /** The notice shown on the profile page and published as `banInfo.message`. */
  message: text(1000, { multiline: true }).optional()
    .meta({ description: 'The notice shown on the profile page instead of its bio and links, published as `banInfo.message`; at most 1000 characters.' }),
  /** When the suspension started. */
  at: DateTimeSchema.meta({ description: 'When the suspension started: ISO 8601 with a zone, e.g. `2024-05-01T12:00:00Z`.' }),
}, { error: (issue) => (issue.code === 'invalid_type' ? 'must be keys indented under `suspension:`: `reason: spam` and `at: 2024-05-01T12:00:00Z` (and `message:` if you like), not a value on its line' : undefined) });
export type Suspension = z.infer<typeof SuspensionSchema>;

/** One profile: `content/profiles/<username>.yaml`. The file name is the username. */
export const ProfileSchema = z.strictObject({
  /** The name shown for the profile: 1-64 characters, any Unicode. */
  displayName: text(64).refine(hasVisible, { error: 'must not be empty' })
    .meta({ editorNotEmpty: NOT_EMPTY, description: 'The name shown for the profile: 1-64 characters, any Unicode (an emoji counts as one).' }),
  /** About the person, shown as plain text (never as markup). At most 1000 characters. */
  bio: text(1000, { multiline: true }).default('')
    .meta({ description: 'About the person, shown as plain text (never as markup); newlines allowed, at most 1000 characters.' }),
  /** When the account was created: ISO 8601 with a zone. */
  createdAt: DateTimeSchema.meta({ description: 'When the account was created: ISO 8601 with a zone, e.g. `2021-03-14T09:26:53Z` or `2022-07-04T15:30:00+02:00`.' }),
  /** A file name in `content/avatars/`, e.g. `alice.png`. */
  avatar: z.string({ error: 'must be a file name in content/avatars/, like `alice.png`' })
    .regex(IMAGE_FILE_PATTERN, {
      error: `must be a plain file name in content/avatars/ ending in .${Object.keys(IMAGE_TYPES).join(', .')}`,
    })
    .optional()
    .meta({ description: `An image file in \`content/avatars/\`, e.g. \`alice.png\` (.${Object.keys(IMAGE_TYPES).join(', .')}; no SVG). Without one, a generated image with the initial is shown.` }),
  /** A bare host name that serves this profile, e.g. `alice.example.com`. */
  customDomain: z.string({ error: 'must be a host name like `alice.example.com`' })
    .transform((s) => s.toLowerCase())
    .pipe(z.string().regex(HOST_PATTERN, { error: HOST_RULE }))
    .optional()
    .meta({
      description: 'A bare host name that serves this profile, e.g. `alice.example.com`: no `https://`, path or port. `pageUrl` becomes `https://<customDomain>`.',
      // The input side of the lowercasing transform has no pattern of its own: the host rule in any case.
      editorPatterns: [{ pattern: HOST_PATTERN.source, caseInsensitive: true, message: HOST_RULE }],
    }),
  /** Page views; a count in `content/stats/views.yaml` replaces it. */
  views: viewCount().default(0)
    .meta({ description: 'Page views, a whole number >= 0. A count for this profile in `content/stats/views.yaml` replaces it.' }),
  /** Badges shown on the profile. */
  badges: z.array(z.enum(BADGES, { error: `must be one of ${BADGES.map((b) => `\`${b}\``).join(', ')}` }), {
    error: 'must be a list, like `[verified, helper]`',
  })
    .refine((list) => new Set(list).size === list.length, { error: 'must not list a badge twice' })
    .default([])
    .meta({ uniqueItems: true, description: `Badges shown on the profile, each at most once: ${BADGES.map((b) => `\`${b}\``).join(', ')}. E.g. \`[verified, helper]\`.` }),
  /** The id of a decoration in `content/decorations/<id>.yaml`. */
  decoration: z.string({ error: 'must be the id of a file in content/decorations/' })
    .regex(DECORATION_ID_PATTERN, { error: 'must be the id of a file in content/decorations/ (its name without `.yaml`)' })
    .optional()
    .meta({ description: 'An avatar frame: the id of `content/decorations/<id>.yaml` (its file name without `.yaml`), e.g. `sakura`.' }),
  /** Links to the profile elsewhere, shown in this order. */
  socials: z.array(SocialSchema, { error: 'must be a list of `{ platform, url }`' }).max(32, { error: 'must have at most 32 links' }).default([])
    .meta({ description: 'Links to the profile elsewhere, at most 32, shown in this order: a list of `{ platform, url }`.' }),
  /** Present when the profile is suspended: its page then shows the message instead of links. */
  suspension: SuspensionSchema.optional()
    .meta({ description: 'Present when the profile is suspended: `{ reason, message?, at }`. The profile is still published, with its page showing the message instead of its bio and links.' }),
  /** The operator's own notes (contact e-mail, an internal id). Never published anywhere. */
  private: z.record(z.string(), z.unknown(), { error: 'must be a mapping of notes (`key: value` lines)' }).optional()
    .meta({ description: 'The operator\'s own notes (contact e-mail, an internal id), any `key: value` lines. Never published anywhere.' }),
});
export type Profile = z.infer<typeof ProfileSchema>;
