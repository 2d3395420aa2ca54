// A worker thread rendering batches of a build's profile pages with the kept renderer
// (page-renderer.ts), as render-pages.ts `renderInWorkers` sends them: every core renders, and a
// thread holds the users of a batch or two, never a share of the whole site. Its first message is
// its job (the thread may start before the renderer is compiled: `RenderWorkers`), then batches.
// Posts `{ rendered }` every second and `{ rendered, batchDone }` after each batch; `null` ends the
// work, answered by `{ rendered, compressed }`.
import { parentPort } from 'node:worker_threads';
import { openRenderer, type PageRenderer } from './page-renderer.ts';
import type { KeptRendererKey } from './keep-renderer.ts';
import type { SiteIndex } from '../../model/site-index.ts';
import type { CodingLayout, CompressStats } from '../files/compress.ts';

export interface RenderWorkerJob {
  /** The kept renderer's folder and what it must have been kept for. */
  dir: string;
  key: KeptRendererKey;
  clientDir: string;
  /** How each page's compressed codings are written with it, if at all. */
  layout: CodingLayout | undefined;
}

/** Profiles whose pages a worker writes, and what those pages read of the index (render-pages.ts `renderBatches`). */
export interface RenderBatch {
  names: string[];
  index: SiteIndex;
}

/** What a worker tells: pages written so far; after a batch, `batchDone`; at the end, what it compressed. */
export interface RenderWorkerReport {
  rendered: number;
  batchDone?: true;
  compressed?: CompressStats;
}

const port = parentPort!;
let job: RenderWorkerJob | undefined;
let renderer: PageRenderer | undefined;
const tell = (report: Omit<RenderWorkerReport, 'rendered'> = {}) => port.postMessage({ rendered: renderer?.profilePagesWritten ?? 0, ...report } satisfies RenderWorkerReport);
let progress: NodeJS.Timeout | undefined;

// The job, then one batch at a time, in the order sent: a message that arrives while one renders waits here.
let last: Promise<void> = Promise.resolve();
port.on('message', (message: RenderWorkerJob | RenderBatch | null) => {
  last = last.then(async () => {
    if (job === undefined) {
      job = message as RenderWorkerJob;
      renderer = await openRenderer(job.dir, job.key, job.layout);
      progress = setInterval(tell, 1000);
      return;
    }
    const batch = message as RenderBatch | null;
    if (batch === null) {
      clearInterval(progress);
      tell({ compressed: renderer!.compressed });
      port.close();
      return;
    }
    await renderer!.renderChangedPages(batch.index, batch.names, job.clientDir);
    tell({ batchDone: true });
  }).catch((e: unknown) => {
    clearInterval(progress);
    // An uncaught error ends the thread with it, as the main thread's `error` event.
    setImmediate(() => { throw e; });
  });
});
