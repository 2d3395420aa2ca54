// Parses one content YAML file strictly and validates it with a schema, turning every YAML and
// schema problem into a ContentProblem with line, column and a hint.
import { LineCounter, Parser, isAlias, isCollection, isMap, isNode, isScalar, isSeq, parseDocument, visit, type Alias, type Document, type Node, type Scalar, type YAMLMap, type CST } from 'yaml';
import type { z } from 'astro/zod';
import { closest, formatKeyPath, type ContentProblem } from './problems.ts';
import { parseSimpleYaml } from './simple-yaml.ts';

/**
 * YAML problems listed per file: past the first few, the library's errors mostly follow from them
 * (one stray bracket, or a line of 60,000 commas giving 60,000 errors), so the rest are counted.
 */
export const MAX_YAML_PROBLEMS = 10;

/** Levels of mappings and lists in one file: a profile uses three (socials, each link, its keys); private notes a few more. */
export const MAX_NESTING = 64;

/**
 * Where the first mapping or list past MAX_NESTING levels starts in `source` (an offset), or undefined:
 * from the library's concrete syntax tree, which it parses with a stack of its own, not recursion.
 */
export function tooDeep(source: string): number | undefined {
  type Items = { key?: CST.Token | null; value?: CST.Token | null }[];
  let first: number | undefined;
  for (const token of new Parser().parse(source)) {
    if (token.type !== 'document' || !token.value) continue;
    const stack: [CST.Token, number][] = [[token.value, 1]];
    while (stack.length) {
      const [node, depth] = stack.pop()!;
      if (node.type !== 'block-map' && node.type !== 'block-seq' && node.type !== 'flow-collection') continue;
      if (depth > MAX_NESTING) {
        first = Math.min(first ?? node.offset, node.offset);
        continue;
      }
      for (const item of node.items as Items) {
        if (item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
  return first;
}

/** Aliases (`*name`) per file. Real profiles need none; the limit stops "billion laughs" alias bombs in milliseconds. */
export const MAX_ALIASES = 50;

export type ParseResult<T> =
  | { ok: true; value: T; problems: []; locate: (keys: PropertyKey[]) => { line?: number; column?: number } }
  | { ok: false; problems: ContentProblem[] };

export function parseYamlFile<S extends z.ZodType>(file: string, source: string, schema: S): ParseResult<z.output<S>> {
  // Most files have the plain shape the fast reader knows; a file with problems is read again by the
  // library, whose documents say where each problem is.
  const simple = parseSimpleYaml(source);
  if (simple) {
    const result = schema.safeParse(simple.value);
    if (result.success) {
      let full: ParseResult<z.output<S>> | undefined;
      const locate = (keys: PropertyKey[]) => {
        const offset = simple.starts.get(keys.join('\0'));
        if (offset === undefined) {
          full ??= parseYamlDocument(file, source, schema);
          return full.ok ? full.locate(keys) : {};
        }
        const { line, col } = simple.linePos(offset);
        return { line, column: col };
      };
      return { ok: true, value: result.data, problems: [], locate };
    }
  }
  return parseYamlDocument(file, source, schema);
}

/** The library alone: what parseYamlFile answers for every file the fast reader declines or the schema rejects. */
export function parseYamlDocument<S extends z.ZodType>(file: string, source: string, schema: S): ParseResult<z.output<S>> {
  const lineCounter = new LineCounter();
  const problems: ContentProblem[] = [];
  const at = (offset: number | undefined) => {
    if (offset === undefined) return {};
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  // Measured before the library builds the document, which recurses per level and runs out of
  // stack somewhere past a thousand, at a depth that depends on the thread: the same file passed one
  // run and failed the next. Past MAX_NESTING it fails every time, at the same place.
  const deep = tooDeep(source);
  if (deep !== undefined) {
    const counter = new LineCounter();
    for (const _ of new Parser(counter.addNewLine).parse(source.slice(0, deep)));
    const { line, col } = counter.linePos(deep);
    return { ok: false, problems: [{ file, line, column: col, message: `is nested more than ${MAX_NESTING} levels deep here`, hint: 'a content file holds keys, text and short lists: remove the nested brackets or indented levels' }] };
  }
  let doc: Document.Parsed;
  try {
    // uniqueKeys: false, and `duplicateKeys` below instead: the library compares each key with every
    // key before it in its mapping, so a file with 80,000 keys took a minute.
    doc = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: false, strict: true, version: '1.2' });
  } catch (e) {
    return { ok: false, problems: [{ file, message: `cannot be read as YAML: ${(e as Error).message}` }] };
  }
  const found = [
    ...[...doc.errors, ...doc.warnings].map((err) => ({ offset: err.pos[0], code: err.code, message: err.message })),
    ...duplicateKeys(doc).map(({ offset, key }) => ({ offset, code: 'DUPLICATE_KEY', message: key })),
  ].sort((a, b) => a.offset - b.offset);
  for (const { offset, code, message } of found.slice(0, MAX_YAML_PROBLEMS)) problems.push({ file, ...at(offset), ...yamlMessage(code, message) });
  if (found.length > MAX_YAML_PROBLEMS) {
    problems.push({
      file, ...at(found[MAX_YAML_PROBLEMS]!.offset),
      ...unlistedProblems(found.length - MAX_YAML_PROBLEMS, 'YAML problems', 'the others often follow from them'),
    });
  }
  if (doc.directives?.yaml.explicit && doc.directives.yaml.version !== '1.2') {
    problems.push({
      file, line: 1, column: 1,
      message: `the \`%YAML ${doc.directives.yaml.version}\` directive is not supported: in YAML 1.1 words like \`no\` and \`on\` turn into booleans`,
      hint: 'remove the directive; content files are YAML 1.2',
    });
  }
  // Keys and aliases the content never needs, found on the document; listed up to the same cap as
  // the problems above (20,000 lines of `*a : 1` gave 20,000 problems).
  const keyProblems: { offset: number | undefined; problem: ContentProblem }[] = [];
  // A mapping or list as a key has no JSON form: `toJS` would turn it into text, with a warning on the console.
  for (const { node, kind } of collectionKeys(doc)) {
    keyProblems.push({ offset: node.range?.[0], problem: { file, ...at(node.range?.[0]), message: `a ${kind} is used as a key`, hint: 'a key is text: write `key: value`, with no `{`, `[` or `?` before the key' } });
  }
  for (const alias of aliasKeys(doc)) {
    keyProblems.push({ offset: alias.range?.[0], problem: { file, ...at(alias.range?.[0]), message: `\`*${alias.source}\` is used as a key`, hint: 'write the key itself, `key: value`: an alias (`*name`) may stand for a value, never for a key' } });
  }
  for (const { alias, anchor } of privateAliases(doc)) {
    keyProblems.push({
      offset: alias.range?.[0],
      problem: {
        file, ...at(alias.range?.[0]),
        message: `\`*${alias.source}\` copies a value from under \`${PRIVATE_KEY}:\` (\`&${alias.source}\`, line ${at(anchor.range?.[0]).line}) out of it, where it would be published`,
        hint: 'write the public value out in full: nothing under `private:` is ever published, and no alias may carry it out',
      },
    });
  }
  keyProblems.sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
  const room = Math.max(0, MAX_YAML_PROBLEMS - problems.length);
  for (const { problem } of keyProblems.slice(0, room)) problems.push(problem);
  if (keyProblems.length > room) {
    problems.push({ file, ...at(keyProblems[room]!.offset), ...unlistedProblems(keyProblems.length - room) });
  }
  if (problems.length) return { ok: false, problems };

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (e) {
    // The library counts the aliases it expands (an alias of a list of aliases counts them all again), not those written.
    const message = (e as Error).message;
    const aliased = message.startsWith('Excessive alias count');
    // `*nope` with no `&nope` before it: the library names the alias, not its place.
    const unresolved = /^Unresolved alias .*: (.*)$/.exec(message)?.[1];
    let first: Alias | undefined;
    if (aliased || unresolved !== undefined) visit(doc, { Alias(_, alias) { if (aliased || alias.source === unresolved) { first = alias; return visit.BREAK; } return undefined; } });
    return {
      ok: false,
      problems: [aliased
        ? { file, ...at(first?.range?.[0]), message: `its aliases (\`*name\`) make more than ${MAX_ALIASES} copies in all (an alias of a value holding aliases copies those again)`, hint: 'write the values out: profiles need no aliases' }
        : unresolved !== undefined
          ? { file, ...at(first?.range?.[0]), message: `the alias \`*${unresolved}\` names no anchor (\`&${unresolved}\`) set before it`, hint: 'write the value out: profiles need no aliases' }
          : { file, message: `cannot be read as YAML: ${message}` }],
    };
  }
  if (data === null || data === undefined) {
    return { ok: false, problems: [{ file, line: 1, column: 1, message: 'the file is empty', hint: 'write the keys as `key: value` lines' }] };
  }
  const result = schema.safeParse(data);
  // A key the schema takes as text (a username in stats/views.yaml) must be text in YAML: `012` is the
  // number 12, which `toJS` turns into the key `12`. The editor schema says the same (`propertyNames`).
  for (const { node, read } of nonTextKeys(doc, schema)) {
    problems.push({
      file, ...at(node.range?.[0]),
      message: `the key \`${node.source}\` is read as ${read}, not as text`,
      hint: `put it in quotes, \`"${node.source}":\`, to keep it as written`,
    });
  }
  if (result.success && !problems.length) {
    // Checks across files (a missing avatar, say) point at the value's line too.
    const locate = (keys: PropertyKey[]) => at((doc.getIn(keys, true) as Node | undefined)?.range?.[0]);
    return { ok: true, value: result.data, problems: [], locate };
  }
  if (result.success) return { ok: false, problems };

  const keyNode = keyNodeFinder(doc);
  // As many as the YAML problems listed, then a count: 13,000 unknown keys in each of 300 files
  // printed a gigabyte of problems and took five minutes.
  let unlisted = 0;
  let firstUnlisted: Pick<ContentProblem, 'file' | 'line' | 'column'> | undefined;
  const listed = () => problems.length >= MAX_YAML_PROBLEMS;
  for (const issue of result.error.issues) {
    const keys = issue.path as PropertyKey[];
    if (listed()) {
      const more = issue.code === 'unrecognized_keys' ? issue.keys.length : 1;
      firstUnlisted ??= { file, ...at((issue.code === 'unrecognized_keys' ? keyNode(keys, issue.keys[0]!) : doc.getIn(keys, true) as Node | undefined)?.range?.[0]) };
      unlisted += more;
      continue;
    }
    if (issue.code === 'unrecognized_keys') {
      const allowed = keysAt(schema, keys);
      for (const [i, key] of issue.keys.entries()) {
        if (listed()) {
          firstUnlisted ??= { file, ...at(keyNode(keys, key)?.range?.[0]) };
          unlisted += issue.keys.length - i;
          break;
        }
        const suggestion = closest(key, allowed);
        problems.push({
          file, ...at(keyNode(keys, key)?.range?.[0]), keyPath: formatKeyPath([...keys, key]),
          message: `unknown key \`${key}\``,
          hint: suggestion ? `did you mean \`${suggestion}\`?` : `the keys allowed here are ${allowed.map((k) => `\`${k}\``).join(', ')}`,
        });
      }
      continue;
    }
    if (issue.code === 'invalid_key') {
      const key = String(keys.at(-1));
      problems.push({ file, ...at(keyNode(keys.slice(0, -1), key)?.range?.[0]), message: `\`${key}\` ${issue.issues[0]?.message ?? 'is not allowed as a key here'}` });
      continue;
    }
    const node = doc.getIn(keys, true) as Node | undefined;
    if (issue.code === 'invalid_type' && valueAt(data, keys) === undefined) {
      const parentKeys = keys.slice(0, -1);
      const parent = (parentKeys.length ? doc.getIn(parentKeys, true) : doc.contents) as Node | undefined;
      problems.push({
        file, ...at(parent?.range?.[0]), keyPath: formatKeyPath(keys),
        message: `missing required key \`${String(keys.at(-1))}\``,
        hint: `add ${/^[aeio]/i.test(String(keys.at(-1))) ? 'an' : 'a'} \`${String(keys.at(-1))}:\` line; its value ${issue.message}`,
      });
      continue;
    }
    if (keys.length === 0 && issue.code === 'invalid_type') {
      const kind = Array.isArray(data) ? 'a list' : typeof data === 'string' ? 'a line of text' : typeof data === 'number' ? 'a number' : 'a single value';
      problems.push({ file, line: 1, column: 1, message: `holds ${kind}, not keys and values`, hint: 'write one `key: value` per line, with no `-` before the keys' });
      continue;
    }
    problems.push({ file, ...at(node?.range?.[0]), keyPath: formatKeyPath(keys) || undefined, message: issue.message });
  }
  if (unlisted) {
    problems.push({ ...firstUnlisted!, ...unlistedProblems(unlisted) });
  }
  return { ok: false, problems };
}

/** The line standing for the problems of a file past MAX_YAML_PROBLEMS, placed at the first of them. */
function unlistedProblems(count: number, what = count === 1 ? 'problem' : 'problems', why = 'the others are often the same'): { message: string; hint: string } {
  return { message: `and ${count.toLocaleString('en')} more ${what} from here on, not listed`, hint: `fix the ones above first: ${why}` };
}

function yamlMessage(code: string, message: string): { message: string; hint?: string } {
  const first = message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  // The library's recursion ran out of stack, whatever step it was in (a tag's, say).
  if (message.includes('Maximum call stack size exceeded')) code = 'RESOURCE_EXHAUSTION';
  switch (code) {
    case 'DUPLICATE_KEY':
      return { message: `the key \`${message}\` appears twice in the same mapping`, hint: 'keep one of them: YAML would silently use only one' };
    case 'MULTIPLE_DOCS':
      return { message: 'a second YAML document starts here (a `---` line): a content file is one document', hint: 'remove the `---` line, and merge what follows it into the keys above' };
    case 'RESOURCE_EXHAUSTION':
      return { message: 'is nested too deeply to be read', hint: 'a content file holds keys, text and short lists: remove the nested brackets' };
    case 'TAG_RESOLVE_FAILED':
    case 'BAD_TAG':
      return { message: `custom YAML tags are not allowed (${first})`, hint: 'remove the `!tag` and write a plain value' };
    default:
      return { message: `YAML syntax: ${first}`, hint: 'check the indentation and quoting on this line' };
  }
}

/**
 * Where each key that repeats a key before it in the same mapping starts: what the library's
 * `uniqueKeys` reports (scalar keys with the same value; an empty key twice), found with one set per
 * mapping, so the time is linear in the number of keys.
 */
export function duplicateKeys(doc: Document.Parsed): { offset: number; key: string }[] {
  const found: { offset: number; key: string }[] = [];
  const EMPTY = Symbol('empty key');
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = pair.key;
        if (key !== null && !isScalar(key)) continue; // the library compares other keys by identity: never equal
        const value = key === null ? EMPTY : key.value;
        if (!seen.has(value)) { seen.add(value); continue; }
        const start = (key as Node | null)?.range?.[0] ?? (pair.value as Node | null)?.range?.[0];
        if (start !== undefined) found.push({ offset: start, key: key === null ? '' : String(key.source ?? key.value) });
      }
    },
  });
  return found;
}

