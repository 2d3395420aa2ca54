// A fast reader for the plain shape almost every content file has: `key: value` lines, one level of
// nested mapping, a list of small mappings (`socials:`), `[a, b]` lists, and single-line quoted or
// plain values. The `yaml` library spends ~0.4 ms on a profile file; this reads one in a few µs,
// which is most of a cold build's validation at 100,000 profiles. It answers only when it is sure
// the library would read the same values: anything else (comments after values, block scalars,
// anchors, tags, multi-line values, odd numbers or keywords, duplicate keys, tabs, CR, BOM...) is
// `undefined`, and the caller parses the file with the library as before
// (test/content/simple-yaml.test.ts compares the two on generated, random and hostile files, near
// misses of real ones included). Content comes from strangers' pull requests: every pattern here
// must run in linear time on any line (the test feeds each one lines built to backtrack).

/** The values of a file, and where each scalar value starts (offsets, by key path joined with NUL). */
export interface SimpleYaml {
  value: Record<string, unknown>;
  starts: Map<string, number>;
  /** Line and column (both from 1) of an offset, as the library's LineCounter gives them. */
  linePos: (offset: number) => { line: number; col: number };
}

// Characters YAML forbids or treats as line breaks or whitespace in ways a line reader would not:
// C0/C1 controls (tab and CR included), NEL, the Unicode line separators, BOM and non-characters;
// and the spaces JavaScript's \s knows but YAML does not (no-break, ideographic...), which YAML
// reads as text: a line of them is no blank line (the library reports it, MISSING_CHAR).
// eslint-disable-next-line no-control-regex
const AVOID = /[\x00-\x09\x0b-\x1f\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** A blank line, or nothing after `key:`: spaces only, never `trim()`, whose whitespace is not YAML's. */
const BLANK = /^ *$/;
const KEY_LINE = /^( *)([A-Za-z_][A-Za-z0-9_-]{0,99}):(?:( +)(.*))?$/;
const ITEM_LINE = /^( *)- +(.*)$/;
const ITEM_KEY = /^([A-Za-z_][A-Za-z0-9_-]{0,99}):(?:( +)(.*))?$/;
/** Plain words the core schema reads as null or booleans, in spellings this reader leaves to the library. */
const KEYWORDS = new Set(['null', 'Null', 'NULL', '~', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE', '__proto__']);
const INT = /^(?:0|[1-9][0-9]{0,14})$/;
/** Digits then a letter that starts no number form (`1e3`, `0x1F`, `0o7`): a word like `3d`. */
const DIGIT_WORD = /^[0-9]+(?![eExXoO])[A-Za-z][A-Za-z0-9_-]*$/;
const DATE_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:[0-9]{2})$/;
const DOUBLE_QUOTED = /^"(?:[^"\\]|\\.)*"$/;
const SINGLE_QUOTED = /^'(?:[^']|'')*'$/;
const FLOW_LIST = /^\[ *(?:[A-Za-z][A-Za-z0-9_-]*(?: *, *[A-Za-z][A-Za-z0-9_-]*)*)? *\]$/;

const FAIL = Symbol('not simple');

/** A single-line value as the core schema reads it, or FAIL. */
function scalar(text: string): unknown {
  const c = text.charCodeAt(0);
  if (c === 0x22) { // "
    if (!DOUBLE_QUOTED.test(text)) return FAIL;
    // JSON's escapes are a subset of YAML's, with the same meanings; anything else is left to the library.
    try { return JSON.parse(text) as string; } catch { return FAIL; }
  }
  if (c === 0x27) return SINGLE_QUOTED.test(text) ? text.slice(1, -1).replaceAll("''", "'") : FAIL; // '
  if (c === 0x5b) { // [
    if (!FLOW_LIST.test(text)) return FAIL;
    const items = text.slice(1, -1).split(',').map((s) => s.trim()).filter((s) => s !== '');
    return items.some((s) => KEYWORDS.has(s)) ? FAIL : items;
  }
  if (INT.test(text)) return Number(text);
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (KEYWORDS.has(text)) return FAIL;
  if (DATE_TIME.test(text) || DIGIT_WORD.test(text)) return text;
  // A plain word or sentence: it starts with a letter (no indicator) and holds no `: ` or ` #`.
  const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c >= 0x80;
  if (!letter || text.includes(': ') || text.includes(' #') || text.endsWith(':')) return FAIL;
  return text;
}

/** `text` without its trailing spaces: a loop, since `/ +$/` retries from every space of a run (quadratic; 33 s for one 128 KiB line). */
function trimEndSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end--;
  return text.slice(0, end);
}

