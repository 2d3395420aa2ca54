// A worker thread of `parseProfiles` (profile-files.ts): parses the batches of profile files it is
// sent; or, started with `readAhead`, reads files ahead of the thread that parses them (`readAhead`).
import { parentPort, workerData } from 'node:worker_threads';
import { parseProfileFile } from './profile-files.ts';
import { ContentReader, YAML_LIMIT } from './read-file.ts';

const ahead = (workerData as { readAhead?: { root: string; files: string[] } } | null)?.readAhead;
if (ahead) {
  // The validating thread's own reader: no link followed, nothing past the size limit, nothing kept.
  const reader = new ContentReader(ahead.root);
  if (!reader.rootProblem()) for (const file of ahead.files) reader.read(file, YAML_LIMIT);
} else {
  parentPort!.on('message', (batch: { username: string; file: string; source: string }[]) => {
    parentPort!.postMessage(batch.map(({ username, file, source }) => parseProfileFile(username, file, source)));
  });
}