/** The top-level key whose value is never published (src/schemas/profile.ts). */
const PRIVATE_KEY = 'private';

/**
 * Aliases outside the top-level `private:` value whose anchor is inside it: `displayName: *n` with
 * `&n` under `private:` would publish what the file keeps private (merge keys `<<: *n` included).
 */
function privateAliases(doc: Document.Parsed): { alias: Alias; anchor: Node }[] {
  const root = doc.contents;
  const pair = isMap(root) ? root.items.find((p) => isScalar(p.key) && p.key.value === PRIVATE_KEY) : undefined;
  if (!pair || !isNode(pair.value)) return [];
  const inside = new Set<unknown>();
  visit(pair.value, { Node(_, node) { inside.add(node); } });
  inside.add(pair.value);
  const found: { alias: Alias; anchor: Node }[] = [];
  visit(doc, {
    Alias(_, alias) {
      if (inside.has(alias)) return;
      const anchor = alias.resolve(doc);
      if (anchor && inside.has(anchor)) found.push({ alias, anchor });
    },
  });
  return found;
}

/** The keys that are mappings or lists (`{ a: 1 }: x`, `? [a]`). */
function collectionKeys(doc: Document.Parsed): { node: Node; kind: 'mapping' | 'list' }[] {
  const found: { node: Node; kind: 'mapping' | 'list' }[] = [];
  visit(doc, {
    Pair(_, pair) {
      if (isCollection(pair.key)) found.push({ node: pair.key, kind: isMap(pair.key) ? 'mapping' : 'list' });
    },
  });
  return found;
}

