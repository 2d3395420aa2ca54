// The one render engine for profile pages: the code `astro build` compiled (kept by
// keep-renderer.ts), run by page-renderer.ts in this thread and in worker threads
// (render-worker.ts), one per core. A first build of new code runs `astro build` beside validating
// the content, keeps its code, then renders every page with it like any later build (../render.ts).
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { SiteIndex } from '../../model/site-index.ts';
import { addStats, emptyStats, type CodingLayout, type CompressStats } from '../files/compress.ts';
import type { KeptRendererKey } from './keep-renderer.ts';
import type { PageRenderer } from './page-renderer.ts';
import type { RenderBatch, RenderWorkerJob, RenderWorkerReport } from './render-worker.ts';

/**
 * Below this many pages, one thread: a worker starts in well under a second and holds its own copy
 * of the index, which pays from a few thousand pages (docs/scale.md, "The render engine").
 */
export const WORKER_MIN_PAGES = 2_000;
/** At most this many threads: each holds the batches it renders (renderBatches). */
export const MAX_THREADS = 4;

/** How many threads render `pages` pages on `cores` cores: `RENDER_THREADS` forces a count. */
export function threadCount(pages: number, env: NodeJS.ProcessEnv = process.env, cores = os.availableParallelism()): number {
  const forced = Number(env.RENDER_THREADS);
  if (Number.isInteger(forced) && forced >= 1) return Math.min(forced, Math.max(1, pages));
  return pages >= WORKER_MIN_PAGES ? Math.min(cores, MAX_THREADS) : 1;
}

/**
 * Above this many pages the build's own thread renders none: its heap holds the whole index, which
 * every full collection marks, and a share of the pages rendered there made such collections
 * frequent. Fresh clones with and without (BENCHMARKS.md): 1,000,000 profiles 594.8 s against
 * 677.8 s (summed peak 5.27 GB against 4.57 GB), 100,000 53.5 s against 56.3 s. At 20,000 no time
 * was gained and the peak grew by a thread's 150 MB, over Hugo's there.
 */
export const OWN_THREAD_MAX_PAGES = 50_000;

/** The pages this thread renders (`own`), and the rest (`others`), which `workers` worker threads render. */
export function renderShares<T>(names: readonly T[], threads: number): { own: T[]; others: T[]; workers: number } {
  const workers = workerThreads(names.length, threads);
  if (workers === threads) return { own: [], others: [...names], workers };
  const [own = [], ...parts] = splitPages(names, workers + 1);
  return { own, others: parts.flat(), workers };
}

/** How many worker threads render `pages` pages in `threads` threads: all of them above OWN_THREAD_MAX_PAGES, else all but this one. */
export const workerThreads = (pages: number, threads: number): number =>
  (threads > 1 && pages > OWN_THREAD_MAX_PAGES ? threads : Math.max(0, Math.min(threads, pages) - 1));

/** `names` in `count` contiguous parts of nearly equal size. */
export function splitPages<T>(names: readonly T[], count: number): T[][] {
  const parts: T[][] = [];
  for (let k = 0; k < count; k++) parts.push(names.slice(Math.floor((k * names.length) / count), Math.floor(((k + 1) * names.length) / count)));
  return parts;
}

/**
 * At most this many pages a batch: a worker holds the users of the batch it renders and of the
 * next, never a share of the whole site (at 1,000,000 profiles half the index was about 1 GB a
 * thread, which each of its full collections marked).
 */
export const BATCH_PAGES = 5_000;

/**
 * `names` in batches for `workers` threads, each with what its pages read of `index`: their users
 * and avatars (a profile page reads nothing else of the index but the site's address). At least
 * four batches a thread, so that threads that render faster take more of them.
 */
export function renderBatches(index: SiteIndex, names: readonly string[], workers: number): RenderBatch[] {
  // One thread in all: no pass over every user of the index for nothing.
  if (names.length === 0) return [];
  const size = Math.max(1, Math.min(BATCH_PAGES, Math.ceil(names.length / (4 * Math.max(1, workers)))));
  const batches: RenderBatch[] = [];
  const batchOf = new Map<string, RenderBatch>();
  for (let i = 0; i < names.length; i += size) {
    const batch: RenderBatch = {
      names: names.slice(i, i + size),
      index: { builtAt: index.builtAt, siteUrl: index.siteUrl, profileCount: index.profileCount, decorationFiles: index.decorationFiles, creators: [], users: [], avatars: [] },
    };
    batches.push(batch);
    for (const name of batch.names) batchOf.set(name, batch);
  }
  for (const user of index.users) batchOf.get(user.username)?.index.users.push(user);
  for (const avatar of index.avatars) batchOf.get(avatar[0])?.index.avatars.push(avatar);
  return batches;
}

/**
 * Render worker threads started before the renderer they run exists: each loads its modules (0.35
 * s of a core at the start of a thread) while the build waits for `astro build` to compile, and
 * opens the renderer as soon as it is told its job (`open`), while this thread renders the pages
 * made from the whole index. Fresh clones at 20,000 profiles: the workers' first page 0.4 s after
 * the compile ended, against 0.7 s when they started after it.
 */
export class RenderWorkers {
  readonly #idle: Worker[] = [];
  /** Threads that failed or ended before they were taken. */
  readonly #ended = new WeakSet<Worker>();
  /** The job each thread was told. */
  readonly #told = new WeakMap<Worker, RenderWorkerJob>();

  constructor(count = 0) {
    for (let k = 0; k < count; k++) this.#idle.push(this.#start());
  }

