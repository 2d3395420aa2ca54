// Rendering many profile pages on every core. Astro renders pages one thread at a time, and at
// 100,000 profiles rendering is most of a cold build. Above SHARD_MIN_PAGES the build splits the
// pages to render into shards: this process renders one with Astro, and each other shard is a
// separate process (src/build/render-shard-process.ts) running the same Astro build on the same code, with
// only its own profile pages. Their `p/*.html` files are then moved into the build. The pages are
// the same bytes either way: same code, same config, same data (test/build/render-shards.test.ts).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SiteIndex } from '../model/site-index.ts';
import type { RenderWorkerJob } from './render-worker.ts';

/** Below this many pages to render, one process: a second Astro build costs ~5 s and ~500 MB. */
export const SHARD_MIN_PAGES = 40_000;
/**
 * With a kept renderer (page-renderer.ts), a share is a worker thread instead: it starts in well
 * under a second and holds little more than its copy of the index, so it pays from a few thousand pages.
 */
export const WORKER_MIN_PAGES = 2_000;
/** At most this many processes: each holds an Astro build's memory. */
export const MAX_SHARDS = 4;

/** How many processes render `pages` pages on `cores` cores: `RENDER_SHARDS` forces a count. */
export function shardCount(pages: number, env: NodeJS.ProcessEnv = process.env, cores = os.availableParallelism(), minPages = SHARD_MIN_PAGES): number {
  const forced = Number(env.RENDER_SHARDS);
  if (Number.isInteger(forced) && forced >= 1) return Math.min(forced, Math.max(1, pages));
  return pages >= minPages ? Math.min(cores, MAX_SHARDS) : 1;
}

/**
 * Renders `job.names`' profile pages in a worker thread with the kept renderer; resolves when all
 * are written, rejects with the worker's error. `onProgress`: pages written so far.
 */
export function renderInWorker(job: RenderWorkerJob, onProgress: (rendered: number) => void = () => {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./render-worker.ts', import.meta.url), { workerData: job });
    worker.on('message', (m: { rendered: number }) => onProgress(m.rendered));
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`a render worker stopped with exit code ${code}`))));
  });
}

/** `names` in `count` contiguous parts of nearly equal size. */
export function splitPages<T>(names: readonly T[], count: number): T[][] {
  const parts: T[][] = [];
  for (let k = 0; k < count; k++) parts.push(names.slice(Math.floor((k * names.length) / count), Math.floor(((k + 1) * names.length) / count)));
  return parts;
}

/** What the build hands a shard process: the public index (never the YAML) and its pages. */
export interface ShardJob {
  index: SiteIndex;
  render: string[];
}

/** Pids of the shard processes running now (the fault hook names them: faults.ts). */
export const runningShards = new Set<number>();

export interface ShardResult {
  outDir: string;
  maxRssKb: number;
}

/**
 * Starts a shard process building into `outDir` and resolves when it has finished; rejects with its
 * output when it fails. The job file sits beside `outDir` and is removed after.
 */
export function runShard(root: string, job: ShardJob, outDir: string, shard: number, onProgress: (rendered: number) => void = () => {}): Promise<ShardResult> {
  const jobFile = `${outDir}.job.json`;
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(outDir), { recursive: true });
  fs.writeFileSync(jobFile, JSON.stringify(job));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, path.join(root, 'src', 'build', 'render-shard-process.ts'), jobFile, outDir, String(shard)], {
      // An IPC channel the child watches: when this process dies, even by SIGKILL, the channel
      // closes and the shard stops instead of rendering on for nobody (render-shard-process.ts).
      cwd: root, stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    if (child.pid) runningShards.add(child.pid);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      const text = d.toString();
      out += text;
      for (const m of text.matchAll(/^PROGRESS (\d+)$/gm)) onProgress(Number(m[1]));
    });
    child.stderr!.on('data', (d) => { out += d; });
    child.once('error', reject);
    child.once('exit', (code) => {
      runningShards.delete(child.pid!);
      fs.rmSync(jobFile, { force: true });
      const report = /^SHARD (\{.*\})$/m.exec(out);
      if (code === 0 && report) resolve({ outDir, maxRssKb: (JSON.parse(report[1]!) as { maxRssKb: number }).maxRssKb });
      else reject(new Error(`render shard ${shard} failed (exit code ${code}):\n${out.slice(-4000)}`));
    });
  });
}

/** Moves every page of `fromDir` into `toDir`: renames, on the same file system. Returns how many. */
export function movePages(fromDir: string, toDir: string): number {
  fs.mkdirSync(toDir, { recursive: true });
  let moved = 0;
  for (const name of fs.readdirSync(fromDir)) {
    fs.renameSync(path.join(fromDir, name), path.join(toDir, name));
    moved++;
  }
  return moved;
}
