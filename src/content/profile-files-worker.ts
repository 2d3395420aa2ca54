// A worker thread of `parseProfiles` (profile-files.ts): parses the batches of profile files it is sent.
import { parentPort } from 'node:worker_threads';
import { parseProfileFile } from './profile-files.ts';

parentPort!.on('message', (batch: { username: string; file: string; source: string }[]) => {
  parentPort!.postMessage(batch.map(({ username, file, source }) => parseProfileFile(username, file, source)));
});
