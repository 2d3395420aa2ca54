// The record's keys in bytes (src/build/reuse/key-column.ts): a column answers as the array of
// its keys would, for every operation an edit build uses, on columns fast-check makes.
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { KeyColumn } from '../../src/build/reuse/key-column.ts';
import { rowKey } from '../../src/build/reuse/record.ts';

/** Keys from a few seeds (so rows repeat and compare equal), or null. */
const keyArb = fc.option(fc.integer({ min: 0, max: 5 }).map((n) => rowKey(`k${n}`)), { nil: null });
const columnArb = fc.array(keyArb, { maxLength: 40 });

describe('a column of keys', () => {
  test('gives back each key set, null included, and compares rows as their keys compare', () => {
    fc.assert(fc.property(columnArb, columnArb, (a, b) => {
      const [ca, cb] = [KeyColumn.from(a), KeyColumn.from(b)];
      expect(ca.toArray()).toEqual(a);
      for (let i = 0; i < a.length; i++) {
        expect(ca.has(i, a[i]!)).toBe(true);
        for (let j = 0; j < b.length; j++) expect(ca.sameAs(i, cb, j)).toBe(a[i] === b[j]);
        if (b.length) expect(ca.has(i, b[0]!)).toBe(a[i] === b[0]);
      }
    }));
  });

  test('rows compared as a range: the same answer as comparing each row', () => {
    fc.assert(fc.property(columnArb, columnArb, fc.nat(), fc.nat(), fc.nat(), (a, b, x, y, z) => {
      const first = a.length ? x % (a.length + 1) : 0;
      const end = first + (a.length - first ? y % (a.length - first + 1) : 0);
      const from = z % (b.length + 1);
      const expected = from + end - first <= b.length && a.slice(first, end).every((k, i) => k === b[from + i]);
      expect(KeyColumn.from(a).sameRows(first, end, KeyColumn.from(b), from)).toBe(expected);
    }));
  });

  test('gathered by place as an array is, null where a place is negative', () => {
    fc.assert(fc.property(columnArb.filter((a) => a.length > 0), fc.array(fc.integer({ min: -1, max: 60 }), { maxLength: 50 }), (a, raw) => {
      const places = raw.map((p) => (p < 0 ? -1 : p % a.length));
      expect(KeyColumn.from(a).gather(Int32Array.from(places)).toArray()).toEqual(places.map((p) => (p < 0 ? null : a[p])));
    }));
  });

  test('a line\'s base64 sets the same rows in another column; text of another length is refused', () => {
    fc.assert(fc.property(columnArb, fc.nat(), fc.nat(), (a, x, y) => {
      const first = a.length ? x % (a.length + 1) : 0;
      const count = a.length - first ? y % (a.length - first + 1) : 0;
      const to = new KeyColumn(a.length);
      expect(to.setBase64(first, count, KeyColumn.from(a).toBase64(first, count))).toBe(true);
      expect(to.toArray()).toEqual(a.map((k, i) => (i >= first && i < first + count ? k : null)));
      if (count) expect(new KeyColumn(a.length).setBase64(first, count, KeyColumn.from(a).toBase64(first, count - 1))).toBe(false);
    }));
  });

  test('a frozen column does not change; a copy does; a string that is not a key is refused', () => {
    const column = KeyColumn.from([rowKey('a'), null]).freeze();
    expect(() => column.set(1, rowKey('b'))).toThrow(TypeError);
    expect(() => column.setFrom(0, column, 1)).toThrow(TypeError);
    const copy = column.copy();
    copy.set(1, rowKey('b'));
    expect(copy.toArray()).toEqual([rowKey('a'), rowKey('b')]);
    expect(column.get(1)).toBeNull();
    expect(() => copy.set(0, 'not a key')).toThrow(TypeError);
    expect(() => copy.has(0, `${rowKey('a')}x`)).toThrow(TypeError);
    expect(() => copy.get(2)).toThrow(RangeError);
  });
});
