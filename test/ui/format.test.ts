// The shortcuts in the page's text helpers give what the Intl formatters they stand in for give.
import { describe, expect, test } from 'vitest';
import { initialOf } from '../../src/ui/default-avatar.ts';
import { formatJoined } from '../../src/ui/format.ts';

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const segmenterInitial = (name: string) => {
  const first = graphemes.segment(name.trim())[Symbol.iterator]().next();
  return first.done ? '?' : first.value.segment.toLocaleUpperCase('en');
};
const monthYear = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });

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

  test('"joined <month year>" is the month in UTC, whatever the offset written', () => {
    for (const iso of ['2024-06-25T03:09:57.938Z', '2024-06-01T00:30:00+02:00', '2024-06-30T23:30:00-02:00', '2015-01-01T00:00:00Z', '2024-06-25T10:00:00Z']) {
      expect(formatJoined(iso), iso).toBe(`joined ${monthYear.format(new Date(iso))}`);
    }
  });
});
