// The fast reader of plain content files answers only what the `yaml` library would: the same values,
// the same place for each value, and nothing for a file the library reads otherwise or rejects.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { LineCounter, parseDocument, type Node } from 'yaml';
import { describe, expect, test } from 'vitest';
import { parseSimpleYaml } from '../../src/content/simple-yaml.ts';
import { duplicateKeys } from '../../src/content/yaml-file.ts';

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

describe('reading plain content files fast', () => {
  test('every file the benchmark generator writes is read fast, as the library reads it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simple-yaml-'));
    try {
      execFileSync(process.execPath, ['scripts/bench/generate-profiles.ts', '500', dir]);
      for (const sub of ['profiles', 'creators', 'decorations', 'stats']) {
        for (const f of fs.readdirSync(path.join(dir, sub)).filter((f) => f.endsWith('.yaml'))) {
          expect(agrees(fs.readFileSync(path.join(dir, sub, f), 'utf8')), `${sub}/${f}`).toBe(true);
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the fixtures are read as the library reads them', () => {
    const root = 'test/fixtures/content';
    for (const sub of ['profiles', 'creators', 'decorations', 'stats']) {
      for (const f of fs.readdirSync(path.join(root, sub)).filter((f) => f.endsWith('.yaml'))) agrees(fs.readFileSync(path.join(root, sub, f), 'utf8'));
    }
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
  ])('%s is left to the library', (_, source) => {
    expect(parseSimpleYaml(source)).toBeUndefined();
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
      'a: b', 'a:', 'a #b', 'a#b', 'x:y', 'é', '🌸', 'über', '-', '- a', '? a', '&a', '*a', '!t', '|', '>', '%', '@', '`', '[a]', '[]', '[a, b]', '[a,,b]', '{}', '"q"', "'q'", '"a\\nb"', '"\\x41"', '"\\\\"', "'it''s'", "'a'b'", '"a"b', '""', "''", ' ', '  ', '\u00a0a', 'a ', 'a  b');
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
});
