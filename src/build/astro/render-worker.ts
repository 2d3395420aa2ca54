// A worker thread rendering a share of a build's profile pages with the kept renderer
// (page-renderer.ts) while the build's own thread renders the rest (render-pages.ts): every core
// renders. Posts `{ rendered }` every second, and `{ rendered, compressed }` once at the end.
import { parentPort, workerData } from 'node:worker_threads';
import { openRenderer } from './page-renderer.ts';
import type { KeptRendererKey } from './keep-renderer.ts';
import type { SiteIndex } from '../../model/site-index.ts';
import type { CodingLayout } from '../files/compress.ts';

export interface RenderWorkerJob {
  /** The kept renderer's folder and what it must have been kept for. */
  dir: string;
  key: KeptRendererKey;
  index: SiteIndex;
  /** The profiles whose pages this worker writes. */
  names: string[];
  clientDir: string;
  /** How each page's compressed codings are written with it, if at all. */
  layout: CodingLayout | undefined;
}

const job = workerData as RenderWorkerJob;

const renderer = await openRenderer(job.dir, job.key, job.layout);
const progress = setInterval(() => parentPort!.postMessage({ rendered: renderer.profilePagesWritten }), 1000);
try {
  await renderer.renderChangedPages(job.index, job.names, job.clientDir);
} finally {
  clearInterval(progress);
}
parentPort!.postMessage({ rendered: renderer.profilePagesWritten, compressed: renderer.compressed });
