// Stamps say whether a file may have changed without reading it; many are taken in a worker thread.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { STAMP_WORKER_MIN, stampAt, stampFiles, stampList, stampOf } from '../../src/content/file-stamps.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-stamps-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('file stamps', () => {
  test('a write shows in the stamp; a link or a missing file has none', () => {
    const file = path.join(dir, 'a.yaml');
    fs.writeFileSync(file, 'one');
    const before = stampOf(file)!;
    // Another size: within one clock tick the times may not move (the racy case RACY_MS covers).
    fs.writeFileSync(file, 'three');
    const after = stampOf(file)!;
    expect(after.stamp).not.toBe(before.stamp);
    expect(after.changedMs).toBeGreaterThanOrEqual(before.changedMs);
    fs.symlinkSync(file, path.join(dir, 'link.yaml'));
    expect(stampOf(path.join(dir, 'link.yaml'))).toBeUndefined();
    expect(stampOf(path.join(dir, 'missing.yaml'))).toBeUndefined();
  });

  test('many files: the worker threads give what this thread would, in order', async () => {
    const many = path.join(dir, 'many');
    fs.mkdirSync(many);
    // Threads of 1,000 files at least here (STAMP_WORKER_MIN by default, which a fast test cannot afford).
    const perThread = 1_000;
    const files = Array.from({ length: perThread + 5 }, (_, i) => path.join(many, `u${i}.yaml`));
    for (const [i, f] of files.entries()) fs.writeFileSync(f, `n: ${i}`);
    // Not regular files: a link, a folder, a name that is not there.
    fs.symlinkSync(files[0]!, files[1]!.replace('u1.yaml', 'link.yaml'));
    fs.mkdirSync(path.join(many, 'folder.yaml'));
    const asked = [...files, path.join(many, 'link.yaml'), path.join(many, 'folder.yaml'), path.join(many, 'gone.yaml')];
    const fromWorker = await stampFiles(asked, undefined, perThread);
    expect(fromWorker).toBeDefined();
    expect(fromWorker!.stamps).toEqual(stampList(asked).stamps);
    expect([...fromWorker!.changedMs]).toEqual([...stampList(asked).changedMs]);
    for (const i of [0, 7, files.length - 1]) expect(stampAt(fromWorker!, i)).toEqual(stampOf(asked[i]!));
    expect(asked.slice(-3).map((_, k) => stampAt(fromWorker!, files.length + k))).toEqual([undefined, undefined, undefined]);
    // Twice as many (the same files again, reversed): two threads, each a slice, joined in order.
    const twice = [...asked, ...asked.toReversed()];
    const fromTwo = await stampFiles(twice, 3, perThread);
    expect(fromTwo!.stamps).toEqual(stampList(twice).stamps);
    expect([...fromTwo!.changedMs]).toEqual([...stampList(twice).changedMs]);
    // Few files: no thread, the caller stamps them.
    expect(await stampFiles(files.slice(0, 10), undefined, perThread)).toBeUndefined();
    expect(await stampFiles(files)).toBeUndefined();
    expect(STAMP_WORKER_MIN).toBeGreaterThan(files.length);
  }, 60_000);
});