  #start(): Worker {
    const worker = new Worker(new URL('./render-worker.ts', import.meta.url));
    // A thread that fails before it is taken is not used (`take` starts another, whose failure,
    // if it is the code's, `renderInWorkers` reports); unheard, its error would end the build here.
    worker.on('error', () => this.#ended.add(worker));
    worker.once('exit', () => this.#ended.add(worker));
    return worker;
  }

  /** Tells the threads not taken yet their job, so that they open its renderer now. */
  open(job: RenderWorkerJob): void {
    for (const worker of this.#idle) this.#tell(worker, job);
  }

  /** Posts `job` to `worker` unless it was told one: its first message (render-worker.ts). */
  #tell(worker: Worker, job: RenderWorkerJob): void {
    if (this.#told.has(worker)) return;
    worker.postMessage(job);
    this.#told.set(worker, job);
  }

  /** A thread started before and still running, or a new one, told `job`. */
  take(job: RenderWorkerJob): Worker {
    let worker: Worker | undefined;
    while ((worker = this.#idle.pop()) && (this.#ended.has(worker) || worker.threadId === -1 || !sameJob(this.#told.get(worker) ?? job, job))) void worker.terminate();
    worker ??= this.#start();
    this.#tell(worker, job);
    return worker;
  }

  /** Threads started and not taken yet. */
  get waiting(): number {
    return this.#idle.length;
  }

  /** Ends the threads not taken. */
  close(): void {
    for (const worker of this.#idle.splice(0)) void worker.terminate();
  }
}

const sameJob = (a: RenderWorkerJob, b: RenderWorkerJob): boolean =>
  a.dir === b.dir && a.clientDir === b.clientDir && a.layout === b.layout && a.key.fingerprint === b.key.fingerprint && a.key.target === b.key.target;

/**
 * Renders `batches` in `workers` worker threads with the kept renderer, each thread taking the next
 * batch as it finishes one (and holding one more, so it never waits for the message); resolves with
 * what they compressed when all are written, rejects with the first error once every thread has
 * stopped. `onProgress`: pages written so far, all these threads together. `started`: threads
 * started before (`RenderWorkers`), taken before any new one; the caller closes it.
 */
export async function renderInWorkers(
  job: RenderWorkerJob, batches: RenderBatch[], workers: number, onProgress: (rendered: number) => void = () => {}, started = new RenderWorkers(),
): Promise<CompressStats> {
  const queue = batches.slice().reverse();
  const rendered: number[] = [];
  const compressed = emptyStats();
  let failure: unknown;
  const runs = Array.from({ length: Math.min(workers, batches.length) }, (_, k) => new Promise<void>((resolve) => {
    const worker = started.take(job);
    let inFlight = 0;
    let ended = false;
    const send = () => {
      const batch = failure === undefined ? queue.pop() : undefined;
      if (batch) {
        inFlight++;
        worker.postMessage(batch);
      } else if (inFlight === 0 && !ended) {
        ended = true;
        worker.postMessage(null);
      }
    };
    worker.on('message', (m: RenderWorkerReport) => {
      rendered[k] = m.rendered;
      onProgress(rendered.reduce((a, b) => a + b, 0));
      if (m.batchDone) {
        inFlight--;
        send();
      }
      if (m.compressed) addStats(compressed, m.compressed);
    });
    worker.once('error', (e) => {
      failure ??= e;
      // The others stop at their next batch; this one is gone.
      resolve();
    });
    worker.once('exit', (code) => {
      if (code !== 0 || !ended) failure ??= new Error(`a render worker stopped with exit code ${code}`);
      resolve();
    });
    send();
    send();
  }));
  await Promise.all(runs);
  if (failure !== undefined) throw failure;
  return compressed;
}

export interface ProfileRender {
  /** The kept renderer, opened in this thread; the workers open the same folder. */
  renderer: PageRenderer;
  dir: string;
  key: KeptRendererKey;
  index: SiteIndex;
  names: readonly string[];
  clientDir: string;
  /** How each page's compressed codings are written with it (the renderer was opened so). */
  layout: CodingLayout | undefined;
  /** Pages written so far, all threads together, about once a second. */
  onProgress?: (rendered: number) => void;
  /** Worker threads started before (`RenderWorkers`), used first. */
  started?: RenderWorkers;
}

/**
 * Writes `p/<name>.html` for each of `names`, split between this thread and worker threads.
 * Settles every thread before it throws, so no worker writes on after a failure.
 */
export async function renderProfilePages(job: ProfileRender): Promise<{ threads: number; compressed: CompressStats }> {
  const { own, others, workers } = renderShares(job.names, threadCount(job.names.length));
  let inWorkers = 0;
  const report = () => job.onProgress?.(job.renderer.profilePagesWritten + inWorkers);
  const tick = setInterval(report, 1000);
  try {
    const settled = await Promise.allSettled([
      job.renderer.renderChangedPages(job.index, own, job.clientDir),
      // No batch (one thread in all): no worker starts, and nothing is compressed there.
      renderInWorkers({ dir: job.dir, key: job.key, clientDir: job.clientDir, layout: job.layout }, renderBatches(job.index, others, workers), workers, (n) => { inWorkers = n; }, job.started),
    ]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    report();
    // This thread's renderer counts every call of this build; the workers' only theirs.
    return { threads: workers + (own.length ? 1 : 0), compressed: (settled[1] as PromiseFulfilledResult<CompressStats>).value };
  } finally {
    clearInterval(tick);
  }
}
