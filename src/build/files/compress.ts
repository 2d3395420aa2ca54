// Compressed codings: a brotli and a gzip copy of each file of a release worth compressing
// (headers.ts `isCompressible`), for the Node server (src/api/handler.ts `fileAnswer`) and nginx's
// `gzip_static` to send as they are: inside the file for `node` (src/release/coded-file.ts), as
// `<file>.br` and `<file>.gz` siblings for `static`, none for Cloudflare, which compresses itself
// and counts every file against its limit per version (`codingLayoutOf`). Pages are compressed by
// the threads that render them (src/build/astro/page-renderer.ts), answers by the thread that
// writes them, the rest once everything else is written, by worker threads; levels and the rule of
// what is worth it are measured in docs/scale.md ("Compression").
//
// A file that has its codings is compressed already (a packed head, or siblings beside it): each
// writer that rewrites a file of a folder holding siblings drops them (user-files.ts,
// render.ts `renderEdit`, write-build.ts `writeEditFiles`), and files linked from another release
// bring theirs along (page-reuse.ts `linkPages`). In a layered release a sibling lives where its
// file does (layers.ts).
import fs from 'node:fs';
import os from 'node:os';
import zlib from 'node:zlib';
import { Worker } from 'node:worker_threads';
import type { DeployTarget } from '../../config.ts';
import { ENCODINGS, isCompressible } from '../../http/headers.ts';
import { listFiles } from '../../release/layers.ts';
import { isPacked, packCodings } from '../../release/coded-file.ts';

/**
 * Where a release keeps the compressed codings of a file: `packed` inside the file itself
 * (src/release/coded-file.ts), for the Node server, one inode a file instead of three; `siblings`
 * beside it as `<file>.br` and `<file>.gz`, for static hosts (nginx's `gzip_static`). Cloudflare
 * compresses itself: none; nor where the operator says the host does (`PRECOMPRESS=0`, config.ts).
 */
export type CodingLayout = 'packed' | 'siblings';
export const codingLayoutOf = (target: DeployTarget, precompress = true): CodingLayout | undefined =>
  !precompress ? undefined : target === 'node' ? 'packed' : target === 'static' ? 'siblings' : undefined;

/**
 * Brotli quality 5 and gzip level 6: on the pages and answers of 20,000 profiles, quality 11 saved
 * 4 points more of the bytes for 40 times the time (6.3 ms a page against 0.16), 9 nothing more
 * than 5 on files this small, and gzip 9 the same bytes as 6 for twice the time.
 */
export const BROTLI_QUALITY = 5;
export const GZIP_LEVEL = 6;
/**
 * The smallest brotli window that holds the whole file (its size plus brotli's 16 bytes), as the
 * `brotli` command picks it: a larger one compresses no better, and setting it up costs. On the
 * pages and answers of 100,000 profiles: 103 against 126 µs a page, 36 against 43 µs an answer,
 * the same bytes within 0.3%.
 */
export const brotliWindowBits = (size: number): number =>
  Math.min(zlib.constants.BROTLI_MAX_WINDOW_BITS, Math.max(zlib.constants.BROTLI_MIN_WINDOW_BITS, Math.ceil(Math.log2(size + 16))));
/** Smaller files are sent as they are: a few hundred bytes fit one packet either way. */
export const MIN_COMPRESSED_BYTES = 256;
/** A sibling is written only when it is at most this share of its file: a saving under 10% is not worth the file. */
export const MAX_COMPRESSED_RATIO = 0.9;

/** What kind of file a compressed one is, for the build's figures. */
export function compressedKind(file: string): string {
  if (file.startsWith('p/')) return 'profile pages';
  if (file.startsWith('api/v1/users/')) return 'user answers';
  const dot = file.lastIndexOf('.');
  const ext = dot > file.lastIndexOf('/') ? file.slice(dot + 1) : 'json';
  return ext === 'html' ? 'other pages' : ext;
}

