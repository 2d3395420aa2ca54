// A worker thread of `compressRelease` (compress.ts): compresses the batches of files it is sent
// with synchronous calls, so the build's cores compress side by side and the build's own thread
// stays free.
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { emptyStats, writeCompressed, type CompressBatch } from './compress.ts';

parentPort!.on('message', ({ dir, files }: CompressBatch) => {
  const stats = emptyStats();
  for (const file of files) writeCompressed(`${dir}/${file}`, file, fs.readFileSync(`${dir}/${file}`), stats);
  parentPort!.postMessage(stats);
});
