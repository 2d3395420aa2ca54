// Equality the tests' `toEqual` cannot see by itself: a KeyColumn keeps its keys in a private
// buffer, so two columns of the same length would look equal whatever their keys.
import { expect } from 'vitest';
import { KeyColumn } from '../../src/build/reuse/key-column.ts';

expect.addEqualityTesters([
  function keyColumns(a: unknown, b: unknown) {
    if (!(a instanceof KeyColumn) && !(b instanceof KeyColumn)) return undefined;
    return a instanceof KeyColumn && b instanceof KeyColumn && this.equals(a.toArray(), b.toArray());
  },
]);
