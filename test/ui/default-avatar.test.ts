// The initial on a generated avatar and preview is the first character as a person sees it; the
// ASCII fast path must give exactly what the grapheme segmenter gives.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { initialOf } from '../../src/ui/default-avatar.ts';

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const bySegmenter = (name: string) => {
  const first = segmenter.segment(name.trim())[Symbol.iterator]().next();
  return first.done ? '?' : first.value.segment.toLocaleUpperCase('en');
};

describe('initialOf', () => {
  test('names people write: letters, combining marks, emoji with modifiers, keycaps, scripts', () => {
    const cases: [string, string][] = [
      ['alice', 'A'], ['  bob ', 'B'], ['x', 'X'], ['', '?'], ['   ', '?'], ['7eleven', '7'],
      ['e\u0301mile', 'E\u0301'], ['1\uFE0F\u20E3 one', '1\uFE0F\u20E3'], ['👩🏽‍💻 dev', '👩🏽‍💻'],
      ['ßtraße', 'SS'], ['élodie', 'É'], ['李雷', '李'], ['a\u200Db', 'A\u200D'],
    ];
    for (const [name, initial] of cases) expect(initialOf(name), name).toBe(initial);
  });

  test('the same as the grapheme segmenter for any string', () => {
    const chars = fc.constantFrom('a', 'Z', '0', ' ', '\t', '\u0301', '\u200D', '\uFE0F', '\u20E3', 'é', 'ß', '👩', '🏽', '李', '\r', '\n', '~');
    fc.assert(fc.property(fc.array(chars, { maxLength: 6 }).map((a) => a.join('')), (name) => initialOf(name) === bySegmenter(name)), { numRuns: 5000 });
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 8 }), (name) => initialOf(name) === bySegmenter(name)), { numRuns: 5000 });
  });
});
