// A worker thread of `compressRelease` (compress.ts): compresses the batches of files it is sent
// with synchronous calls, so the build's cores compress side by side and the build's own thread
// stays free.
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { compressedKind, compressedSiblings, emptyStats, type CompressBatch } from './compress.ts';

parentPort!.on('message', ({ dir, files }: CompressBatch) => {
  const stats = emptyStats();
  for (const file of files) {
    const bytes = fs.readFileSync(`${dir}/${file}`);
    const siblings = compressedSiblings(bytes);
    for (const [suffix, body] of siblings) fs.writeFileSync(`${dir}/${file}${suffix}`, body);
    const kind = (stats.byKind[compressedKind(file)] ??= { files: 0, bytes: 0, br: 0, gz: 0 });
    const br = siblings.get('.br')?.byteLength ?? bytes.byteLength;
    const gz = siblings.get('.gz')?.byteLength ?? bytes.byteLength;
    kind.files++; kind.bytes += bytes.byteLength; kind.br += br; kind.gz += gz;
    stats.files++; stats.bytes += bytes.byteLength; stats.br += br; stats.gz += gz;
  }
  parentPort!.postMessage(stats);
});
