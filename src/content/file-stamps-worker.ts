// The worker thread of `stampFiles` (file-stamps.ts): stamps every file it is given, in order.
import { parentPort, workerData } from 'node:worker_threads';
import { stampList } from './file-stamps.ts';

const list = stampList((workerData as { files: string[] }).files);
parentPort!.postMessage(list, [list.changedMs.buffer as ArrayBuffer]);
