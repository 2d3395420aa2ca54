// The JSON-LD in a profile page's <script> block: no profile text can end the block or the line,
// and every value reads back as it was.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { jsonLdSafe } from '../../src/ui/json-ld.ts';

// Strings rich in what must be escaped, among any other characters.
const text = fc.array(fc.oneof(fc.constantFrom('<', '>', '&', '\u2028', '\u2029', '</script>', '<!--', '"', '\\'), fc.string({ unit: 'grapheme' })), { maxLength: 8 }).map((parts) => parts.join(''));
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(text, tie('node'), { maxKeys: 4 })),
})).node;

describe('jsonLdSafe', () => {
  test('leaves none of < > & U+2028 U+2029 in the block, and parses back to the value', () => {
    fc.assert(fc.property(value, (v) => {
      const out = jsonLdSafe(v);
      expect(out).not.toMatch(/[<>&\u2028\u2029]/);
      expect(JSON.parse(out)).toEqual(v);
    }), { numRuns: 2_000 });
  });

  test('writes each as a lower-case \\u escape', () => {
    expect(jsonLdSafe({ bio: '</script>&\u2028\u2029' })).toBe('{"bio":"\\u003c/script\\u003e\\u0026\\u2028\\u2029"}');
  });
});
