// The names of an edit build told which profiles came and went (edit-path.ts `mergeNames`): the
// served names without the gone ones, with the new ones, sorted, as sorting them all would give.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { mergeNames } from '../../src/build/reuse/edit-path.ts';

const name = fc.stringMatching(/^[a-z0-9_-]{1,8}$/);

describe('mergeNames', () => {
  test('equals filtering and sorting, for names added and removed anywhere, first and last included', () => {
    fc.assert(fc.property(fc.uniqueArray(name, { maxLength: 200 }), fc.uniqueArray(name, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 8 }), (served, candidates, picks) => {
      served.sort();
      const have = new Set(served);
      const come = candidates.filter((n) => !have.has(n));
      const gone = new Set(picks.map((p) => served[p % Math.max(1, served.length)]!).filter(Boolean));
      expect(mergeNames(Object.freeze([...served]), come, gone)).toEqual([...served.filter((n) => !gone.has(n)), ...come].sort());
    }));
  });
});
