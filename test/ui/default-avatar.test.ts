// The initial on a generated avatar and preview is the first character as a person sees it; the
// ASCII fast path must give exactly what the grapheme segmenter gives.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { avatarRgb, defaultAvatarSvg, hueOf, initialOf } from '../../src/ui/default-avatar.ts';

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

describe('the background', () => {
  /** WCAG 2's contrast of white on an 8-bit sRGB colour. */
  const whiteOn = ([r, g, b]: [number, number, number]) => {
    const lin = (c: number) => { const v = c / 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 1.05 / (0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b) + 0.05);
  };

  test('the white initial has at least 3.5:1 on every hue (olive was 2.6:1); 42% light where that holds', () => {
    const contrasts = Array.from({ length: 360 }, (_, hue) => whiteOn(avatarRgb(hue)));
    expect(Math.min(...contrasts)).toBeGreaterThanOrEqual(3.5);
    // Blue keeps hsl(240 55% 42%): only the hues that needed it are darker.
    expect(avatarRgb(240)).toEqual([48, 48, 166]);
    expect(contrasts.filter((c) => c > 4.2).length).toBeGreaterThan(180);
  });

  test('the SVG paints avatarRgb, the colour the preview PNG (og-image-png.ts) starts its palette from', () => {
    const svg = defaultAvatarSvg('olive', 'Olive');
    const hue = hueOf('olive');
    expect(svg).toContain(`fill="rgb(${avatarRgb(hue).join(' ')})"`);
  });
});
