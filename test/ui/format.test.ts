// The shortcuts in the page's text helpers give what the Intl formatters they stand in for give.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { initialOf } from '../../src/ui/default-avatar.ts';
import { excerpt, formatJoined, formatViews } from '../../src/ui/format.ts';

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const segmenterInitial = (name: string) => {
  const first = graphemes.segment(name.trim())[Symbol.iterator]().next();
  return first.done ? '?' : first.value.segment.toLocaleUpperCase('en');
};
const monthYear = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
const intlViews = (views: number) => `${compact.format(views).toLowerCase()} ${views === 1 ? 'view' : 'views'}`;

describe('text helpers of the profile page', () => {
  test('the initial of a name starting with any two ASCII characters is the segmenter\'s', () => {
    const ascii = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
    for (const a of ascii) for (const b of [...ascii, '', '\u0301', '\u200d', '🌸', 'é']) {
      expect(initialOf(`${a}${b}x`), JSON.stringify(a + b)).toBe(segmenterInitial(`${a}${b}x`));
      expect(initialOf(`${a}${b}`), JSON.stringify(a + b)).toBe(segmenterInitial(`${a}${b}`));
    }
    expect(initialOf('  ')).toBe('?');
    expect(initialOf('e\u0301mile')).toBe('E\u0301');
  });

  // formatViews keeps one text per rounded count: every count must still read as Intl has it,
  // at the edges of each unit and of each rounding step above all.
  test('"<n> views" is Intl\'s compact text of the count, however many were formatted before', () => {
    const edges: number[] = [];
    for (let unit = 1e3; unit <= 1e15; unit *= 1000) {
      for (const step of [unit / 10, unit]) for (const k of [1, 5, 9, 10, 99, 100, 999, 1000, 9999]) {
        const at = k * step;
        for (const near of [at - step / 2 - 1, at - step / 2, at - step / 2 + 1, at - 1, at, at + 1, at + step / 2 - 1, at + step / 2, at + step / 2 + 1]) if (near >= 0) edges.push(near);
      }
    }
    for (const views of [...edges, 0, 1, 2, 999, 1000, 999_950, 999_949, 999_999, Number.MAX_SAFE_INTEGER, 1.5, 2.25]) expect(formatViews(views), String(views)).toBe(intlViews(views));
    const counts = fc.oneof(fc.nat(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 0, max: 1e7 }));
    fc.assert(fc.property(counts, (views) => formatViews(views) === intlViews(views)), { numRuns: 20_000 });
  });

  test('"joined <month year>" is the month in UTC, whatever the offset written', () => {
    for (const iso of ['2024-06-25T03:09:57.938Z', '2024-06-01T00:30:00+02:00', '2024-06-30T23:30:00-02:00', '2015-01-01T00:00:00Z', '2024-06-25T10:00:00Z']) {
      expect(formatJoined(iso), iso).toBe(`joined ${monthYear.format(new Date(iso))}`);
    }
  });
});

describe('excerpt, the description of a link preview', () => {
  // On main at b59a9e2 a bio was cut at 200 characters wherever they fell: "…a static site genera".
  test('any text: as it is when short; else a prefix of whole words, at most the limit with its ellipsis', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'é', '🌸', 'ß', 'z', ',', '.'), minLength: 1, maxLength: 14 });
    fc.assert(fc.property(fc.array(word, { maxLength: 60 }), fc.constantFrom(' ', '  ', '\n', '\t '), fc.integer({ min: 10, max: 200 }), (words, gap, max) => {
      const text = words.join(gap);
      const flat = text.trim().replace(/\s+/g, ' ');
      const out = excerpt(text, max);
      if ([...flat].length <= max) {
        expect(out).toBe(flat);
        return;
      }
      expect([...out].length).toBeLessThanOrEqual(max);
      expect(out.endsWith('…')).toBe(true);
      const kept = out.slice(0, -1);
      expect(flat.startsWith(kept)).toBe(true);
      // Whole words: what follows the kept text in the original starts a new word, unless one word alone was longer than the limit.
      const next = flat.slice(kept.length);
      if ([...flat].slice(0, max).includes(' ')) expect(next).toMatch(/^[,;:.–—-]*\s/);
    }));
  });

  test('a bio of a profile page', () => {
    expect(excerpt('Writes   about\nstatic sites.')).toBe('Writes about static sites.');
    expect(excerpt(`${'word '.repeat(50)}end`, 20)).toBe('word word word word…');
    expect(excerpt('x'.repeat(30), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});
