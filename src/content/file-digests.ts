// What a build is made from, by bytes: a digest of each content file's bytes. A file is read and
// hashed again unless its stamp is the one recorded beside its digest, and a stamp is recorded
// only when it proves the bytes (the file changed well before it was taken: RACY_MS), as git's
// index does. A racy stamp so costs one file read again, never a whole record dropped.
import { createHash, hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { RACY_MS, stampOf, type StampList } from './file-stamps.ts';

const VERSION = 1;

/** Columns, in the order of `files`: each file (relative to the content folder, with `/`), its proving stamp or null, its digest. */
export interface FileDigests {
  version: number;
  files: string[];
  stamps: (string | null)[];
  digests: string[];
}

/** The digest of a file that could not be read: never one of bytes, so never the same as a readable one's. */
const UNREADABLE = '!';

/**
 * The digests of `files` (relative to `dir`, with `/`) now: from `previous` where a file's stamp is
 * the one recorded there, else from its bytes. `stamps`: the files' stamps when the caller took
 * them already (in that order), taken before `scannedAt`.
 */
export function digestFiles(
  dir: string, files: readonly string[], previous: FileDigests | undefined, scannedAt = Date.now(), settleMs = RACY_MS, stamps?: StampList,
): FileDigests {
  const known = new Map<string, number>();
  if (previous) for (let i = 0; i < previous.files.length; i++) known.set(previous.files[i]!, i);
  const out: FileDigests = { version: VERSION, files: [...files], stamps: new Array(files.length), digests: new Array(files.length) };
  for (let i = 0; i < files.length; i++) {
    const file = files[i]!;
    const abs = path.join(dir, ...file.split('/'));
    let stamp: string | null;
    let changedMs: number;
    if (stamps) {
      stamp = stamps.stamps[i] ?? null;
      changedMs = stamps.changedMs[i]!;
    } else {
      const s = stampOf(abs);
      stamp = s?.stamp ?? null;
      changedMs = s?.changedMs ?? 0;
    }
    const at = known.get(file);
    const digest = stamp !== null && at !== undefined && previous!.stamps[at] === stamp ? previous!.digests[at]! : digestOfFile(abs);
    out.digests[i] = digest;
    // Read after the stamp was taken: a write since shows in the next stamp, or was read here.
    out.stamps[i] = stamp !== null && changedMs < scannedAt - settleMs ? stamp : null;
  }
  return out;
}

function digestOfFile(file: string): string {
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      return hash('sha1', fs.readFileSync(fd), 'base64url');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return UNREADABLE;
  }
}

/** file → digest of a record. */
export const digestMap = (record: FileDigests): Map<string, string> => new Map(record.files.map((f, i) => [f, record.digests[i]!]));

/** One digest of every file of a record, by name and bytes: equal for equal folders, whatever the stamps. */
export function folderDigest(record: FileDigests): string {
  const order = record.files.map((_, i) => i).sort((a, b) => (record.files[a]! < record.files[b]! ? -1 : 1));
  const h = createHash('sha1');
  for (const i of order) h.update(`${record.files[i]}\0${record.digests[i]}\0`);
  return h.digest('base64url');
}

/** The record if it is this version's and whole (record.ts keeps it), else undefined: every file is read again. */
export function validFileDigests(r: FileDigests | undefined): FileDigests | undefined {
  const n = Array.isArray(r?.files) ? r.files.length : -1;
  return r && r.version === VERSION && Array.isArray(r.stamps) && r.stamps.length === n && Array.isArray(r.digests) && r.digests.length === n ? r : undefined;
}
