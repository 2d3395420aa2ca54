// Content-defined cuts (src/model/content-runs.ts): every item in exactly one part, in order, each
// part within its sizes; the cuts are a function of the list alone; and a key that comes or goes
// leaves every part before it as it was and changes only a few after it.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { changedParts, cutAt, keyHash, runStarts, runStartsAfter, type RunSizes } from '../../src/model/content-runs.ts';

const SIZES: RunSizes = { min: 8, every: 8, max: 64 };
/** Sorted distinct keys of the kind profiles have. */
const keyLists = fc.uniqueArray(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), { minLength: 0, maxLength: 600 }).map((keys) => keys.sort());

describe('runStarts', () => {
  test('every key once, in order; each part holds min to max keys, the last at most max', () => {
    fc.assert(fc.property(keyLists, (keys) => {
      const parts = cutAt(keys, runStarts(keys, SIZES));
      expect(parts.flat()).toEqual(keys);
      parts.forEach((part, k) => {
        expect(part.length).toBeLessThanOrEqual(SIZES.max);
        if (k < parts.length - 1) expect(part.length).toBeGreaterThanOrEqual(SIZES.min);
      });
    }));
  });

  test('a part ends at a key whose hash is a multiple of `every`, or at `max`', () => {
    fc.assert(fc.property(keyLists, (keys) => {
      const parts = cutAt(keys, runStarts(keys, SIZES));
      for (const part of parts.slice(0, -1)) expect(keyHash(part.at(-1)!) % SIZES.every === 0 || part.length === SIZES.max).toBe(true);
    }));
  });

  test('a key added or removed changes no part before it and at most a few after it', () => {
    fc.assert(fc.property(keyLists, fc.stringMatching(/^[a-z0-9_-]{1,12}$/), (keys, key) => {
      const other = keys.includes(key) ? keys.filter((k) => k !== key) : [...keys, key].sort();
      const [a, b] = [cutAt(keys, runStarts(keys, SIZES)), cutAt(other, runStarts(other, SIZES))];
      const ofA = new Set(a.map((p) => p.join('\n')));
      const differ = b.filter((p) => !ofA.has(p.join('\n')));
      // A few parts: the one the key falls in, and those a cut at `max` moved until a hash cut again.
      expect(differ.length).toBeLessThanOrEqual(4);
      const at = other.indexOf(key) >= 0 ? other.indexOf(key) : keys.indexOf(key);
      // Every part cut before the key is the same, at the same place (the last part is not cut: a key after it joins it).
      let end = 0;
      for (let k = 0; k < a.length - 1 && end + a[k]!.length <= at; k++) {
        expect(b[k]).toEqual(a[k]);
        end += a[k]!.length;
      }
    }));
  });

  /** `keys` with some keys added and some removed: one stretch or several apart, or none. */
  const edited = fc.tuple(keyLists, fc.uniqueArray(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }))
    .map(([keys, added, removed]) => {
      const gone = new Set(removed.map((r) => keys[r % Math.max(1, keys.length)]));
      return [keys, [...new Set([...keys.filter((k) => !gone.has(k)), ...added])].sort()] as const;
    });

  test('runStartsAfter finds the starts runStarts finds, from those of a list some keys apart', () => {
    for (const sizes of [SIZES, { min: 1, every: 3, max: 4 }, { min: 5, every: 1, max: 5 }]) {
      fc.assert(fc.property(edited, ([before, keys]) => {
        expect(runStartsAfter(keys, sizes, { keys: before, starts: runStarts(before, sizes) })).toEqual(runStarts(keys, sizes));
      }));
    }
  });

  test('changedParts names the parts whose keys differ from those of the part at the same place, and those past the end', () => {
    fc.assert(fc.property(edited, ([before, keys]) => {
      const [a, b] = [runStarts(keys, SIZES), runStarts(before, SIZES)];
      const [partsA, partsB] = [cutAt(keys, a), cutAt(before, b)];
      const { changed, gone } = changedParts(keys, a, before, b);
      expect(changed).toEqual(partsA.flatMap((p, k) => (partsB[k]?.join('\n') === p.join('\n') ? [] : [k])));
      expect(gone).toEqual(partsB.slice(partsA.length).map((_, k) => partsA.length + k));
    }));
  });

  test('the hash is FNV-1a: the same cuts on every machine and in every thread', () => {
    expect(keyHash('')).toBe(0x811c9dc5);
    expect(keyHash('a')).toBe(0xe40c292c);
    expect(keyHash('foobar')).toBe(0xbf9cf968);
  });

  test('sizes that cannot cut are refused', () => {
    expect(() => runStarts(['a'], { min: 0, every: 1, max: 2 })).toThrow(RangeError);
    expect(() => runStarts(['a'], { min: 3, every: 1, max: 2 })).toThrow(RangeError);
    expect(() => runStarts(['a'], { min: 1, every: 0.5, max: 2 })).toThrow(RangeError);
  });
});
