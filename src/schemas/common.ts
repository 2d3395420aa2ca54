import { z } from 'astro/zod';

/** A username: the profile's file name. No dot, so `bob.html` can never make a static host serve JSON as HTML. */
export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const USERNAME_RULE = '1 to 32 characters of a-z, 0-9, `_` and `-`, starting with a letter or digit';

/**
 * Names that fit USERNAME_PATTERN but name a file the site writes for itself, with why: a profile of
 * that name would be lost. `p/index.html` is the `p/` folder's own page to Astro and every static
 * host (`/p/index` is a 404 or a redirect to `/p/`, and the page answers at `/p`). The one list:
 * the content check and build (src/content/load.ts), the edit path and `new:profile` read it.
 */
export const RESERVED_USERNAMES: ReadonlyMap<string, string> = new Map([
  ['index', '`p/index.html` is the folder page of `/p/`: the profile page would answer at `/p`, not `/p/index`'],
]);

/** A name a profile may have: USERNAME_PATTERN, and not one of RESERVED_USERNAMES. */
export const isUsername = (name: string) => USERNAME_PATTERN.test(name) && !RESERVED_USERNAMES.has(name);

/** A bare host name in lowercase (`alice.example.com`): a profile's custom domain, and the Host the handler looks up. */
export const HOST_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The id of a decoration: its file name in `content/decorations/`. */
export const DECORATION_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Image types an operator may place in `content/avatars/` or `content/decorations/`, with the type we serve them as. */
export const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
};

