// The fast reader of plain content files answers only what the `yaml` library would: the same values,
// the same place for each value, and nothing for a file the library reads otherwise or rejects.
// Content comes from strangers' pull requests, so it is also checked on hostile files: near misses
// of real files (fast-check), a list of YAML's traps, and lines built to make regular expressions
// backtrack. And validation as a whole answers the same with it as with the library alone.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { LineCounter, parseDocument, type Node } from 'yaml';
import { beforeAll, describe, expect, test } from 'vitest';
import { parseSimpleYaml } from '../../src/content/simple-yaml.ts';
import { duplicateKeys, parseYamlDocument, parseYamlFile } from '../../src/content/yaml-file.ts';
import { ProfileSchema } from '../../src/schemas/profile.ts';
import { MAX_YAML_FILE_BYTES } from '../../src/schemas/limits.ts';

/** What the library makes of `source` with the options content files are read with, or why not. */
function library(source: string) {
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, prettyErrors: false, uniqueKeys: false, strict: true, version: '1.2' });
  const clean = !doc.errors.length && !doc.warnings.length && !duplicateKeys(doc).length;
  return { doc, lineCounter, clean };
}

/** Fails when the fast reader answers differently from the library; true when it answered at all. */
function agrees(source: string): boolean {
  const fast = parseSimpleYaml(source);
  if (!fast) return false;
  const { doc, lineCounter, clean } = library(source);
  expect(clean, `the library finds problems in a file the fast reader took:\n${source}`).toBe(true);
  expect(fast.value, source).toStrictEqual(doc.toJS());
  for (const [keyPath, offset] of fast.starts) {
    const keys = keyPath.split('\0').map((k) => (/^[0-9]+$/.test(k) ? Number(k) : k));
    expect(offset, `${keyPath} in\n${source}`).toBe((doc.getIn(keys, true) as Node).range![0]);
    expect(fast.linePos(offset)).toStrictEqual(lineCounter.linePos(offset));
  }
  return true;
}