/**
 * The keys that are aliases (`*k :`): such a key is named by another node's value, so `private`
 * named that way hides from every rule that finds the private part by its key (privateAliases), and
 * a copied key from the duplicate check. No file of the content needs one.
 */
function aliasKeys(doc: Document.Parsed): Alias[] {
  const found: Alias[] = [];
  visit(doc, { Pair(_, pair) { if (isAlias(pair.key)) found.push(pair.key); } });
  return found;
}

/**
 * The node of `key` in the mapping at `keys`, to point at a misspelt key itself. Each mapping's keys
 * are indexed on first use: a file with thousands of unknown keys costs one pass, not one per key.
 */
function keyNodeFinder(doc: Document.Parsed): (keys: PropertyKey[], key: string) => Node | undefined {
  const indexes = new Map<YAMLMap, Map<string, Node>>();
  return (keys, key) => {
    const map = keys.length ? doc.getIn(keys, true) : doc.contents;
    if (!isMap(map)) return undefined;
    let index = indexes.get(map);
    if (!index) {
      index = new Map();
      for (const p of map.items) if (isScalar(p.key) && !index.has(String(p.key.value))) index.set(String(p.key.value), p.key);
      indexes.set(map, index);
    }
    return index.get(key);
  };
}

function valueAt(data: unknown, keys: PropertyKey[]): unknown {
  let v: unknown = data;
  for (const k of keys) {
    if (v === null || typeof v !== 'object') return undefined;
    v = Object.hasOwn(v, k) ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  }
  return v;
}

