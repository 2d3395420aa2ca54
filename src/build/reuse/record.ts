// The one record a release keeps for the next build (`server/record.ndjson`): per profile, in
// username order, its page key and input key (page-reuse.ts), its answer's hash and time
// (answer-times.ts), and the columns an edit build starts from (kept-index.ts), names once; then
// per content file outside `profiles/`, its digest and proving stamp (src/content/file-digests.ts).
// Written and read in lines of at most ROWS_PER_LINE profiles (src/config.ts), so no string or
// object holds every profile's row at once: at 1,000,000 profiles one JSON text of the record would
// pass V8's limit on a string's length.
import fs from 'node:fs';
import type { PageManifest } from './page-reuse.ts';
import type { AnswerTimesRecord } from './answer-times.ts';
import type { KeptIndex } from './kept-index.ts';
import type { FileDigests } from '../../content/file-digests.ts';
import { rowsPerLineFromEnv } from '../../config.ts';

const VERSION = 1;

/** What a release keeps; each part undefined when the build that wrote it had none. */
export interface ReleaseRecord {
  manifest: PageManifest | undefined;
  times: AnswerTimesRecord | undefined;
  kept: KeptIndex | undefined;
  /** The digests of the content files outside `profiles/` the build read. */
  files: FileDigests | undefined;
}

type KeptHead = Omit<KeptIndex, 'names' | 'stamps' | 'digests' | 'avatars' | 'decorations' | 'domains' | 'suspended' | 'previews'>;
interface Head {
  version: number;
  rows: number;
  manifest: Omit<PageManifest, 'names' | 'pages' | 'inputs'> & { inputs: boolean } | null;
  times: Omit<AnswerTimesRecord, 'names' | 'hashes' | 'at'> | null;
  kept: KeptHead | null;
  /** How many content files outside `profiles/` follow the profiles, with the version of their record; null: none recorded. */
  files: { version: number; count: number } | null;
}
/** One profile's row: [name, page, input, answer hash, answer time (index), stamp, digest, avatar, decoration, domain, suspended, preview]. */
type Row = [string, string | null, string | null, string | null, number, string | null, string | null, string | null, string | null, string | null, number, string | null];
/** One content file's row: [file, stamp, digest]. */
type FileRow = [string, string | null, string];

/**
 * Writes the record. The parts list the same profiles (a build keeps a page, an answer and a row of
 * columns for each); the manifest's order is the record's.
 */
export function writeRecord(file: string, record: ReleaseRecord, rowsPerLine = rowsPerLineFromEnv()): void {
  const { manifest, times, kept, files } = record;
  const names = manifest?.names ?? kept?.names ?? times?.names ?? [];
  const timesAt = new Map<string, number>();
  if (times) for (let i = 0; i < times.names.length; i++) timesAt.set(times.names[i]!, i);
  // The kept columns are in the manifest's order whenever a build writes both (username order).
  const keptAt = kept && !sameList(kept.names, names) ? new Map(kept.names.map((n, i) => [n, i])) : undefined;
  const { names: _m, pages: _p, inputs, ...manifestHead } = manifest ?? { names: [], pages: [] };
  const { names: _t, hashes: _h, at: _a, ...timesHead } = times ?? { names: [], hashes: [], at: [] };
  const { names: _k, stamps: _s, digests: _dg, avatars: _av, decorations: _d, domains: _do, suspended: _su, previews: _pr, ...keptHead } = kept ?? { names: [] };
  const head: Head = {
    version: VERSION, rows: names.length,
    manifest: manifest ? { ...(manifestHead as Omit<PageManifest, 'names' | 'pages' | 'inputs'>), inputs: inputs !== undefined } : null,
    times: times ? timesHead as Head['times'] : null,
    kept: kept ? keptHead as KeptHead : null,
    files: files ? { version: files.version, count: files.files.length } : null,
  };
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, `${JSON.stringify(head)}\n`);
    for (let start = 0; start < names.length; start += rowsPerLine) {
      const rows: Row[] = [];
      for (let i = start; i < Math.min(names.length, start + rowsPerLine); i++) {
        const name = names[i]!;
        const t = timesAt.get(name);
        const k = keptAt ? keptAt.get(name) : kept ? i : undefined;
        rows.push([
          name, manifest?.pages[i] ?? null, inputs?.[i] ?? null,
          t === undefined ? null : times!.hashes[t]!, t === undefined ? -1 : times!.at[t]!,
          k === undefined ? null : kept!.stamps[k]!, k === undefined ? null : kept!.digests[k]!, k === undefined ? null : kept!.avatars[k]!, k === undefined ? null : kept!.decorations[k]!,
          k === undefined ? null : kept!.domains[k]!, k === undefined ? 0 : kept!.suspended[k]!, k === undefined ? null : kept!.previews[k]!,
        ]);
      }
      fs.writeSync(fd, `${JSON.stringify(rows)}\n`);
    }
    const n = files?.files.length ?? 0;
    for (let start = 0; start < n; start += rowsPerLine) {
      const rows: FileRow[] = [];
      for (let i = start; i < Math.min(n, start + rowsPerLine); i++) rows.push([files!.files[i]!, files!.stamps[i]!, files!.digests[i]!]);
      fs.writeSync(fd, `${JSON.stringify(rows)}\n`);
    }
  } finally {
    fs.closeSync(fd);
  }
}

