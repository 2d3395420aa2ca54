// A worker thread of `compressRelease` (compress.ts): compresses the batches of files it is sent
// with synchronous calls, so the build's cores compress side by side and the build's own thread
// stays free.
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { isPacked } from '../../release/coded-file.ts';
import { codedFile, emptyStats, writeCodedFile, type CompressBatch } from './compress.ts';

parentPort!.on('message', ({ dir, files, layout }: CompressBatch) => {
  const stats = emptyStats();
  for (const file of files) {
    const at = `${dir}/${file}`;
    const bytes = fs.readFileSync(at);
    if (isPacked(bytes)) continue;
    // Written already: only what packing made of it, or its siblings.
    writeCodedFile(at, codedFile(file, bytes, layout, stats), bytes);
  }
  parentPort!.postMessage(stats);
});
