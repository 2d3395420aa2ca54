// What `writeUserFiles` (write-build.ts) does with each batch of user files, in its thread
// (user-files-worker.ts) or, for a few users, in the build's own: writes them with synchronous
// calls, beside the rendering and out of the thread pool Astro's own reads and writes wait in. A
// file that exists (recycled, see `recycleUserFiles`) is overwritten in place, which on disk is many
// times cheaper than creating it anew (docs/scale.md, commit e86c4ee); one with the same bytes is
// left as it is, with its compressed codings (compress.ts), which are made again when the bytes
// change; with a `layout`, written with the file (compress.ts), so the build's idle core
// compresses them while `astro build` compiles.
import fs from 'node:fs';
import path from 'node:path';
import { ENCODINGS } from '../../http/headers.ts';
import { identityOf, isPacked } from '../../release/coded-file.ts';
import { USERS_STEP, diskFullAt } from '../faults.ts';
import { NO_SIBLINGS, codedFile, emptyStats, type CodingLayout, type CompressStats } from './compress.ts';

export interface UserFilesBatch {
  names: string[];
  /** End offset of each name's bytes in `bytes`; the first starts at 0. */
  ends: number[];
  bytes: ArrayBuffer;
}

/** Where a batch goes: the staging folder; `rel`: the user files' folder in the release, for compress.ts's kinds; `layout`: how codings are kept, if any. */
export interface UserFilesTarget {
  dir: string;
  rel: string;
  layout: CodingLayout | undefined;
}

/** Writes one batch; returns how many files and what was compressed. */
export function writeUserBatch(target: UserFilesTarget, batch: UserFilesBatch): { written: number; compressed: CompressStats } {
  diskFullAt(USERS_STEP);
  const compressed = emptyStats();
  let start = 0;
  for (let i = 0; i < batch.names.length; i++) {
    const end = batch.ends[i]!;
    const file = path.join(target.dir, batch.names[i]!);
    const bytes = new Uint8Array(batch.bytes, start, end - start);
    writeInPlace(file, `${target.rel}${batch.names[i]}`, bytes, target.layout, compressed);
    start = end;
  }
  return { written: batch.names.length, compressed };
}

/**
 * Writes `bytes` and their codings as the whole file: over the old bytes when it exists and
 * differs, then cut to length. One open for a new file and an old one alike: trying the old one
 * first made an exception for each new file (0.3 s of the writing thread at 20,000 profiles).
 */
function writeInPlace(file: string, rel: string, bytes: Uint8Array, layout: CodingLayout | undefined, compressed: CompressStats): void {
  let fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o666);
  try {
    // An empty file is new (or was empty: no codings beside it either).
    const stat = fs.fstatSync(fd);
    const had = stat.size > 0;
    if (had && sameBytes(fd, stat.size, bytes, layout)) return;
    // Linked into another release too (layers.ts `gatherLayers`), it is that release's file as well:
    // replaced by a new one, never written into.
    let size = stat.size;
    if (stat.nlink > 1) {
      fs.closeSync(fd);
      fs.unlinkSync(file);
      fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o666);
      size = 0;
    }
    const coded = layout ? codedFile(rel, bytes, layout, compressed) : { body: bytes, siblings: NO_SIBLINGS };
    const body = coded.body;
    for (let at = 0; at < body.length;) at += fs.writeSync(fd, body, at, body.length - at, at);
    if (size > body.length) fs.ftruncateSync(fd, body.length);
    // Compressed siblings of the old bytes, then the new ones'.
    if (had) for (const suffix of SIBLING_SUFFIXES) fs.rmSync(file + suffix, { force: true });
    for (const [suffix, sibling] of coded.siblings) fs.writeFileSync(file + suffix, sibling);
  } finally {
    fs.closeSync(fd);
  }
}

const SIBLING_SUFFIXES = ENCODINGS.map((e) => e.suffix);
const old = Buffer.allocUnsafe(64 * 1024);

/**
 * Whether the open file holds `bytes` (a user file is a few KB: one read): with its codings inside
 * where the layout packs them, exactly elsewhere, so that no static release keeps a file packed by
 * a Node one. A plain file where the layout packs them (left by a build without codings) is written
 * again, packed: every answer is then as the compress step would leave it, which need not read the
 * million of them again (60 s at 1,000,000 profiles; write.ts).
 */
function sameBytes(fd: number, size: number, bytes: Uint8Array, layout: CodingLayout | undefined): boolean {
  if (size < bytes.length || size > old.length || (layout !== 'packed' && size !== bytes.length)) return false;
  let at = 0;
  for (let n; at < size && (n = fs.readSync(fd, old, at, size - at, at)) > 0;) at += n;
  if (at !== size) return false;
  const read = old.subarray(0, at);
  if (layout === 'packed' && !isPacked(read)) return false;
  const stored = layout === 'packed' ? identityOf(read) : read;
  return Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).equals(bytes);
}
