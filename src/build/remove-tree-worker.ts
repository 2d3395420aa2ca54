// The worker thread of `clearPreviousBuild` (write-build.ts): removes one folder tree with
// synchronous calls, since an async `rm` of a big build fills the thread pool Astro's own file work
// waits in (docs/scale.md).
import fs from 'node:fs';
import { workerData } from 'node:worker_threads';

fs.rmSync((workerData as { dir: string }).dir, { recursive: true, force: true });
