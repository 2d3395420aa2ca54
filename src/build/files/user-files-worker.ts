// The worker thread of `writeUserFiles` (write-build.ts): writes each batch it is sent
// (user-files.ts), so that the build's own thread goes on rendering.
import { parentPort, workerData } from 'node:worker_threads';
import { writeUserBatch, type UserFilesBatch, type UserFilesTarget } from './user-files.ts';

const target = workerData as UserFilesTarget;
parentPort!.on('message', (batch: UserFilesBatch) => parentPort!.postMessage(writeUserBatch(target, batch)));