/** Every YAML file the benchmark generator writes for 300 profiles, and the fixtures': real shapes to start near misses from. */
const realFiles: { name: string; text: string }[] = [];
beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simple-yaml-'));
  try {
    execFileSync(process.execPath, ['scripts/bench/generate-profiles.ts', '300', dir]);
    for (const [root, tag] of [[dir, 'generated'], ['test/fixtures/content', 'fixture']] as const) {
      for (const sub of ['profiles', 'creators', 'decorations', 'stats']) {
        for (const f of fs.readdirSync(path.join(root, sub)).filter((f) => f.endsWith('.yaml'))) {
          realFiles.push({ name: `${tag} ${sub}/${f}`, text: fs.readFileSync(path.join(root, sub, f), 'utf8') });
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

describe('reading plain content files fast', () => {
  test('every file the benchmark generator writes is read fast, as the library reads it', () => {
    const generated = realFiles.filter((f) => f.name.startsWith('generated'));
    expect(generated.length).toBeGreaterThan(300);
    for (const { name, text } of generated) expect(agrees(text), name).toBe(true);
  });

  test('the fixtures are read as the library reads them', () => {
    for (const { text } of realFiles.filter((f) => f.name.startsWith('fixture'))) agrees(text);
  });

  test.each([
    ['a comment after a value', 'displayName: Ada # the name\n'],
    ['a value going on on the next line', 'displayName: Ada\n  Lovelace\n'],
    ['a block scalar', 'bio: |\n  Two\n  lines\n'],
    ['an anchor and an alias', 'displayName: &n Ada\nbio: *n\n'],
    ['a tag', 'displayName: !!str Ada\n'],
    ['a key twice', 'displayName: A\ndisplayName: B\n'],
    ['a key twice in a list item', 'socials:\n  - platform: a\n    platform: b\n'],
    ['null spelt out', 'bio: null\n'],
    ['a capitalised boolean', 'featured: True\n'],
    ['an empty value', 'bio:\nviews: 1\n'],
    ['a number with a leading zero', 'views: 0123\n'],
    ['a negative number', 'views: -5\n'],
    ['a float', 'views: 1.5\n'],
    ['an escape only YAML has', 'bio: "a\\x41"\n'],
    ['a tab', 'bio: a\tb\n'],
    ['a CRLF line end', 'bio: a\r\n'],
    ['a byte order mark', '\ufeffbio: a\n'],
    ['a document marker', '---\nbio: a\n'],
    ['a colon and space in a plain value', 'bio: a: b\n'],
    ['a value ending in a colon', 'bio: a:\n'],
    ['an indented comment', 'socials:\n  # none yet\n  - platform: a\n'],
    ['an item at its parent\'s indentation', 'socials:\n- platform: a\n'],
    ['a misaligned item key', 'socials:\n  - platform: a\n     url: b\n'],
    ['a flow list with a keyword', 'badges: [verified, null]\n'],
    ['a flow mapping', 'badges: {a: 1}\n'],
    ['__proto__', '__proto__: a\n'],
    ['a line separator', 'bio: a\u2028b\n'],
    ['nothing', '# only a comment\n'],
    // Hostile or odd files from strangers: each is read otherwise by the library, or rejected by it.
    ['a line of no-break spaces, which YAML reads as text', 'bio: a\n\u00a0\nviews: 1\n'],
    ['a line of ideographic spaces', 'socials:\n  - platform: a\n\u3000\n  - platform: b\n'],
    ['a no-break space after a key, then a block', 'private:\u00a0\n  email: a@b.example\n'],
    ['a no-break space in a value', 'bio: a\u00a0b\n'],
    ['a next line (NEL)', 'bio: a\u0085b\n'],
    ['a paragraph separator', 'bio: a\u2029b\n'],
    ['a lone CR', 'bio: a\rviews: 1\n'],
    ['a NUL', 'bio: a\u0000\n'],
    ['a DEL', 'bio: a\u007f\n'],
    ['a lone surrogate', 'bio: a\ud800\n'],
    ['a BOM inside', 'bio: a\nviews\ufeff: 1\n'],
    ['a tab for indentation', 'socials:\n\t- platform: a\n'],
    ['a merge key', 'base: &b\n  a: 1\nother:\n  <<: *b\n'],
    ['__proto__ in a nested mapping', 'private:\n  __proto__: x\n'],
    ['__proto__ in a list item', 'socials:\n  - __proto__: x\n'],
    ['__proto__ in a flow list', 'badges: [__proto__]\n'],
    ['a key in another case of null', 'NULL: a\n'],
    ['a key spelt as a boolean', 'True: a\n'],
    ['a quoted key', '"displayName": Ada\n'],
    ['a key starting with a digit', '0day: a\n'],
    ['a key of 101 characters', `${'k'.repeat(101)}: a\n`],
    ['an explicit key', '? displayName\n: Ada\n'],
    ['a binary tag', 'avatar: !!binary aGk=\n'],
    ['a local tag', 'avatar: !x a.png\n'],
    ['a YAML 1.1 directive', '%YAML 1.1\n---\nfeatured: yes\n'],
    ['a document end marker', 'bio: a\n...\n'],
    ['two documents', 'bio: a\n---\nbio: b\n'],
    ['infinity', 'views: .inf\n'],
    ['not a number', 'views: .nan\n'],
    ['an exponent', 'views: 1e3\n'],
    ['a hexadecimal number', 'views: 0x1F\n'],
    ['an octal number', 'views: 0o17\n'],
    ['a plus sign', 'views: +1\n'],
    ['digits with underscores', 'views: 1_000\n'],
    ['sixteen digits', 'views: 1234567890123456\n'],
    ['a 32-bit unicode escape', 'bio: "\\U0001F338"\n'],
    ['a YAML-only escape', 'bio: "\\N"\n'],
    ['an escaped space', 'bio: "a\\ b"\n'],
    ['a double-quoted value on two lines', 'bio: "a\n  b"\n'],
    ['a single-quoted value on two lines', "bio: 'a\n  b'\n"],
    ['a folded block', 'bio: >-\n  a\n  b\n'],
    ['a nested flow list', 'badges: [a, [b]]\n'],
    ['a flow list with a trailing comma', 'badges: [a,]\n'],
    ['a flow list with an empty entry', 'badges: [a, , b]\n'],
    ['a flow list over two lines', 'badges: [a,\n  b]\n'],
    ['a nested mapping two levels deep', 'private:\n  a:\n    b: c\n'],
    ['an anchor on a block', 'private: &p\n  a: b\n'],
    ['an alias as a value', 'bio: *p\n'],
    ['a list item of a list', 'socials:\n  - - a\n'],
    ['a dash alone', 'socials:\n  -\n'],
    ['a value starting with a reserved character', 'bio: @ada\n'],
    ['an empty list item value', 'socials:\n  - platform:\n'],
  ])('%s is left to the library', (_, source) => {
    expect(parseSimpleYaml(source)).toBeUndefined();
  });

  test.each([
    ['keys named after Object.prototype', 'constructor: a\ntoString: b\nhasOwnProperty: c\nvalueOf: d\n__defineGetter__: e\n'],
    ['the same in a nested mapping and a list item', 'private:\n  constructor: a\nsocials:\n  - toString: b\n    valueOf: c\n'],
    ['zero-width and combining characters', 'bio: \u200ba\u200d\u0301\nname: \u0301b\n'],
    ['unicode escapes, surrogate pairs and a lone one', 'bio: "\\u00e9 \\ud83c\\udf38 \\ud800 \\u0000 \\/"\n'],
    ['indicators inside plain values', 'bio: a [b] {c}, d & e * f ! g | h > i % j @ k ` l - m ? n x#y x:y\n'],
    ['words that YAML 1.1 read as booleans', 'a: yes\nb: No\nc: on\nd: OFF\ne: y\n'],
    ['number-like words', 'a: 3d\nb: 12ab\nc: 1d-5\nd: Infinity\ne: NaN\n'],
    ['comment lines at the margin anywhere', '# a\nprivate:\n# b\n  a: b\n# c\n  c: d\n#\nsocials:\n# d\n  - x\n'],
    ['trailing spaces everywhere', 'a: b   \nc:   \n  d: e  \nf:\n  -   g: h  \n      i: "j"  \n'],
  ])('%s: read fast, as the library reads them', (_, source) => {
    expect(agrees(source)).toBe(true);
  });

  test('lines built to make regular expressions backtrack are read in linear time', () => {
    // Each at the size limit of a content file; a pattern that backtracks (`/ +$/` did) takes
    // seconds to minutes here, past the test's time limit.
    const n = MAX_YAML_FILE_BYTES - 16;
    const lines = [
      `bio: a${' '.repeat(n)}x`,
      `bio: a${' '.repeat(n)}`,
      `bio: "${'\\a'.repeat(n / 2)}`,
      `bio: '${"''".repeat(n / 2)}`,
      `badges: [${'ab, '.repeat(n / 4)}`,
      `badges: [a${' ,'.repeat(n / 2)}]`,
      `badges: [${'a '.repeat(n / 2)}]`,
      `views: ${'1'.repeat(n)}!`,
      `views: 1${'a'.repeat(n)}!`,
      `${'k'.repeat(n)}: a`,
      `${' '.repeat(n)}#`,
      `socials:\n  -${' '.repeat(n)}platform: a`,
    ];
    for (const line of lines) {
      if (parseSimpleYaml(line) !== undefined) expect(agrees(line)).toBe(true);
    }
    const many = Array.from({ length: n / 8 }, (_, i) => `k${i}: v`).join('\n');
    expect(parseSimpleYaml(many)?.value).toStrictEqual(library(many).doc.toJS());
  });

  test('values, places and keywords the fast reader takes', () => {
    const source = [
      '# a profile',
      'displayName: "Ada \\"A\\" Lovelace \\u00e9 🌸"',
      "handle: 'it''s me'",
      'bio: Streams, art & code — since 2015; [sic] {x} http://a.example/#top',
      '',
      'createdAt: 2024-06-25T03:09:57.938Z',
      'views: 0',
      'featured: false',
      'badges: [ verified ,helper ]',
      'empty: []',
      'socials:',
      '  -   platform: github   ',
      '      url: https://github.com/ada',
      '  - plain item',
      'suspension:',
      '    reason: spam',
      '    at: 2025-06-30T18:45:00+02:00',
    ].join('\n');
    expect(agrees(source)).toBe(true);
  });

  test('random files: when the fast reader answers, the library agrees', () => {
    const words = fc.constantFrom('a', 'Ada', 'true', 'false', 'null', 'Null', 'TRUE', '~', '0', '7', '012', '1e3', '.inf', '-1', '+1', '0x1F', '0o7', '1e3', '1E3', '3d', '3x', '12ab', '2024-01-01', '2024-01-01T00:00:00Z',
      'a: b', 'a:', 'a #b', 'a#b', 'x:y', 'é', '🌸', 'über', '-', '- a', '? a', '&a', '*a', '!t', '|', '>', '%', '@', '`', '[a]', '[]', '[a, b]', '[a,,b]', '{}', '"q"', "'q'", '"a\\nb"', '"\\x41"', '"\\\\"', "'it''s'", "'a'b'", '"a"b', '""', "''", ' ', '  ', '\u00a0a', '\u00a0', '\u3000', 'a\u2003', 'a ', 'a  b');
    const plain = fc.constantFrom('Ada', 'a.png', '3d', '2024-06-25T03:09:57.938Z', 'https://x.example/@a', '42', 'true', '"Ada 🌸"', "'x'", '[verified, helper]', 'Streams, art & code');
    const value = fc.oneof({ arbitrary: plain, weight: 8 }, words, fc.array(words, { minLength: 1, maxLength: 3 }).map((w) => w.join('')), fc.string({ maxLength: 8 }));
    const key = fc.constantFrom('displayName', 'bio', 'views', 'k', 'k', 'true', 'null', '__proto__', 'a-b', '_x', '9a', 'é', 'key with space');
    const indent = fc.constantFrom('', ' ', '  ', '    ');
    const entry = fc.oneof(
      fc.tuple(key, value).map(([k, v]) => `${k}: ${v}`),
      fc.tuple(key, indent, fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 3 }))
        .map(([k, i, kvs]) => [`${k}:`, ...kvs.map(([kk, v]) => `${i}${kk}: ${v}`)].join('\n')),
      fc.tuple(key, indent, fc.constantFrom('- ', '-  ', '-'), fc.array(fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }))
        .map(([k, i, dash, items]) => [`${k}:`, ...items.flatMap((kvs) => kvs.map(([kk, v], n) => `${n ? `${i}${' '.repeat(dash.length)}` : `${i}${dash}`}${kk}: ${v}`))].join('\n')),
      fc.tuple(key, indent, fc.array(value, { minLength: 1, maxLength: 3 })).map(([k, i, vs]) => [`${k}:`, ...vs.map((v) => `${i}- ${v}`)].join('\n')),
      fc.constantFrom('', '# c', '  # c', '---', '...', ' '),
    );
    let answered = 0;
    fc.assert(fc.property(fc.array(entry, { minLength: 1, maxLength: 6 }), fc.constantFrom('', '\n'), (entries, end) => {
      if (agrees(entries.join('\n') + end)) answered++;
    }), { numRuns: 3000 });
    // The property means something only if the fast reader answers often enough.
    expect(answered).toBeGreaterThan(100);
  });

  // Near misses: real files with one to four small edits, from YAML's traps and from anything at all.
  const TOKENS = [' ', '  ', '\n', '\n\n', '#', ' #', '# c\n', ':', ': ', '-', '- ', '---', '...', '--- ', '"', "'", '\\', '[', ']', '{', '}', ',', ', ',
    '&a ', '*a', '!', '!!str ', '!!int ', '|', '>', '?', '? ', '%', '@', '`', '<<', '<<: ', '__proto__', 'constructor', '\t', '\r', '\r\n', '\ufeff', '\u00a0',
    '\u3000', '\u2028', '\u0085', '\x00', '\x7f', '\u200b', 'null', 'Null', '~', 'true', 'True', 'yes', '.inf', '-.inf', '.nan', '0x1F', '0o7', '1e3', '+1',
    '-1', '01', '1_000', '1.5', '.5', '\\u0041', '\\x41', '\\U0001F338', '\\N', '\\_', '\\ ', '\\e', '\\0', '\\/', '\\"', "''", 'é', '🌸', '\ud800', '\udc00',
    'a', '_', '0', '12ab', 'x:y', 'x: y', 'k:', 'k: v', '  k: v', '  - ', '    ', '\n  ', '\n- ', '\n  - a: b', '\n    c: d', '%YAML 1.1\n', 'T', 'Z',
    '2024-01-01T00:00:00Z', '"\\u00e9"', "'it''s'", '[a, b]', '[]', '{}', '[a,]', '[null]', '[1]', '["a"]'];
  const token = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...TOKENS) }, fc.string({ unit: 'binary', maxLength: 3 }), fc.string({ maxLength: 3 }));
  const place = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
  type Edit = (source: string) => string;
  const onLine = (f: (lines: string[], i: number) => void, r: number): Edit => (source) => {
    const lines = source.split('\n');
    f(lines, Math.floor(r * lines.length));
    return lines.join('\n');
  };
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    fc.tuple(place, token).map(([r, t]): Edit => (s) => { const i = Math.floor(r * (s.length + 1)); return s.slice(0, i) + t + s.slice(i); }),
    fc.tuple(place, token).map(([r, t]): Edit => (s) => { const i = Math.floor(r * s.length); return s.slice(0, i) + t + s.slice(i + 1); }),
    fc.tuple(place, fc.integer({ min: 1, max: 6 })).map(([r, n]): Edit => (s) => { const i = Math.floor(r * s.length); return s.slice(0, i) + s.slice(i + n); }),
    fc.tuple(place, place).map(([a, b]): Edit => onLine((l, i) => { l.splice(Math.floor(b * l.length), 0, l[i]!); }, a)),
    fc.tuple(place, place).map(([a, b]): Edit => onLine((l, i) => { const j = Math.floor(b * l.length); [l[i], l[j]] = [l[j]!, l[i]!]; }, a)),
    fc.tuple(place, fc.constantFrom(' ', '  ', '   ', '    ', '- ', '# ')).map(([a, p]): Edit => onLine((l, i) => { l[i] = p + l[i]; }, a)),
    fc.tuple(place, fc.integer({ min: 1, max: 4 })).map(([a, n]): Edit => onLine((l, i) => { l[i] = l[i]!.replace(new RegExp(`^ {1,${n}}`), ''); }, a)),
    fc.tuple(place, token).map(([a, t]): Edit => onLine((l, i) => { l[i] += t; }, a)),
  );
  const nearMiss = (files: () => string[]) => fc.tuple(fc.integer({ min: 0, max: 1e9 }), fc.array(edit, { minLength: 1, maxLength: 4 }))
    .map(([k, edits]) => { const real = files(); return edits.reduce((s, e) => e(s), real[k % real.length]!); });

  test('near misses of real files: when the fast reader answers, the library agrees', () => {
    let answered = 0;
    fc.assert(fc.property(nearMiss(() => realFiles.map((f) => f.text)), (source) => {
      if (agrees(source)) answered++;
    }), { numRuns: 4000 });
    // About a quarter are still plain files; the rest must have been declined, never misread.
    expect(answered).toBeGreaterThan(400);
  });

  test('validation answers the same with the fast reader as with the library alone: values, problems, places', () => {
    const profiles = realFiles.filter((f) => f.name.includes(' profiles/')).map((f) => f.text);
    const places: PropertyKey[][] = [['displayName'], ['bio'], ['avatar'], ['decoration'], ['customDomain'], ['views'], ['badges'], ['badges', 0],
      ['socials', 0], ['socials', 0, 'url'], ['socials', 1, 'platform'], ['private', 'email'], ['suspension', 'at'], ['nope']];
    let valid = 0;
    fc.assert(fc.property(nearMiss(() => profiles), (source) => {
      const fast = parseYamlFile('p.yaml', source, ProfileSchema);
      const slow = parseYamlDocument('p.yaml', source, ProfileSchema);
      expect(fast.ok).toBe(slow.ok);
      if (!fast.ok || !slow.ok) {
        expect(fast.problems, source).toStrictEqual(slow.problems);
        return;
      }
      valid++;
      expect(fast.value, source).toStrictEqual(slow.value);
      for (const keys of places) expect(fast.locate(keys), `${keys.join('.')} in\n${source}`).toStrictEqual(slow.locate(keys));
    }), { numRuns: 1500 });
    expect(valid).toBeGreaterThan(100);
  });
});