/** The file's values when it has the plain shape, else undefined (then only the library can say). */
export function parseSimpleYaml(source: string): SimpleYaml | undefined {
  if (AVOID.test(source)) return undefined;
  const lines = source.split('\n');
  const lineStarts: number[] = [];
  // Content lines only: blank lines and whole-line comments at the margin carry nothing.
  const content: number[] = [];
  for (let i = 0, offset = 0; i < lines.length; i++) {
    lineStarts.push(offset);
    const line = lines[i]!;
    offset += line.length + 1;
    if (BLANK.test(line) || line.startsWith('#')) continue;
    if (/^ +#/.test(line)) return undefined; // an indented comment: inside a value, perhaps
    content.push(i);
  }
  if (!content.length) return undefined;
  const value: Record<string, unknown> = {};
  const starts = new Map<string, number>();
  const indentOf = (k: number) => (k < content.length ? lines[content[k]!]!.search(/[^ ]/) : 0);

  /** Sets `key` of `into` to the text value starting at column `col` of line `i`; false when not simple. */
  const set = (into: Record<string, unknown>, key: string, text: string, i: number, col: number, path: string) => {
    if (Object.hasOwn(into, key) || KEYWORDS.has(key)) return false;
    const v = scalar(trimEndSpaces(text));
    if (v === FAIL) return false;
    into[key] = v;
    starts.set(path, lineStarts[i]! + col);
    return true;
  };

  let k = 0;
  while (k < content.length) {
    const i = content[k]!;
    const m = KEY_LINE.exec(lines[i]!);
    if (!m || m[1] !== '') return undefined;
    const key = m[2]!;
    if (m[4] !== undefined && !BLANK.test(m[4])) {
      // `key: value`: the next line must not be indented, or the value would go on there.
      if (!set(value, key, m[4], i, key.length + 1 + m[3]!.length, key)) return undefined;
      k++;
      if (indentOf(k) !== 0) return undefined;
      continue;
    }
    // `key:` and an indented block below: a mapping or a list.
    if (Object.hasOwn(value, key) || KEYWORDS.has(key)) return undefined;
    k++;
    const indent = indentOf(k);
    if (k >= content.length || indent === 0) return undefined; // an empty value: null, left to the library
    const first = lines[content[k]!]!;
    if (first.startsWith('- ', indent)) {
      const list: unknown[] = [];
      while (k < content.length && indentOf(k) === indent) {
        const item = ITEM_LINE.exec(lines[content[k]!]!);
        if (!item) return undefined;
        const at = lines[content[k]!]!.length - item[2]!.length; // the item's column
        const path = `${key}\0${list.length}`;
        const im = ITEM_KEY.exec(item[2]!);
        if (!im) {
          // `- value`
          const holder: Record<string, unknown> = {};
          if (!set(holder, 'v', item[2]!, content[k]!, at, path)) return undefined;
          list.push(holder.v);
          k++;
          if (indentOf(k) > indent) return undefined;
          continue;
        }
        // `- key: value` and more `key: value` lines at the first key's column: a small mapping.
        const map: Record<string, unknown> = {};
        if (im[3] === undefined || BLANK.test(im[3])) return undefined;
        if (!set(map, im[1]!, im[3], content[k]!, at + im[1]!.length + 1 + im[2]!.length, `${path}\0${im[1]}`)) return undefined;
        k++;
        while (k < content.length && indentOf(k) > indent) {
          if (indentOf(k) !== at) return undefined;
          const line = lines[content[k]!]!;
          const km = KEY_LINE.exec(line);
          if (!km || km[4] === undefined || BLANK.test(km[4])) return undefined;
          if (!set(map, km[2]!, km[4], content[k]!, at + km[2]!.length + 1 + km[3]!.length, `${path}\0${km[2]}`)) return undefined;
          k++;
        }
        list.push(map);
      }
      if (indentOf(k) !== 0) return undefined;
      value[key] = list;
      continue;
    }
    const map: Record<string, unknown> = {};
    while (k < content.length && indentOf(k) === indent) {
      const line = lines[content[k]!]!;
      const km = KEY_LINE.exec(line);
      if (!km || km[4] === undefined || BLANK.test(km[4])) return undefined;
      if (!set(map, km[2]!, km[4], content[k]!, indent + km[2]!.length + 1 + km[3]!.length, `${key}\0${km[2]}`)) return undefined;
      k++;
    }
    if (indentOf(k) !== 0) return undefined;
    value[key] = map;
  }

  const linePos = (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - lineStarts[lo]! + 1 };
  };
  return { value, starts, linePos };
}
