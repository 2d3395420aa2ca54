// A worker thread rendering a share of a build's profile pages with the kept renderer
// (page-renderer.ts) while the build's own thread renders the rest: every core renders, without
// the second `astro build` a render shard runs (render-shards.ts), its seconds of bundling and its
// hundreds of megabytes. Posts `{ rendered }` every second and once at the end.
import { parentPort, workerData } from 'node:worker_threads';
import { openRenderer } from './page-renderer.ts';
import type { KeptRendererKey } from './keep-renderer.ts';
import type { SiteIndex } from '../../model/site-index.ts';

export interface RenderWorkerJob {
  /** The kept renderer's folder and what it must have been kept for. */
  dir: string;
  key: KeptRendererKey;
  index: SiteIndex;
  /** The profiles whose pages this worker writes. */
  names: string[];
  clientDir: string;
}

const job = workerData as RenderWorkerJob;

const renderer = await openRenderer(job.dir, job.key);
const progress = setInterval(() => parentPort!.postMessage({ rendered: renderer.profilePagesWritten }), 1000);
try {
  await renderer.renderChangedPages(job.index, job.names, job.clientDir);
} finally {
  clearInterval(progress);
}
parentPort!.postMessage({ rendered: renderer.profilePagesWritten });