/**
 * Scalar keys that YAML reads as a number, boolean or null in a mapping the schema reads as a record
 * of text keys (`z.record(z.string(), ...)`), with what they are read as.
 */
function nonTextKeys(doc: Document.Parsed, schema: z.ZodType): { node: Scalar; read: string }[] {
  const found: { node: Scalar; read: string }[] = [];
  const walk = (node: unknown, keys: PropertyKey[]) => {
    if (isSeq(node)) node.items.forEach((item, i) => walk(item, [...keys, i]));
    if (!isMap(node)) return;
    const record = schemaAt(schema, keys)?._zod?.def?.type === 'record';
    for (const pair of node.items) {
      const key = pair.key;
      if (!isScalar(key)) continue;
      if (record && typeof key.value !== 'string') {
        found.push({ node: key, read: key.value === null ? 'null (the empty key)' : `the ${typeof key.value} \`${String(key.value)}\`` });
      }
      walk(pair.value, [...keys, String(key.value)]);
    }
  };
  walk(doc.contents, []);
  return found;
}

/** The schema at `keys`, walking through objects, records, arrays, optionals, defaults and pipes. */
function schemaAt(schema: z.ZodType, keys: PropertyKey[]): any {
  let s: any = schema;
  const unwrap = () => {
    for (;;) {
      const def = s?._zod?.def;
      if (def?.type === 'optional' || def?.type === 'default' || def?.type === 'nullable' || def?.type === 'prefault') s = def.innerType;
      else if (def?.type === 'pipe') s = def.in;
      else return;
    }
  };
  unwrap();
  for (const k of keys) {
    const def = s?._zod?.def;
    if (def?.type === 'object') s = def.shape[k as string];
    else if (def?.type === 'record') s = def.valueType;
    else if (def?.type === 'array') s = def.element;
    else return undefined;
    unwrap();
  }
  return s;
}

/** The keys an object schema allows at `keys`. */
function keysAt(schema: z.ZodType, keys: PropertyKey[]): string[] {
  const def = schemaAt(schema, keys)?._zod?.def;
  return def?.type === 'object' ? Object.keys(def.shape) : [];
}
