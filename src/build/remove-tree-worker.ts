// The worker thread of `clearPreviousBuild` (write-build.ts): removes one folder tree with
// synchronous calls in this thread. `fs.promises.rm` of a build of 100,000 profiles queues some
// 400,000 operations in the thread pool that Astro's own file reads and writes wait behind: a
// rebuild's Astro step took 15-24 s instead of ~3.
import fs from 'node:fs';
import { workerData } from 'node:worker_threads';

fs.rmSync((workerData as { dir: string }).dir, { recursive: true, force: true });
