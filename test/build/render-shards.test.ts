// Big builds render their profile pages in several processes (src/build/render-shards.ts): the
// result must be the very same files as one process makes.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { MAX_SHARDS, SHARD_MIN_PAGES, shardCount, splitPages } from '../../src/build/render-shards.ts';
import { buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE } from '../support/helpers.ts';
import { servedRelease } from '../../src/release/releases.ts';

const WORK = workDir('shards');
afterAll(() => fs.rmSync(WORK, { recursive: true, force: true }));

/** Every file under `dir`, relative path → bytes. */
function tree(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) files.set(path.relative(dir, path.join(e.parentPath, e.name)), fs.readFileSync(path.join(e.parentPath, e.name)));
  }
  return files;
}

function build(shards: number, env: Record<string, string> = {}) {
  const dist = path.join(WORK, `shards-${shards}-${Object.values(env).join('-')}`, 'dist');
  const r = buildFixture(FIXTURE, dist, { RENDER_SHARDS: String(shards), PROFILES_INCREMENTAL: '0', ...env });
  expect(r.status, `${r.stderr}${r.stdout}`).toBe(0);
  return { dist, stdout: r.stdout };
}

describe('rendering in several processes', () => {
  test('one process per core only for big builds, and the pages split without loss', () => {
    expect(shardCount(100, {}, 8)).toBe(1);
    expect(shardCount(SHARD_MIN_PAGES - 1, {}, 8)).toBe(1);
    // From SHARD_MIN_PAGES on: one process per core, up to MAX_SHARDS.
    expect(shardCount(SHARD_MIN_PAGES, {}, 1)).toBe(1);
    expect(shardCount(SHARD_MIN_PAGES, {}, 2)).toBe(2);
    expect(shardCount(SHARD_MIN_PAGES * 10, {}, 64)).toBe(MAX_SHARDS);
    expect(shardCount(5, { RENDER_SHARDS: '3' })).toBe(3);
    expect(shardCount(2, { RENDER_SHARDS: '3' })).toBe(2);
    const names = Array.from({ length: 10 }, (_, i) => `u${i}`);
    const parts = splitPages(names, 3);
    expect(parts.map((p) => p.length)).toEqual([3, 3, 4]);
    expect(parts.flat()).toEqual(names);
  });

  test.each([
    ['two processes running `astro build`', { KEPT_RENDERER: '0' }, 'with Astro in 2 processes'],
    // The shared build of the same code kept its renderer (or rendered with one kept before).
    ['two threads with the kept renderer', {}, 'with Astro\'s kept renderer in 2 threads'],
  ])('%s build the same files as one, and leave nothing behind', (_, env, says) => {
    // The run's shared build rendered its few pages in one process.
    const one = sharedBuild();
    const two = build(2, env);
    expect(two.stdout).toContain(says);
    const a = tree(path.join(one.dist, 'client'));
    const b = tree(path.join(two.dist, 'client'));
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [file, bytes] of a) expect(b.get(file)!.equals(bytes), file).toBe(true);
    expect(a.has(path.join('p', 'kate.html'))).toBe(true);
    // The server's code too: only the files' names, without the hashes of the chunks that name
    // the folder they were built in.
    const release = (dist: string) => path.join(`${dist}.releases`, servedRelease(dist)!);
    const serverFiles = (dist: string) => [...tree(path.join(release(dist), 'server')).keys()].map((f) => f.replace(/_[\w-]{8}\.mjs$/, '_*.mjs')).sort();
    expect(serverFiles(two.dist)).toEqual(serverFiles(one.dist));
    expect(serverFiles(two.dist)).toContain('entry.mjs');
    // The link, and one release: no shard folder, no user files staged, no lock.
    expect(fs.readdirSync(path.dirname(two.dist)).sort()).toEqual(['dist', 'dist.releases']);
    expect(fs.readdirSync(`${two.dist}.releases`)).toEqual([servedRelease(two.dist)]);
  }, 60_000);
});
