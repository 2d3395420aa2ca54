// What identifies a file's bytes without reading them, as git's index does, and the stamps of many
// files taken in a worker thread (file-stamps-worker.ts) while the caller does other work.
import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

export interface Stamp {
  /**
   * Inode, size, and the modification and change times in nanoseconds, in base 36, the change time
   * left out when it is the modification time: a release's record holds one for each profile, and at
   * 1,000,000 profiles the decimal form was a fifth of its bytes (docs/scale.md).
   */
  stamp: string;
  /** The later of the two times, in ms. */
  changedMs: number;
}

/**
 * The stamp of a regular file (lstat: never through a link), or undefined. The change time cannot
 * be set back by a user, so a write that restores the old mtime still shows.
 */
export function stampOf(file: string): Stamp | undefined {
  const st = fs.lstatSync(file, { bigint: true, throwIfNoEntry: false });
  if (!st?.isFile()) return undefined;
  const changed = st.mtimeNs > st.ctimeNs ? st.mtimeNs : st.ctimeNs;
  const times = st.ctimeNs === st.mtimeNs ? st.mtimeNs.toString(36) : `${st.mtimeNs.toString(36)}:${st.ctimeNs.toString(36)}`;
  return { stamp: `${st.ino.toString(36)}:${st.size.toString(36)}:${times}`, changedMs: Number(changed / 1_000_000n) };
}

/**
 * A stamp is trusted only for files last changed well before the run that stored it began: a file
 * written in the same tick as that run could have a stamp that does not show the write (coarse
 * clocks; git calls this "racy"). One second of margin covers file systems with 1 s times.
 */
export const RACY_MS = 1000;

/**
 * Files a thread stamps at least: below, its start (loading its modules) costs more CPU than it
 * takes off this thread. At 20,000 profiles (a fresh clone, two cores busy with validating and
 * compiling) two threads of 10,000 files each took 0.35 s of CPU apiece for 0.1 s of stat calls.
 */
export const STAMP_WORKER_MIN = 50_000;

/** The stamps of many files, in columns (a list of objects costs more to pass between threads): null for a file that is not a regular one. */
export interface StampList {
  stamps: (string | null)[];
  changedMs: Float64Array;
}

/** Entry `i` of a StampList as stampOf gives it. */
export const stampAt = (list: StampList, i: number): Stamp | undefined => {
  const stamp = list.stamps[i];
  return stamp === null || stamp === undefined ? undefined : { stamp, changedMs: list.changedMs[i]! };
};

/** The columns of `stampOf` for each of `files`, in this thread. */
export function stampList(files: readonly string[]): StampList {
  const stamps: (string | null)[] = new Array(files.length);
  const changedMs = new Float64Array(files.length);
  for (let i = 0; i < files.length; i++) {
    const s = stampOf(files[i]!);
    stamps[i] = s ? s.stamp : null;
    changedMs[i] = s ? s.changedMs : 0;
  }
  return { stamps, changedMs };
}

/** At most this many threads stamp at once: a listing of a million files takes 4 s in one. */
const STAMP_THREADS = Math.max(1, Math.min(4, os.availableParallelism()));

/**
 * The stamps of `files`, in order, taken in worker threads (one per core, each a slice of at least
 * `perThread` files) when there are many; resolves to undefined for few files, or when a thread failed: the caller then stamps
 * each file itself.
 */
export async function stampFiles(files: readonly string[], threads = STAMP_THREADS, perThread = STAMP_WORKER_MIN): Promise<StampList | undefined> {
  if (files.length < perThread) return undefined;
  const parts = Math.max(1, Math.min(threads, Math.floor(files.length / perThread)));
  const size = Math.ceil(files.length / parts);
  const lists = await Promise.all(Array.from({ length: parts }, (_, k) => stampInThread(files.slice(k * size, (k + 1) * size))));
  if (lists.some((l) => l === undefined)) return undefined;
  if (parts === 1) return lists[0];
  const stamps: (string | null)[] = [];
  const changedMs = new Float64Array(files.length);
  let at = 0;
  for (const list of lists as StampList[]) {
    for (const s of list.stamps) stamps.push(s);
    changedMs.set(list.changedMs, at);
    at += list.changedMs.length;
  }
  return { stamps, changedMs };
}

function stampInThread(files: readonly string[]): Promise<StampList | undefined> {
  return new Promise((resolve) => {
    const worker = new Worker(new URL('./file-stamps-worker.ts', import.meta.url), { workerData: { files } });
    worker.once('message', (list: StampList) => {
      resolve(list.stamps.length === files.length ? list : undefined);
      void worker.terminate();
    });
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}
