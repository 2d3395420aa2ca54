// Binary search in an ascending list (names in code-unit order, or numbers): one place for the edit
// path's look-ups among a million names and the cuts' (content-runs.ts).

/** The first place in `list` whose value is not before `value` (`list.length` when every one is). */
export function lowerBound<T extends string | number>(list: readonly T[], value: T): number {
  let [lo, hi] = [0, list.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The place of `value` in `list`, or -1. */
export function sortedIndexOf<T extends string | number>(list: readonly T[], value: T): number {
  const at = lowerBound(list, value);
  return at < list.length && list[at] === value ? at : -1;
}
