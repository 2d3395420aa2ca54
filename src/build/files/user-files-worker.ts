// The worker thread of `writeUserFiles` (write-build.ts): writes the batches of user files it is
// sent with synchronous calls, beside the rendering and out of the thread pool Astro's own reads
// and writes wait in. A file that exists (recycled, see `recycleUserFiles`) is overwritten in place,
// which on disk is many times cheaper than creating it anew (docs/scale.md, commit e86c4ee); one
// with the same bytes is left as it is, with its compressed siblings (compress.ts), which are
// removed when the bytes change; with `compress`, written anew with the file (compress.ts), so
// the build's idle core compresses them while `astro build` compiles.
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { ENCODINGS } from '../../http/headers.ts';
import { emptyStats, writeCompressed } from './compress.ts';

export interface UserFilesBatch {
  names: string[];
  /** End offset of each name's bytes in `bytes`; the first starts at 0. */
  ends: number[];
  bytes: ArrayBuffer;
}

/** The staging folder; `rel`: the user files' folder in the release, for compress.ts's kinds; `compress`: siblings written too. */
const { dir, rel, compress } = workerData as { dir: string; rel: string; compress: boolean };
parentPort!.on('message', (batch: UserFilesBatch) => {
  const compressed = emptyStats();
  let start = 0;
  for (let i = 0; i < batch.names.length; i++) {
    const end = batch.ends[i]!;
    const file = path.join(dir, batch.names[i]!);
    const bytes = new Uint8Array(batch.bytes, start, end - start);
    if (writeInPlace(file, bytes) && compress) writeCompressed(file, `${rel}${batch.names[i]}`, bytes, compressed);
    start = end;
  }
  parentPort!.postMessage({ written: batch.names.length, compressed });
});

/** Writes `bytes` as the whole file: over the old bytes when it exists and differs, then cut to length. Returns whether it wrote. */
function writeInPlace(file: string, bytes: Uint8Array): boolean {
  let fd: number;
  let recycled = true;
  try {
    fd = fs.openSync(file, 'r+');
  } catch {
    fd = fs.openSync(file, 'w');
    recycled = false;
  }
  try {
    if (recycled && sameBytes(fd, bytes)) return false;
    for (let at = 0; at < bytes.length;) at += fs.writeSync(fd, bytes, at, bytes.length - at, at);
    fs.ftruncateSync(fd, bytes.length);
  } finally {
    fs.closeSync(fd);
  }
  // Compressed siblings of the old bytes.
  if (recycled) for (const suffix of SIBLING_SUFFIXES) fs.rmSync(file + suffix, { force: true });
  return true;
}

const SIBLING_SUFFIXES = ENCODINGS.map((e) => e.suffix);
const old = Buffer.allocUnsafe(64 * 1024);

/** Whether the open file holds exactly `bytes` (a user file is a few KB: one read). */
function sameBytes(fd: number, bytes: Uint8Array): boolean {
  if (fs.fstatSync(fd).size !== bytes.length || bytes.length > old.length) return false;
  let at = 0;
  for (let n; at < bytes.length && (n = fs.readSync(fd, old, at, bytes.length - at, at)) > 0;) at += n;
  return at === bytes.length && old.subarray(0, at).equals(bytes);
}
