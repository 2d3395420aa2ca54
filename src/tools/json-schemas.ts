// JSON Schema files for editors, generated from the content schemas in src/schemas (never written
// by hand). With `# yaml-language-server: $schema=...` as a file's first line, VS Code's YAML
// extension completes keys, shows each key's description on hover and marks mistakes as you type,
// with the messages `npm run check` prints where yaml-language-server shows a schema's own message
// (`errorMessage`, `patternErrorMessage`). `npm run check` stays the authority: files that must
// exist, checks across files, file names and YAML hazards are beyond JSON Schema (see
// docs/operators.md and test/tools/editor-diagnostics.test.ts for the exact list).
import { z } from 'astro/zod';
import { CreatorSchema, DecorationSchema, ProfileSchema, ViewsStatsSchema, type EditorPattern } from '../schemas/index.ts';

/** Where the files live, relative to the project: under public/, so the site serves them too. */
export const JSON_SCHEMA_DIR = 'public/schemas';

interface Target {
  file: string;
  schema: z.ZodType;
  title: string;
  description: string;
}

const TARGETS: readonly Target[] = [
  { file: 'profile.schema.json', schema: ProfileSchema, title: 'Profile', description: 'content/profiles/<username>.yaml: one profile. The file name is the username.' },
  { file: 'creator.schema.json', schema: CreatorSchema, title: 'Creator', description: 'content/creators/<username>.yaml: marks the profile of the same name as a creator.' },
  { file: 'decoration.schema.json', schema: DecorationSchema, title: 'Decoration', description: 'content/decorations/<id>.yaml: an avatar frame; its image file sits beside it.' },
  { file: 'views.schema.json', schema: ViewsStatsSchema, title: 'View counts', description: 'content/stats/views.yaml: `username: count` lines, written by `npm run views:import`. A count replaces the profile\'s own `views`.' },
];

export interface JsonSchemaFile {
  /** File name inside JSON_SCHEMA_DIR. */
  file: string;
  /** The file's exact text, as written to disk. */
  text: string;
}

/** Every schema file, in memory: the script writes these and the test compares them with the files on disk. */
export function contentJsonSchemas(): JsonSchemaFile[] {
  return TARGETS.map(({ file, schema, title, description }) => {
    // `io: 'input'` describes what an operator writes: defaults are optional, and customDomain's
    // lowercasing transform is allowed (the output side of a transform has no JSON Schema).
    const { $schema, ...body } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12', override: editorHints });
    const doc = { $schema, title, description, $comment: 'Generated from src/schemas by `npm run schemas`; do not edit.', ...body };
    return { file, text: `${JSON.stringify(doc, null, 2)}\n` };
  });
}

type OverrideContext = { zodSchema: unknown; jsonSchema: Record<string, unknown> };

function editorHints(ctx: OverrideContext) {
  patternsAsWritten(ctx);
  typeMessage(ctx);
  refinementPatterns(ctx);
  unknownKeyHints(ctx);
}

/**
 * A Zod type's own message (`z.string({ error })`) becomes `errorMessage`, which yaml-language-server
 * shows for a wrong type or a value outside an enum (and for a pattern without `patternErrorMessage`).
 * Objects get none: there it would also replace "Missing property".
 */
function typeMessage({ zodSchema, jsonSchema }: OverrideContext) {
  if (jsonSchema.type === 'object' && jsonSchema.properties) return;
  const message = messageOf((zodSchema as { _zod?: { def?: ZodDefLike } })._zod?.def?.error);
  if (message && (jsonSchema.type || jsonSchema.enum)) jsonSchema.errorMessage = message;
}

/** `editorPatterns` and `editorNotEmpty` metadata (src/schemas/common.ts) become patterns under `allOf`, each with its message. */
function refinementPatterns({ jsonSchema }: OverrideContext) {
  const patterns = [...((jsonSchema.editorPatterns as EditorPattern[] | undefined) ?? [])];
  if (jsonSchema.editorNotEmpty) patterns.push(jsonSchema.editorNotEmpty as EditorPattern);
  delete jsonSchema.editorPatterns;
  delete jsonSchema.editorNotEmpty;
  if (!patterns.length) return;
  jsonSchema.allOf = patterns.map((p) => ({
    pattern: p.caseInsensitive ? caseInsensitiveSource(p.pattern) : p.pattern,
    patternErrorMessage: p.message,
  }));
}

/**
 * A strict object's `additionalProperties: false` becomes `propertyNames`, so an unknown key can
 * carry the hint `npm run check` gives: "did you mean `displayName`?" for a key one edit away from
 * an allowed one (a letter missing, extra or wrong, two swapped, any case), else the allowed keys.
 * yaml-language-server shows `errorMessage` on the key itself and offers the `enum` as a quick fix.
 * `npm run check` also suggests keys two edits away; a pattern for that would be kilobytes per key.
 */