/** The siblings of `bytes` worth writing, by suffix (`.br`, `.gz`); none for a file too small. */
export function compressedSiblings(bytes: Uint8Array): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (bytes.byteLength < MIN_COMPRESSED_BYTES) return out;
  // zlib's output chunks the size of the file, not 16 KB: each call took a 16 KB piece of Buffer's
  // pool (64 KB in Node 24), which its result kept alive. Same bytes; 20,000 and 100,000 profiles
  // (fresh clones, alternating): 3-5% and 1.5% less time.
  const chunkSize = Math.max(zlib.constants.Z_MIN_CHUNK, bytes.byteLength);
  const br = zlib.brotliCompressSync(bytes, {
    chunkSize,
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
      [zlib.constants.BROTLI_PARAM_LGWIN]: brotliWindowBits(bytes.byteLength),
    },
  });
  const gz = zlib.gzipSync(bytes, { level: GZIP_LEVEL, chunkSize });
  for (const [encoding, body] of [[ENCODINGS[0]!, br], [ENCODINGS[1]!, gz]] as const) {
    if (body.byteLength <= bytes.byteLength * MAX_COMPRESSED_RATIO) out.set(encoding.suffix, body);
  }
  return out;
}

/** Bytes before and after, per kind of file (`compressedKind`) and in all. */
export interface CompressStats {
  files: number;
  bytes: number;
  br: number;
  gz: number;
  byKind: Record<string, { files: number; bytes: number; br: number; gz: number }>;
}

export const emptyStats = (): CompressStats => ({ files: 0, bytes: 0, br: 0, gz: 0, byKind: {} });

/** Adds `b` into `a`. */
export function addStats(a: CompressStats, b: CompressStats): void {
  a.files += b.files; a.bytes += b.bytes; a.br += b.br; a.gz += b.gz;
  for (const [kind, s] of Object.entries(b.byKind)) {
    const t = (a.byKind[kind] ??= { files: 0, bytes: 0, br: 0, gz: 0 });
    t.files += s.files; t.bytes += s.bytes; t.br += s.br; t.gz += s.gz;
  }
}

/**
 * What `file` (its path in the release) holds for `bytes` as `layout` keeps codings, and the
 * siblings to write beside it; the figures counted into `stats`. The render threads, the user
 * files' thread and the compress step's threads all write through here.
 */
export function codedFile(file: string, bytes: Uint8Array, layout: CodingLayout, stats: CompressStats): CodedFile {
  const siblings = compressedSiblings(bytes);
  const kind = (stats.byKind[compressedKind(file)] ??= { files: 0, bytes: 0, br: 0, gz: 0 });
  const br = siblings.get('.br')?.byteLength ?? bytes.byteLength;
  const gz = siblings.get('.gz')?.byteLength ?? bytes.byteLength;
  kind.files++; kind.bytes += bytes.byteLength; kind.br += br; kind.gz += gz;
  stats.files++; stats.bytes += bytes.byteLength; stats.br += br; stats.gz += gz;
  return layout === 'packed' ? { body: packCodings(bytes, siblings), siblings: NO_SIBLINGS } : { body: bytes, siblings };
}

/** What a file holds, and the siblings beside it. */
export interface CodedFile {
  body: Uint8Array;
  siblings: ReadonlyMap<string, Buffer>;
}
/** A file without siblings (packed, or not compressed), shared rather than made per file. */
export const NO_SIBLINGS: ReadonlyMap<string, Buffer> = new Map();

/** Writes `bytes` to `path` (`file`: its path in the release) with its codings as `layout` keeps them, for a file worth compressing. */
export function writeCoded(path: string, file: string, bytes: Uint8Array, layout: CodingLayout | undefined, stats: CompressStats): void {
  writeCodedFile(path, !layout || !isCompressible(file) ? { body: bytes, siblings: NO_SIBLINGS } : codedFile(file, bytes, layout, stats));
}

/**
 * Writes `coded` at `path`: the file unless `written` is already there, then its siblings. A file
 * rewritten (packed) is replaced, not written into: it may be a hard link of a served release's.
 */
export function writeCodedFile(path: string, coded: CodedFile, written?: Uint8Array): void {
  if (written !== undefined && coded.body !== written) fs.rmSync(path, { force: true });
  if (coded.body !== written) fs.writeFileSync(path, coded.body);
  for (const [suffix, body] of coded.siblings) fs.writeFileSync(path + suffix, body);
}

