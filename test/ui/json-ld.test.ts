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

/**
 * `out` read back as JSON text with only our five escapes undone, each escape read as a token (so
 * an escaped backslash before `u003c` stays as it is). Not `JSON.parse`: V8 in Node 24.21 reads a
 * one-character key written as an escape (`"\u0026"`) as `"\\"` once it has parsed an object of
 * the same earlier keys with the key `"\\"` (`{"a":1,"\\":1}` then `{"a":1,"\u0026":1}` gives
 * the key `\`), which these values make now and then.
 */
const unescaped = (out: string) => out.replace(/\\(u(003c|003e|0026|2028|2029)|.)/g, (m, _e, code?: string) => (code ? String.fromCharCode(parseInt(code, 16)) : m));

describe('jsonLdSafe', () => {
  test('leaves none of < > & U+2028 U+2029 in the block, and reads back as the value', () => {
    fc.assert(fc.property(value, (v) => {
      const out = jsonLdSafe(v);
      expect(out).not.toMatch(/[<>&\u2028\u2029]/);
      // JSON.stringify's text, which JSON.parse reads back as the value, but for the escapes.
      expect(unescaped(out)).toBe(JSON.stringify(v));
    }), { numRuns: 2_000 });
  });

  test('parses back to the value', () => {
    const v = { bio: '</script>&<!-- \u2028\u2029 \\u003c', '<': ['>', { '&': null }], n: 3 };
    expect(JSON.parse(jsonLdSafe(v))).toEqual(v);
  });

  test('writes each as a lower-case \\u escape', () => {
    expect(jsonLdSafe({ bio: '</script>&\u2028\u2029' })).toBe('{"bio":"\\u003c/script\\u003e\\u0026\\u2028\\u2029"}');
  });
});
