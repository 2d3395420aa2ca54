// A worker thread of `compressRelease` (compress.ts): compresses the batches of files it is sent
// (`compressBatch`), so the build's cores compress side by side and the build's own thread stays
// free.
import { parentPort } from 'node:worker_threads';
import { compressBatch, type CompressBatch } from './compress.ts';

parentPort!.on('message', (batch: CompressBatch) => parentPort!.postMessage(compressBatch(batch)));
