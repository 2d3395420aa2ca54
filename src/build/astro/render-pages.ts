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
import type { RenderWorkerJob } from './render-worker.ts';

/**
 * Below this many pages, one thread: a worker starts in well under a second and holds its own copy
 * of the index, which pays from a few thousand pages (docs/scale.md, "The render engine").
 */
export const WORKER_MIN_PAGES = 2_000;
/** At most this many threads: each holds a copy of its share of the index (indexShare). */
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

/** The pages this thread renders (`own`) and those of each worker thread, for `threads` threads in all. */
export function renderShares<T>(names: readonly T[], threads: number): { own: T[]; workers: T[][] } {
  if (threads > 1 && names.length > OWN_THREAD_MAX_PAGES) return { own: [], workers: splitPages(names, threads) };
  const [own = [], ...workers] = splitPages(names, threads);
  return { own, workers };
}

/** `names` in `count` contiguous parts of nearly equal size. */
export function splitPages<T>(names: readonly T[], count: number): T[][] {
  const parts: T[][] = [];
  for (let k = 0; k < count; k++) parts.push(names.slice(Math.floor((k * names.length) / count), Math.floor(((k + 1) * names.length) / count)));
  return parts;
}

/**
 * Renders `job.names`' profile pages in a worker thread with the kept renderer; resolves when all
 * are written, rejects with the worker's error. `onProgress`: pages written so far.
 */
export function renderInWorker(job: RenderWorkerJob, onProgress: (rendered: number) => void = () => {}): Promise<CompressStats> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./render-worker.ts', import.meta.url), { workerData: job });
    let compressed = emptyStats();
    worker.on('message', (m: { rendered: number; compressed?: CompressStats }) => {
      onProgress(m.rendered);
      if (m.compressed) compressed = m.compressed;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve(compressed) : reject(new Error(`a render worker stopped with exit code ${code}`))));
  });
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
}

/**
 * What a render thread needs of `index` for the pages of `names`: their users and avatars (a profile
 * page reads nothing else of the index but the site's address). A thread's copy then grows with its
 * share, not with the site: at 1,000,000 profiles a copy of the whole index was about 2 GB a thread.
 */
export function indexShare(index: SiteIndex, names: readonly string[]): SiteIndex {
  const wanted = new Set(names);
  return {
    builtAt: index.builtAt, siteUrl: index.siteUrl, profileCount: index.profileCount, decorationFiles: index.decorationFiles, creators: [],
    users: index.users.filter((u) => wanted.has(u.username)),
    avatars: index.avatars.filter(([name]) => wanted.has(name)),
  };
}

/**
 * Writes `p/<name>.html` for each of `names`, split between this thread and worker threads.
 * Settles every thread before it throws, so no worker writes on after a failure.
 */
export async function renderProfilePages(job: ProfileRender): Promise<{ threads: number; compressed: CompressStats }> {
  const { own, workers: others } = renderShares(job.names, threadCount(job.names.length));
  const done = others.map(() => 0);
  const report = () => job.onProgress?.(job.renderer.profilePagesWritten + done.reduce((a, b) => a + b, 0));
  const tick = setInterval(report, 1000);
  try {
    const settled = await Promise.allSettled([
      job.renderer.renderChangedPages(job.index, own, job.clientDir),
      ...others.map((names, k) => renderInWorker({ dir: job.dir, key: job.key, index: indexShare(job.index, names), names, clientDir: job.clientDir, layout: job.layout }, (n) => { done[k] = n; })),
    ]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    report();
    // This thread's renderer counts every call of this build; the workers' only theirs.
    const compressed = emptyStats();
    for (const r of settled.slice(1)) addStats(compressed, (r as PromiseFulfilledResult<CompressStats>).value);
    return { threads: others.length + (own.length ? 1 : 0), compressed };
  } finally {
    clearInterval(tick);
  }
}
