// The worker thread of `writeUserFiles` (write-build.ts): writes the batches of user files it is
// sent with synchronous calls, beside the rendering and out of the thread pool Astro's own reads
// and writes wait in. A file that exists (recycled, see `recycleUserFiles`) is overwritten in place,
// which on disk is many times cheaper than creating it anew (docs/scale.md, commit e86c4ee).
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

export interface UserFilesBatch {
  names: string[];
  /** End offset of each name's bytes in `bytes`; the first starts at 0. */
  ends: number[];
  bytes: ArrayBuffer;
}

const dir = (workerData as { dir: string }).dir;
parentPort!.on('message', (batch: UserFilesBatch) => {
  let start = 0;
  for (let i = 0; i < batch.names.length; i++) {
    const end = batch.ends[i]!;
    writeInPlace(path.join(dir, batch.names[i]!), new Uint8Array(batch.bytes, start, end - start));
    start = end;
  }
  parentPort!.postMessage(batch.names.length);
});

/** Writes `bytes` as the whole file: over the old bytes when it exists, then cut to length. */
function writeInPlace(file: string, bytes: Uint8Array): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch {
    fd = fs.openSync(file, 'w');
  }
  try {
    for (let at = 0; at < bytes.length;) at += fs.writeSync(fd, bytes, at, bytes.length - at, at);
    fs.ftruncateSync(fd, bytes.length);
  } finally {
    fs.closeSync(fd);
  }
}
