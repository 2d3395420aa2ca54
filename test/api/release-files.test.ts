// The files the handler reads: media from the content folder under `astro dev` (never through a
// link, only regular files, only real images), a release's files on disk within a memory budget,
// and the lookup tables.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { DiskFiles } from '../../src/server/disk-files.ts';
import { fileCacheBytesFromEnv } from '../../src/config.ts';
import fc from 'fast-check';
import { CREATORS_ROWS_FILE, LOOKUP_BUCKETS, bucketFiles, bucketOf, lookup, lookupTableFiles, type ReleaseFiles } from '../../src/api/release-files.ts';
import { answer } from '../../src/api/handler.ts';
import { MAX_IMAGE_BYTES } from '../../src/schemas/limits.ts';
import { FIXTURE, copyFixture, fixtureSite, request } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

function siteWithAvatar(make: (file: string, parent: string) => void) {
  const { parent, content } = copyFixture('site-media');
  made.push(parent);
  const { files } = fixtureSite(content);
  const file = path.join(content, 'avatars', 'alice.png');
  fs.rmSync(file);
  make(file, parent);
  return files;
}

describe('media files', () => {
  test('a real image is read', async () => {
    const { files } = fixtureSite(FIXTURE);
    expect(await files.read('media/avatars/alice.png')).toEqual(fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png')));
    // Only files the content declares: the fixture's decoration folder holds more than its YAML names.
    expect(await files.read('media/avatars/../profiles/alice.yaml')).toBeUndefined();
  });

  test('a link, a FIFO, markup or an image over the limit is not served', async () => {
    const png = fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png'));
    const cases = {
      link: siteWithAvatar((file, parent) => { fs.writeFileSync(path.join(parent, 'secret'), 'x'); fs.symlinkSync(path.join(parent, 'secret'), file); }),
      fifo: siteWithAvatar((file) => { spawnSync('mkfifo', [file]); }),
      svg: siteWithAvatar((file) => fs.writeFileSync(file, '<svg xmlns="http://www.w3.org/2000/svg"/>')),
      big: siteWithAvatar((file) => fs.writeFileSync(file, Buffer.concat([png, Buffer.alloc(MAX_IMAGE_BYTES)]))),
    };
    const served: Record<string, boolean> = {};
    for (const [name, files] of Object.entries(cases)) served[name] = (await files.read('media/avatars/alice.png')) !== undefined;
    expect(served).toEqual({ link: false, fifo: false, svg: false, big: false });
  });

});

describe('a release on disk', () => {
  test('bodies held in memory stay within the budget, however many files are read', async () => {
    const { parent } = copyFixture('disk-files');
    made.push(parent);
    const budget = 1 << 20;
    const body = Buffer.alloc(budget / 16, 'x');
    const count = 64;
    for (let i = 0; i < count; i++) fs.writeFileSync(path.join(parent, `f${i}`), body);
    const files = new DiskFiles(parent, budget);
    for (let i = 0; i < count; i++) {
      expect((await files.read(`f${i}`))?.byteLength, `f${i}`).toBe(body.length);
      expect(files.cachedBytes).toBeLessThanOrEqual(budget);
    }
    expect(files.cachedBytes).toBeGreaterThan(budget - 2 * body.length);
    // A hit is the same bytes object: its ETag is computed once.
    const again = await files.read(`f${count - 1}`);
    expect(await files.read(`f${count - 1}`)).toBe(again);
  });

  // FILE_CACHE_MB of 2048 and more was shifted into a negative 32-bit budget: nothing was kept.
  test('FILE_CACHE_MB is the budget in megabytes, past 2 GB too, and a large budget keeps what is read', async () => {
    for (const mb of [0, 1, 128, 2047, 2048, 4096, 65536]) expect(fileCacheBytesFromEnv({ FILE_CACHE_MB: String(mb) }), `${mb}`).toBe(mb * 1024 * 1024);
    expect(fileCacheBytesFromEnv({})).toBe(128 * 1024 * 1024);
    const { parent } = copyFixture('disk-files-large');
    made.push(parent);
    fs.writeFileSync(path.join(parent, 'answer'), 'x'.repeat(700));
    const files = new DiskFiles(parent, fileCacheBytesFromEnv({ FILE_CACHE_MB: '4096' }));
    expect((await files.read('answer'))?.byteLength).toBe(700);
    expect(files.cachedBytes).toBe(700);
  });

  test('a link, a FIFO or a folder is no file', async () => {
    const { parent } = copyFixture('disk-files');
    made.push(parent);
    fs.writeFileSync(path.join(parent, 'secret'), 'x');
    fs.symlinkSync(path.join(parent, 'secret'), path.join(parent, 'link'));
    spawnSync('mkfifo', [path.join(parent, 'fifo')]);
    const files = new DiskFiles(parent);
    expect(await files.read('secret')).toEqual(Buffer.from('x'));
    expect({ link: await files.read('link'), fifo: await files.read('fifo'), folder: await files.read('content') })
      .toEqual({ link: undefined, fifo: undefined, folder: undefined });
  });
});

describe('lookup tables', () => {
  const memory = (table: Map<string, string>): ReleaseFiles => ({ read: async (f) => (table.has(f) ? Buffer.from(table.get(f)!) : undefined) });
  /** The avatars table of `entries`, given as the columns lookupFiles gives. */
  const avatarsOf = (entries: readonly (readonly [string, string])[]) => lookupTableFiles('avatars', entries.map(([k]) => k), entries.map(([, v]) => v));

  test('every key is found in its bucket, and nothing else is', async () => {
    const entries = Array.from({ length: 2000 }, (_, i) => [`user${i}`, `file${i}.png`] as const);
    const files = memory(avatarsOf(entries));
    for (const [key, value] of entries) expect(await lookup(files, 'avatars', key)).toBe(value);
    for (const key of ['nobody', '__proto__', 'constructor', 'toString', '']) expect(await lookup(files, 'avatars', key)).toBeUndefined();
  });

  test('a bucket is the same text in whatever order its keys come: keys in code-unit order, a key twice its last value', async () => {
    const names = ['alice', 'bob', '__proto__', 'zoë', ...Array.from({ length: 3000 }, (_, i) => `u${i}`), ...Array.from({ length: 1000 }, (_, i) => String(i))];
    const entries = names.map((n) => [n, `${n}.png`] as const);
    const inOrder = avatarsOf([...entries].sort(([a], [b]) => (a < b ? -1 : 1)));
    const shuffled = avatarsOf([...entries].sort(() => Math.random() - 0.5));
    expect(shuffled).toEqual(inOrder);
    for (const text of inOrder.values()) {
      // Integer-like names too: an object put them first, `9` before `10`.
      const keys = [...text.matchAll(/"([^"]*)":/g)].map((m) => m[1]!);
      expect(keys).toEqual([...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    for (const [key, value] of entries) expect(await lookup(memory(inOrder), 'avatars', key)).toBe(value);
    const twice = memory(avatarsOf([['bob', 'old.png'], ['bob', 'new.png'], ['alice', 'a.png']]));
    expect(await lookup(twice, 'avatars', 'bob')).toBe('new.png');
  });

  test('a file is the JSON text of its entries: any keys and values, in order or not, a key twice its last value, null a missing entry', () => {
    // Keys and values as strangers might write them: quotes, backslashes, control characters,
    // non-ASCII text and lone surrogates, which JSON escapes or writes in UTF-8.
    const text = fc.string({ unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\u0000', '\u007f', 'é', '🌸', '\ud800', '\udc00', 'a', 'b'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 8 });
    const entries = fc.array(fc.tuple(fc.option(text, { freq: 8 }), fc.option(text, { freq: 8 })), { maxLength: 60 });
    const sorted = fc.boolean();
    fc.assert(fc.property(entries, sorted, (given, sortFirst) => {
      const list = sortFirst ? [...given].sort(([a], [b]) => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0)) : given;
      const fileOf = (key: string) => `f${key.length % 3}`;
      const files = bucketFiles(list.map(([k]) => k), list.map(([, v]) => v), fileOf);
      // What JSON.stringify makes of the entries' last values, keys in code-unit order, per file.
      const last = new Map<string, string>();
      for (const [k, v] of list) if (k !== null && v !== null) { last.delete(k); last.set(k, v); }
      const expected = new Map<string, string>();
      for (const k of [...last.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
        const file = fileOf(k);
        expected.set(file, `${expected.has(file) ? `${expected.get(file)},` : '{'}${JSON.stringify(k)}:${JSON.stringify(last.get(k))}`);
      }
      expect([...files.keys()]).toEqual([...expected.keys()].sort());
      for (const [file, json] of expected) expect(files.get(file)).toBe(`${json}}`);
    }), { numRuns: 500 });
  });

  test('keys spread over the buckets: no bucket holds more than 3x its share', () => {
    const counts = new Array<number>(LOOKUP_BUCKETS).fill(0);
    const n = 100_000;
    for (let i = 0; i < n; i++) counts[bucketOf(`user_${i.toString(36)}`)]!++;
    expect(Math.max(...counts)).toBeLessThan((3 * n) / LOOKUP_BUCKETS);
    expect(Math.min(...counts)).toBeGreaterThan(0);
  });
});

describe('what the handler keeps per release', () => {
  test('the creators rows are read and sorted once per release files, whatever the queries', async () => {
    const { files } = fixtureSite();
    const reads: string[] = [];
    const counting: ReleaseFiles = { read: (f) => { reads.push(f); return files.read(f); } };
    for (const q of ['?limit=1', '?sort=name', '?limit=2&sort=views', '?category=art']) {
      expect((await answer(request(`/service-api/v1/creators${q}`), counting)).status, q).toBe(200);
    }
    expect(reads.filter((f) => f === CREATORS_ROWS_FILE)).toHaveLength(1);
    // Another release's files read their own.
    const other: ReleaseFiles = { read: (f) => { reads.push(f); return files.read(f); } };
    await answer(request('/service-api/v1/creators?limit=1'), other);
    expect(reads.filter((f) => f === CREATORS_ROWS_FILE)).toHaveLength(2);
  });
});