const NONE: ReleaseRecord = { manifest: undefined, times: undefined, kept: undefined, files: undefined };

/** The record in `file`, or no parts (none, another version, or a file cut short). */
export function readRecord(file: string): ReleaseRecord {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return NONE; // no release before, or one from an older version: everything is made anew
  }
  try {
    let at = bytes.indexOf(10);
    const head = JSON.parse(bytes.toString('utf8', 0, at)) as Head;
    if (head.version !== VERSION || !Number.isInteger(head.rows)) return NONE;
    const n = head.rows;
    const names = new Array<string>(n);
    const pages = new Array<string>(n);
    const inputs = new Array<string | null>(n);
    const hashes = new Array<string>(n);
    const times = new Array<number>(n);
    const stamps = new Array<string | null>(n);
    const digests = new Array<string | null>(n);
    const avatars = new Array<string | null>(n);
    const decorations = new Array<string | null>(n);
    const domains = new Array<string | null>(n);
    const suspended = new Array<number>(n);
    const previews = new Array<string | null>(n);
    let i = 0;
    while (i < n) {
      const end = bytes.indexOf(10, at + 1);
      if (end < 0) return NONE;
      for (const r of JSON.parse(bytes.toString('utf8', at + 1, end)) as Row[]) {
        if (i >= n) return NONE;
        [names[i], pages[i]!, inputs[i], hashes[i]!, times[i]!, stamps[i], digests[i], avatars[i], decorations[i], domains[i], suspended[i]!, previews[i]] = r as [string, string, string | null, string, number, string | null, string | null, string | null, string | null, string | null, number, string | null];
        i++;
      }
      at = end;
    }
    let files: FileDigests | undefined;
    if (head.files) {
      files = { version: head.files.version, files: [], stamps: [], digests: [] };
      while (files.files.length < head.files.count) {
        const end = bytes.indexOf(10, at + 1);
        if (end < 0) return NONE;
        for (const [file, stamp, digest] of JSON.parse(bytes.toString('utf8', at + 1, end)) as FileRow[]) {
          files.files.push(file);
          files.stamps.push(stamp);
          files.digests.push(digest);
        }
        at = end;
      }
      if (files.files.length !== head.files.count) return NONE;
    }
    return {
      manifest: head.manifest ? { ...head.manifest, names, pages, inputs: head.manifest.inputs ? inputs : undefined } as PageManifest : undefined,
      times: head.times ? { ...head.times, names, hashes, at: times } as AnswerTimesRecord : undefined,
      kept: head.kept ? { ...head.kept, names, stamps, digests, avatars, decorations, domains, suspended, previews } as KeptIndex : undefined,
      files,
    };
  } catch {
    return NONE;
  }
}

const sameList = (a: readonly string[], b: readonly string[]) => a === b || (a.length === b.length && a.every((x, i) => x === b[i]));
