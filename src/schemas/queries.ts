// The API's inputs: path and query parameters, as schemas. The handlers parse every query through
// these (`parseQuery` below), and /openapi.json documents them from the same objects, so a limit or
// a message is written once.
import { z } from 'astro/zod';
import { USERNAME_PATTERN, USERNAME_RULE } from './common.ts';

/** Orders of the creators list. */
export const CREATOR_SORTS = ['featured', 'views', 'newest', 'name'] as const;
export type CreatorSort = (typeof CREATOR_SORTS)[number];
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;
export const MAX_CATEGORY_LENGTH = 64;

const LIMIT_RULE = `\`limit\` must be a whole number from 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`;
const CATEGORY_RULE = `\`category\` must be a category name of 1 to ${MAX_CATEGORY_LENGTH} characters, e.g. \`category=art\``;

/** USERNAME_PATTERN in any ASCII casing: the path form folds case before it looks a name up. */
const USERNAME_ANY_CASE_PATTERN = new RegExp(USERNAME_PATTERN.source.replaceAll('a-z', 'a-zA-Z'));
export const UsernameParamSchema = z.string().regex(USERNAME_ANY_CASE_PATTERN).describe(`A username: ${USERNAME_RULE}. Any ASCII casing.`);
/** The longest `username` (or `u`) the query form reads, spaces around it included. */
export const MAX_QUERY_USERNAME_LENGTH = 200;
export const UsernameQuerySchema = z.string().min(1).max(MAX_QUERY_USERNAME_LENGTH)
  .describe('A username; spaces around it are trimmed, one leading `@` is stripped and ASCII case is folded.');
export const DecorationFileSchema = z.string().min(1).describe('A decoration image file name, as in `avatarDecoration.file`.');

/** `GET /service-api/v1/creators`: parameters not named here (`utm_source`, cache busters) are ignored. */
export const CreatorsQuerySchema = z.object({
  // Digits only: `1e1` or ` 5` is not a limit, although Number() would read one.
  limit: z.preprocess((v) => (typeof v === 'string' && /^\d{1,3}$/.test(v) ? Number(v) : v),
    z.int({ error: LIMIT_RULE }).min(1, { error: LIMIT_RULE }).max(MAX_LIMIT, { error: LIMIT_RULE }))
    .default(DEFAULT_LIMIT).describe(`Items per page, 1-${MAX_LIMIT}.`),
  cursor: z.string().describe('Opaque: the `cursor` of `links.next` or `links.prev` of a previous page, with the same sort.').optional(),
  // Length counted before trimming, emptiness after.
  category: z.string().max(MAX_CATEGORY_LENGTH, { error: CATEGORY_RULE }).trim().min(1, { error: CATEGORY_RULE })
    .describe('Only creators of this category (case-insensitive).').optional(),
  featured: z.enum(['true', 'false'], { error: '`featured` must be `true` or `false`' }).describe('Only featured (or only not featured) creators.').optional(),
  sort: z.enum(CREATOR_SORTS, { error: `\`sort\` must be one of ${CREATOR_SORTS.map((s) => `\`${s}\``).join(', ')} (default \`featured\`)` })
    .default('featured')
    .describe('`featured`: featured first, then views, then name; `views`: most viewed first; `newest`: newest profile first; `name`: by display name.'),
});
export type CreatorsQueryInput = z.output<typeof CreatorsQuerySchema>;

export type ParsedQuery<T> = { ok: true; value: T } | { ok: false; param: string; message: string };

/**
 * Reads a query through its schema: each parameter given at most once (`?limit=5&limit=6` is
 * ambiguous), unknown ones ignored, and the first problem reported with its parameter's name.
 */
export function parseQuery<S extends z.ZodObject>(schema: S, params: URLSearchParams): ParsedQuery<z.output<S>> {
  const input: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const all = params.getAll(key);
    if (all.length > 1) return { ok: false, param: key, message: `\`${key}\` is given ${all.length} times: give it once` };
    if (all.length === 1) input[key] = all[0]!;
  }
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  return { ok: false, param: String(issue.path[0]), message: issue.message };
}