/** Files a compress worker is sent at once: a few MB. */
const FILES_PER_BATCH = 256;

/** One batch sent to compress-worker.ts: files of `dir` (relative, with `/`). */
export interface CompressBatch {
  dir: string;
  files: string[];
  layout: CodingLayout;
}

/**
 * Writes the compressed codings of the files of `clientDir` (its own files, not those a layered
 * release reads from others) that are worth compressing and have none yet, as `layout` keeps them,
 * in worker threads, one per core. `compressedAsWritten`: folders whose writers compressed every
 * file (the user answers, the pages the kept renderer wrote), not even listed; `linked`: files
 * linked from a release that compressed them (an edit build's, render.ts `renderEdit`), not read.
 * Returns what it compressed: a file whose codings saved too little counts with its own size for both.
 */
export async function compressRelease(
  clientDir: string, layout: CodingLayout, compressedAsWritten: readonly string[] = [], linked: ReadonlySet<string> = new Set(), threads = os.availableParallelism(),
): Promise<CompressStats> {
  const files = listFiles(clientDir, compressedAsWritten);
  const present = new Set(files);
  // A packed file is told by its head, which the threads read: siblings by their names.
  const todo = files.filter((f) => isCompressible(f) && !linked.has(f) && (layout === 'packed' || !ENCODINGS.some((e) => present.has(f + e.suffix))));
  const stats = emptyStats();
  if (!todo.length) return stats;
  // A batch's worth of files (a small site, an edit): this thread, since a thread takes longer to start (~70 ms).
  if (todo.length <= FILES_PER_BATCH) {
    addStats(stats, compressBatch({ dir: clientDir, files: todo, layout }));
    return stats;
  }
  const batches = interleavedBatches(todo);
  const workers = Array.from({ length: Math.min(threads, batches.length) }, () => new Worker(new URL('./compress-worker.ts', import.meta.url)));
  try {
    await Promise.all(workers.map((worker) => new Promise<void>((resolve, reject) => {
      const next = () => {
        const files = batches.shift();
        if (!files) return resolve();
        worker.postMessage({ dir: clientDir, files, layout } satisfies CompressBatch);
      };
      worker.on('message', (done: CompressStats) => { addStats(stats, done); next(); });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`a compress thread stopped (exit code ${code})`)));
      next();
    })));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return stats;
}

/** Compresses the files of one batch that have no codings yet, each with one synchronous call; returns what it compressed. */
export function compressBatch({ dir, files, layout }: CompressBatch): CompressStats {
  const stats = emptyStats();
  for (const file of files) {
    const at = `${dir}/${file}`;
    const bytes = fs.readFileSync(at);
    if (isPacked(bytes)) continue;
    // Written already: only what packing made of it, or its siblings.
    writeCodedFile(at, codedFile(file, bytes, layout, stats), bytes);
  }
  return stats;
}

/**
 * `files` in batches, those of different folders taken in turn: a file system creates the files of
 * one folder one at a time (ext4 locks the folder), so threads each in a folder of their own (the
 * pages, the user answers) create theirs side by side.
 */
function interleavedBatches(files: string[]): string[][] {
  const byDir = new Map<string, string[][]>();
  for (const f of files) {
    const dir = f.slice(0, f.lastIndexOf('/') + 1);
    let list = byDir.get(dir);
    if (!list) byDir.set(dir, list = [[]]);
    if (list.at(-1)!.length === FILES_PER_BATCH) list.push([]);
    list.at(-1)!.push(f);
  }
  const queues = [...byDir.values()];
  const out: string[][] = [];
  for (let i = 0; out.length < queues.reduce((n, q) => n + q.length, 0); i++) for (const q of queues) if (i < q.length) out.push(q[i]!);
  return out;
}

/** `stats` as a line of the build's output. */
export function describeStats(stats: CompressStats): string {
  const pct = (n: number, of: number) => `${of ? Math.round((1 - n / of) * 100) : 0}%`;
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  return `${stats.files} files, ${mb(stats.bytes)}: brotli ${mb(stats.br)} (-${pct(stats.br, stats.bytes)}), gzip ${mb(stats.gz)} (-${pct(stats.gz, stats.bytes)})`;
}
