// The worker thread of `removeTrees` (write-build.ts): removes folder trees with synchronous
// calls, since an async `rm` of a big build fills the thread pool Astro's own file work waits in
// (docs/scale.md).
import fs from 'node:fs';
import { workerData } from 'node:worker_threads';

for (const dir of (workerData as { dirs: string[] }).dirs) fs.rmSync(dir, { recursive: true, force: true });
