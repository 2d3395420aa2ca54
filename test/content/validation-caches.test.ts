// The store of validation caches (node_modules/.cache/profile-lookup): one cache per content
// folder, and only the folders validated last keep theirs (config.ts `pruneValidationCaches`).
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { KEPT_VALIDATION_CACHES, pruneValidationCaches } from '../../src/config.ts';
import { loadContentFast } from '../../src/content/load.ts';
import { FIXTURE } from '../support/helpers.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs();

const key = (i: number) => i.toString(16).padStart(12, '0');
/** A cache of content folder `i` in `dir`, with its siblings, last written `ageS` seconds ago. */
function oldCache(dir: string, i: number, ageS: number): void {
  for (const suffix of ['', '-views', '-creators']) {
    const file = path.join(dir, `validated-${key(i)}${suffix}.json`);
    fs.writeFileSync(file, '{}\n');
    const at = new Date(Date.now() - ageS * 1000);
    fs.utimesSync(file, at, at);
  }
}

test('only the folders validated last keep their caches, the one written now always', () => {
  const dir = tempDir('validation-caches-');
  // Folder 0 is the oldest of all: the build of it writes now, and it stays whatever its age.
  for (let i = 0; i < 12; i++) oldCache(dir, i, 1000 - i * 10);
  // A sibling whose main file is gone still belongs to its key.
  fs.rmSync(path.join(dir, `validated-${key(3)}.json`));
  fs.writeFileSync(path.join(dir, 'renderers'), 'not a cache');
  fs.writeFileSync(path.join(dir, 'validated-notahexkey.json'), 'not a cache');

  pruneValidationCaches(path.join(dir, `validated-${key(0)}.json`));

  const keys = new Set(fs.readdirSync(dir).map((n) => /^validated-([0-9a-f]{12})/.exec(n)?.[1]).filter(Boolean));
  // Folder 0, and the 7 written last (11 down to 5).
  expect([...keys].sort()).toEqual([0, 5, 6, 7, 8, 9, 10, 11].map(key));
  expect(KEPT_VALIDATION_CACHES).toBe(8);
  for (const suffix of ['', '-views', '-creators']) expect(fs.existsSync(path.join(dir, `validated-${key(0)}${suffix}.json`))).toBe(true);
  expect(fs.readdirSync(dir)).toContain('renderers');
  expect(fs.readdirSync(dir)).toContain('validated-notahexkey.json');
});

test('a cache file named otherwise is no store: nothing beside it is removed', () => {
  const dir = tempDir('validation-caches-');
  for (let i = 0; i < 12; i++) oldCache(dir, i, 1000 - i * 10);
  pruneValidationCaches(path.join(dir, 'cache.json'));
  expect(fs.readdirSync(dir)).toHaveLength(36);
});

test('validating a content folder prunes the store it writes its cache into', async () => {
  const store = tempDir('validation-store-');
  for (let i = 1; i <= 12; i++) oldCache(store, i, 1000 - i * 10);
  const cacheFile = path.join(store, `validated-${'f'.repeat(12)}.json`);
  const { stats } = await loadContentFast(FIXTURE, { cacheFile });
  expect(stats.fromCache).toBe(0);
  const keys = new Set(fs.readdirSync(store).map((n) => /^validated-([0-9a-f]{12})/.exec(n)![1]));
  expect([...keys].sort()).toEqual([...[6, 7, 8, 9, 10, 11, 12].map(key), 'f'.repeat(12)]);
  // The cache written is the one the next run reads.
  const again = await loadContentFast(FIXTURE, { cacheFile });
  expect(again.stats.fromCache).toBeGreaterThan(0);
});
