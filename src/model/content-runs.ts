// Where a sorted list is cut into parts (the browse pages, the sitemap files, the lines of a
// release's record): after an item whose own hash says so, not every N items. Cut every N, a name
// that comes or goes moves every later cut, and every later part changes: at 1,000,000 profiles one
// added name made the 1,000 browse pages and 20 sitemap files again (4.5 s of a 7 s edit). Cut
// where the items say (content-defined chunking, as rsync and deduplicating backups cut files),
// the other cuts stay where they were and only the part the name falls in changes. The parts are
// a function of the list alone, so an edit build and a whole build cut the same list the same way.
// Each part holds `min` to `max` items (the last may hold fewer), about `min + every` on average.

import { sortedIndexOf } from './sorted.ts';

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
  checkSizes(sizes);
  const starts: number[] = [];
  for (let start = 0; start < keys.length; start = runEnd(keys, start, sizes)) starts.push(start);
  return starts;
}

function checkSizes({ min, every, max }: RunSizes): void {
  if (!(Number.isInteger(min) && Number.isInteger(every) && Number.isInteger(max) && min >= 1 && every >= 1 && max >= min)) {
    throw new RangeError(`run sizes must be whole numbers with 1 <= min <= max and every >= 1, not ${JSON.stringify({ min, every, max })}`);
  }
}

/** Where the part of `keys` that starts at `start` ends (the next part's start): the first key past `min` whose hash says so, or the `max`th, or the list's last. */
function runEnd(keys: readonly string[], start: number, { min, every, max }: RunSizes): number {
  let last = start + min - 1;
  const limit = Math.min(start + max, keys.length) - 1;
  while (last < limit && keyHash(keys[last]!) % every !== 0) last++;
  return Math.min(last, limit) + 1;
}

/**
 * `runStarts(keys, sizes)`, found from the starts of another list that differs from `keys` in one
 * stretch (a few keys added, removed or changed: an edit build's names against the served
 * release's): the parts before the stretch are the same, the parts after the first cut the two
 * lists share past it are the same shifted, and only the keys between are hashed. At 1,000,000
 * names, cutting the browse pages and sitemap files of both lists anew was 0.3 s of an edit.
 * `before.starts` must be `runStarts(before.keys, sizes)`; with several stretches apart, the keys
 * between them are hashed too, never a different answer.
 */
export function runStartsAfter(keys: readonly string[], sizes: RunSizes, before: { keys: readonly string[]; starts: readonly number[] }): number[] {
  checkSizes(sizes);
  const { keys: old, starts: oldStarts } = before;
  const n = keys.length;
  const m = old.length;
  // The keys the lists share at the head (`head` of them) and at the tail (`tail`, not overlapping the head).
  let head = 0;
  while (head < n && head < m && keys[head] === old[head]) head++;
  let tail = 0;
  while (tail < n - head && tail < m - head && keys[n - 1 - tail] === old[m - 1 - tail]) tail++;
  const shift = n - m;
  // A part of `old` looked at keys before `head` only when it ends before it, and not at the end of
  // `old` (where `keys` may go on): those parts are the same in `keys`.
  let kept = 0;
  while (kept < oldStarts.length) {
    const end = oldStarts[kept + 1] ?? m;
    if (end > head || end >= m) break;
    kept++;
  }
  const starts = oldStarts.slice(0, kept);
  for (let start = kept === 0 ? 0 : oldStarts[kept]!; start < n; start = runEnd(keys, start, sizes)) {
    // In the shared tail, at a start `old` has at the same key: every later part is `old`'s, shifted.
    if (start >= n - tail) {
      const at = sortedIndexOf(oldStarts, start - shift);
      if (at >= 0) {
        for (let k = at; k < oldStarts.length; k++) starts.push(oldStarts[k]! + shift);
        return starts;
      }
    }
    starts.push(start);
  }
  return starts;
}

/**
 * Which parts of `now` (cut at `nowStarts`) hold other items than the part of `before` (cut at
 * `beforeStarts`) at the same place, and the places `before` has past `now`'s: compared where the
 * lists are, without copying the parts.
 */
export function changedParts(
  now: readonly string[], nowStarts: readonly number[], before: readonly string[], beforeStarts: readonly number[],
): { changed: number[]; gone: number[] } {
  const changed: number[] = [];
  for (let k = 0; k < nowStarts.length; k++) {
    const [a, b] = [nowStarts[k]!, nowStarts[k + 1] ?? now.length];
    const [c, d] = [beforeStarts[k], beforeStarts[k + 1] ?? before.length];
    let same = c !== undefined && b - a === d - c;
    for (let i = 0; same && i < b - a; i++) same = now[a + i] === before[c! + i];
    if (!same) changed.push(k);
  }
  const gone: number[] = [];
  for (let k = nowStarts.length; k < beforeStarts.length; k++) gone.push(k);
  return { changed, gone };
}

/** The parts of `items` cut at `starts` (runStarts). */
export function cutAt<T>(items: readonly T[], starts: readonly number[]): T[][] {
  return starts.map((start, k) => items.slice(start, starts[k + 1] ?? items.length));
}

/** Whether two parts hold the same items in the same order: how an edit build tells a part it must make again. */
export const sameItems = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
