// Where a sorted list is cut into parts (the browse pages, the sitemap files, the lines of a
// release's record): after an item whose own hash says so, not every N items. Cut every N, a name
// that comes or goes moves every later cut, and every later part changes: at 1,000,000 profiles one
// added name made the 1,000 browse pages and 20 sitemap files again (4.5 s of a 7 s edit). Cut
// where the items say (content-defined chunking, as rsync and deduplicating backups cut files),
// the other cuts stay where they were and only the part the name falls in changes. The parts are
// a function of the list alone, so an edit build and a whole build cut the same list the same way.
// Each part holds `min` to `max` items (the last may hold fewer), about `min + every` on average.

/** How a list is cut: a part ends at an item whose hash is a multiple of `every` once it holds `min`, and at `max` whatever the hashes. */
export interface RunSizes {
  min: number;
  every: number;
  max: number;
}

/**
 * FNV-1a (32 bits) of a key's UTF-16 code units: the same number on every machine, in every thread
 * and in every version of this code that does not change it (a change moves every cut once).
 */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Where each part of `keys` starts (the first at 0; none for an empty list). Only the items past a
 * part's `min` are hashed. After a key comes or goes, the cuts after the next natural one (a hash,
 * not `max`) are where they were.
 */
export function runStarts(keys: readonly string[], sizes: RunSizes): number[] {
  const { min, every, max } = sizes;
  if (!(Number.isInteger(min) && Number.isInteger(every) && Number.isInteger(max) && min >= 1 && every >= 1 && max >= min)) {
    throw new RangeError(`run sizes must be whole numbers with 1 <= min <= max and every >= 1, not ${JSON.stringify(sizes)}`);
  }
  const starts: number[] = [];
  for (let start = 0; start < keys.length;) {
    starts.push(start);
    // The part's last item: the first past `min` whose hash says so, or the `max`th, or the list's last.
    let last = start + min - 1;
    const limit = Math.min(start + max, keys.length) - 1;
    while (last < limit && keyHash(keys[last]!) % every !== 0) last++;
    start = Math.min(last, limit) + 1;
  }
  return starts;
}

/** The parts of `items` cut at `starts` (runStarts). */
export function cutAt<T>(items: readonly T[], starts: readonly number[]): T[][] {
  return starts.map((start, k) => items.slice(start, starts[k + 1] ?? items.length));
}

/** Whether two parts hold the same items in the same order: how an edit build tells a part it must make again. */
export const sameItems = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