/** A plain file name (no folder, no `..`) with one of the image extensions above. SVG is left out on purpose: it can carry script. */
export const IMAGE_FILE_PATTERN = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\\.(${Object.keys(IMAGE_TYPES).join('|')})$`, 'i');

/** Length in characters as a person counts them (code points), not UTF-16 units: an emoji is one. */
export const charLength = (s: string) => [...s].length;

// C0/C1 control characters except tab and newline: invisible, and they break terminals and logs.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/**
 * Bidirectional embeddings, overrides and isolates (U+202A-202E, U+2066-2069): they reorder how
 * the text around them reads, so a link or a name can show other than what it is (CVE-2021-42574).
 * The marks U+200E and U+200F stay allowed: right-to-left names use them.
 */
export const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/u;
const BIDI_RULE = 'must not contain bidirectional control characters (U+202A-202E, U+2066-2069): they change how the text around them reads';
/** A UTF-16 surrogate with no partner: a YAML `\uD800` escape, which no UTF-8 output can carry. */
export const LONE_SURROGATE = /[\ud800-\udfff]/u;
const SURROGATE_RULE = 'must not contain a lone surrogate (a `\\uD800`-`\\uDFFF` escape without its pair): it is no character';
/**
 * What does not show: white space, format characters (zero-width spaces and joiners, the BOM, soft
 * hyphens), marks with nothing to sit on, and the blank letters of Hangul and Braille.
 */
const INVISIBLE = /[\s\p{Cf}\p{Mn}\p{Me}\u115f\u1160\u3164\uffa0\u2800]/gu;
/** Whether the text has a character that shows: "must not be empty" counts only those. */
export const hasVisible = (s: string) => s.replace(INVISIBLE, '').length > 0;

/**
 * A rule a Zod refinement checks, as a JSON Schema pattern with the same message, for the editor
 * schemas (src/tools/json-schemas.ts puts these under `allOf`): refinements have no JSON Schema.
 * Patterns are read with the `u` flag, as yaml-language-server and Ajv read them, so `{0,64}`
 * counts code points as `charLength` does (`maxLength` in yaml-language-server counts UTF-16 units).
 */
export interface EditorPattern {
  pattern: string;
  message: string;
  /** Matched in any case (spelt out as `[aA]`, since JSON Schema patterns carry no flags). */
  caseInsensitive?: boolean;
}

/** Text of 0..max characters without control characters (newlines allowed when `multiline`). */
export const text = (max: number, { multiline = false } = {}) => {
  const tooLong = `must be at most ${max} characters`;
  const control = multiline ? 'must not contain control characters' : 'must be one line without control characters';
  const editorPatterns: EditorPattern[] = [
    { pattern: `^[\\s\\S]{0,${max}}$`, message: tooLong },
    { pattern: multiline ? '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]*$' : '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$', message: control },
    { pattern: '^[^\\u202a-\\u202e\\u2066-\\u2069]*$', message: BIDI_RULE },
    { pattern: '^[^\\ud800-\\udfff]*$', message: SURROGATE_RULE },
  ];
  return z.string({ error: 'must be text' })
    .refine((s) => charLength(s) <= max, { error: tooLong })
    // One line: no tab or line feed, nor Unicode's line and paragraph separators (U+2028, U+2029).
    .refine((s) => !CONTROL.test(s) && (multiline || !/[\t\n\u2028\u2029]/.test(s)), { error: control })
    .refine((s) => !BIDI_CONTROL.test(s), { error: BIDI_RULE })
    .refine((s) => !LONE_SURROGATE.test(s), { error: SURROGATE_RULE })
    .meta({ editorPatterns });
};

/**
 * The editor pattern of the "must not be empty" refinements (`hasVisible`: a character that is not
 * white space or invisible): `.meta({ editorNotEmpty: NOT_EMPTY })` beside them.
 */
export const NOT_EMPTY: EditorPattern = { pattern: '[^\\s\\p{Cf}\\p{Mn}\\p{Me}\\u115f\\u1160\\u3164\\uffa0\\u2800]', message: 'must not be empty' };

/** Characters an address may not hold anywhere: controls (NUL, U+0085), spaces, bidirectional controls. */
export const URL_FORBIDDEN = /[\u0000-\u0020\u007f-\u009f\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff\ud800-\udfff]/u;
export const URL_FORBIDDEN_RULE = 'must not contain spaces, control, invisible or bidirectional control characters: percent-encode them (`%20`)';

/**
 * The years a date may have: 1970 to 9999, and on the first and last day in UTC (`Z`, `±00:00`), so
 * that in UTC, as answers publish it (`toISOString`), it is still 1970..9999: four digits, as the
 * OpenAPI `date-time` format (RFC 3339) requires, where `9999-12-31T23:59:59-23:59` would be
 * `+010000-…`. No profile or suspension predates the Unix epoch. One pattern for the check and the editor.
 */
// Text not starting like a date passes: the date-time format's own message is the one to show.
export const DATE_RANGE_PATTERN = /^(?:(?![0-9]{4}-)|(?!1970-01-01T.*[+-](?!00:00)[0-9]{2}:[0-9]{2}$)(?!9999-12-31T.*[+-](?!00:00)[0-9]{2}:[0-9]{2}$)(?:19[7-9][0-9]|[2-9][0-9]{3})-)/;
export const DATE_RANGE_RULE = 'must be in the years 1970 to 9999, and in UTC (`Z`) on 1970-01-01 and 9999-12-31: answers publish it in UTC with a four-digit year';

const COUNT_RULE = 'must be a whole number >= 0';
/**
 * A count of views: a whole number from 0 to 2^53 - 1, the largest JSON carries exactly; a bigger
 * one is said to be too big, not "not a whole number".
 */
export const viewCount = () => z.int({
  // Called without an issue by the editor schemas (src/tools/json-schemas.ts): the rule.
  error: (issue) => (typeof issue?.input === 'number' && Number.isInteger(issue.input) ? `must be at most ${Number.MAX_SAFE_INTEGER.toLocaleString('en')}` : COUNT_RULE),
}).min(0, { error: COUNT_RULE });

const DATE_TIME_RULE = 'must be an ISO 8601 date-time with a zone, like `2021-03-14T09:26:53Z` or `2021-03-14T11:26:53+02:00`';
/** The shape of a date-time: what fails with it is a day, month or hour that does not exist (`2025-02-30`). */
const DATE_TIME_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;
/** An ISO 8601 date-time with a zone, e.g. `2021-03-14T09:26:53Z` or `2022-07-04T15:30:00+02:00`, in DATE_RANGE_PATTERN's years. */
export const DateTimeSchema = z.iso.datetime({
  offset: true,
  error: (issue) => (typeof issue?.input === 'string' && DATE_TIME_SHAPE.test(issue.input)
    ? 'is written as a date-time but names none that exists: check the day of the month (February has 28, or 29 in a leap year), the month (01-12), the hour (00-23) and the minutes and seconds (00-59)'
    : DATE_TIME_RULE),
}).refine((s) => DATE_RANGE_PATTERN.test(s), { error: DATE_RANGE_RULE })
  .meta({ editorPatterns: [{ pattern: DATE_RANGE_PATTERN.source, message: DATE_RANGE_RULE }] });

// Only ASCII: `toLowerCase` is then the same folding, several times faster than a replace with a callback per run of capitals.
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * ASCII-only case folding: `ALICE` finds `alice`, but a look-alike such as the Kelvin sign (U+212A),
 * which `toLowerCase()` turns into `k`, stays unknown.
 */
export const foldAscii = (s: string) => (NON_ASCII.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s.toLowerCase());