function unknownKeyHints({ jsonSchema }: OverrideContext) {
  const properties = jsonSchema.properties as Record<string, unknown> | undefined;
  if (jsonSchema.additionalProperties !== false || !properties) return;
  const keys = Object.keys(properties);
  const list = keys.map((k) => `\`${k}\``).join(', ');
  let chain: Record<string, unknown> = { enum: keys, errorMessage: `unknown key: the keys allowed here are ${list}` };
  for (const key of [...keys].reverse()) {
    chain = { if: { pattern: oneEditAway(key) }, then: { enum: [key], errorMessage: `unknown key: did you mean \`${key}\`?` }, else: chain };
  }
  delete jsonSchema.additionalProperties;
  // `doNotSuggest`: without `additionalProperties: false`, completion would offer a free-form "property" key.
  jsonSchema.propertyNames = { type: 'string', doNotSuggest: true, if: { enum: keys }, else: chain };
}

/** A pattern for the words at most one edit from `word` in any case: one letter deleted, replaced or added, or two neighbours swapped. */
export function oneEditAway(word: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(word)) throw new Error(`cannot spell out near misses of \`${word}\``);
  const alternatives: string[] = [];
  for (let i = 0; i < word.length; i++) {
    // `.?x?` in place of the letter x: x deleted, replaced, kept, or a letter added before it.
    alternatives.push(`${word.slice(0, i)}.?${word[i]}?${word.slice(i + 1)}`);
    if (i + 1 < word.length) alternatives.push(`${word.slice(0, i)}${word[i + 1]}${word[i]}${word.slice(i + 2)}`);
  }
  alternatives.push(`${word}.`);
  return caseInsensitiveSource(`^(?:${alternatives.join('|')})$`);
}

/**
 * JSON Schema patterns carry no flags, so a case-insensitive Zod regex (`alice.PNG` is a valid
 * avatar) is spelt out case by case; and the Zod message for a pattern becomes
 * `patternErrorMessage`, which VS Code shows instead of the raw regex.
 */
function patternsAsWritten({ zodSchema, jsonSchema }: OverrideContext) {
  if (typeof jsonSchema.pattern !== 'string') return;
  const def = (zodSchema as { _zod?: { def?: ZodDefLike } })._zod?.def;
  const check = def?.checks?.map((c) => c._zod.def).find((c) => c.pattern?.source === jsonSchema.pattern);
  if (check?.pattern?.flags.includes('i')) jsonSchema.pattern = caseInsensitiveSource(check.pattern.source);
  const message = messageOf(check?.error) ?? messageOf(def?.error);
  if (message) jsonSchema.patternErrorMessage = message;
}

interface ZodDefLike {
  checks?: { _zod: { def: { pattern?: RegExp; error?: unknown } } }[];
  error?: unknown;
}

// Zod keeps a `{ error: '...' }` message as a function of the issue; ours ignore the issue.
function messageOf(error: unknown): string | undefined {
  if (typeof error !== 'function') return undefined;
  try {
    const m = error(undefined);
    return typeof m === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The source of a regex that matches what `new RegExp(source, 'i')` matches, without the flag: each
 * ASCII letter outside a class becomes `[aA]`, and classes gain the other case. Constructs whose
 * letters are not literal characters (`\u`, `\p`, named groups...) are refused rather than guessed.
 */
export function caseInsensitiveSource(source: string): string {
  if (/\\[uxcpPk]|\(\?<[^=!]/.test(source)) throw new Error(`cannot spell out the case-insensitive pattern /${source}/i`);
  const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
  const isLetter = (c: string) => /^[A-Za-z]$/.test(c);
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      out += source.slice(i, i + 2);
      i++;
    } else if (c === '[') {
      const end = classEnd(source, i);
      out += caseInsensitiveClass(source.slice(i, end + 1), other, isLetter);
      i = end;
    } else {
      out += isLetter(c) ? `[${c}${other(c)}]` : c;
    }
  }
  return out;
}

function classEnd(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === ']' && i > start + 1) return i;
  }
  throw new Error(`unterminated class in /${source}/`);
}

/** `[a-z0-9_-]` → `[a-z0-9_\-A-Z]`: items are kept, the other case of each letter or letter range is added. */
function caseInsensitiveClass(cls: string, other: (c: string) => string, isLetter: (c: string) => boolean): string {
  const negated = cls[1] === '^';
  const body = cls.slice(negated ? 2 : 1, -1);
  const items: string[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') { items.push(body.slice(i, i + 2)); i++; continue; }
    if (body[i + 1] === '-' && i + 2 < body.length && body[i + 2] !== '\\') { items.push(body.slice(i, i + 3)); i += 2; continue; }
    items.push(body[i]!);
  }
  const added: string[] = [];
  for (const item of items) {
    let twin: string | undefined;
    if (item.length === 1 && isLetter(item)) twin = other(item);
    else if (item.length === 3 && isLetter(item[0]!) && isLetter(item[2]!)) {
      if ((item[0] === item[0]!.toLowerCase()) !== (item[2] === item[2]!.toLowerCase())) throw new Error(`cannot spell out the mixed-case range ${item}`);
      twin = `${other(item[0]!)}-${other(item[2]!)}`;
    }
    if (twin && !items.includes(twin) && !added.includes(twin)) added.push(twin);
  }
  if (!added.length) return cls;
  // A literal `-` is escaped, so nothing added after it can turn into a range.
  return `[${negated ? '^' : ''}${[...items, ...added].map((x) => (x === '-' ? '\\-' : x)).join('')}]`;
}
