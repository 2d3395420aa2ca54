// The one record a release keeps for the next build (`server/record.ndjson`): per profile, in
// username order, its page key and input key (page-reuse.ts), its answer's hash and time
// (answer-times.ts), and the columns an edit build starts from (kept-index.ts), names once; then
// per content file outside `profiles/`, its digest and proving stamp (src/content/file-digests.ts).
// Written and read in lines of at most ROWS_PER_LINE profiles (src/content/json-lines.ts), cut where
// the names say (`recordLineSizes`), so no string holds every profile's row: at 1,000,000 profiles
// one JSON text of the record would pass V8's limit on a string's length. A line holds its rows
// column by column (an array of each column's values): at 1,000,000 profiles V8 parses that in 30%
// less time than an array per row, and makes no million short-lived arrays (docs/scale.md). Its
// keys (pages', inputs', answers') are bytes (key-column.ts), a line's column of them one base64 text.
import { hash } from 'node:crypto';
import fs from 'node:fs';
import { copyLines, readJsonLines, rowsPerLineFromEnv, writeJsonLine, writeJsonLines, type LineAt } from '../../content/json-lines.ts';
import type { PageManifest } from './page-reuse.ts';
import type { AnswerTimesRecord } from './answer-times.ts';
import type { KeptIndex } from './kept-index.ts';
import type { FileDigests } from '../../content/file-digests.ts';
import { runStarts, runStartsAfter, type RunSizes } from '../../model/content-runs.ts';
import { KeyColumn } from './key-column.ts';

// 2: lines column by column; 16-character keys (rowKey); stamps in base 36 (file-stamps.ts). 3: keys in base64 (key-column.ts).
const VERSION = 3;

/**
 * A key the record keeps for each profile (a page's, an input's, an answer's): 96 bits of SHA-1 in
 * 16 characters. A key is only ever compared with the same profile's key of the build before, where
 * 96 bits make a miss 1 in 10^28; at 1,000,000 profiles the 27 characters of the whole digest were
 * a third of the record's bytes, and reading the record is most of an edit build's time (docs/scale.md).
 */
export const rowKey = (data: Uint8Array | string): string => hash('sha1', data, 'buffer').toString('base64url', 0, 12);

/** What a release keeps; each part undefined when the build that wrote it had none. */
export interface ReleaseRecord {
  manifest: PageManifest | undefined;
  times: AnswerTimesRecord | undefined;
  kept: KeptIndex | undefined;
  /** The digests of the content files outside `profiles/` the build read. */
  files: FileDigests | undefined;
  /** Where its rows were read from, for the next record to copy the lines it leaves as they were (`writeRecord`). */
  source?: RecordSource;
}

/** A record file's lines of profile rows, where each is and what it held, as read. */
interface RecordSource {
  file: string;
  /** Each line of profile rows: where it is in the file, its first row, and how many. */
  lines: { at: LineAt; first: number; count: number }[];
  /** The rows as read, column by column: the arrays the record's parts hold. */
  columns: Columns;
  /** The answer times' distinct timestamps, which rows name by index. */
  timestamps: readonly string[];
  /** The most rows a line held when it was written (`rowsPerLineFromEnv`); undefined in a record that did not say. */
  perLine: number | undefined;
}
type Columns = {
  names: string[]; pages: KeyColumn; inputs: KeyColumn; hashes: KeyColumn; at: number[]; stamps: (string | null)[]; digests: (string | null)[];
  avatars: (string | null)[]; decorations: (string | null)[]; domains: (string | null)[]; suspended: number[]; previews: (string | null)[];
};

type KeptHead = Omit<KeptIndex, 'names' | 'stamps' | 'digests' | 'avatars' | 'decorations' | 'domains' | 'suspended' | 'previews'>;
interface Head {
  version: number;
  rows: number;
  manifest: Omit<PageManifest, 'names' | 'pages' | 'inputs'> & { inputs: boolean } | null;
  times: Omit<AnswerTimesRecord, 'names' | 'hashes' | 'at'> | null;
  kept: KeptHead | null;
  /** How many content files outside `profiles/` follow the profiles, with the version of their record; null: none recorded. */
  files: { version: number; count: number } | null;
  /** The most rows a line holds (the next record cuts its lines from these when it holds as many). */
  perLine?: number;
}
/**
 * The columns of a line of profile rows: names, page keys, input keys, answer hashes (each a base64
 * text of their keys, `KeyColumn.toBase64`), answer times (index), stamps, digests, avatars,
 * decorations, domains, suspended, previews.
 */
const ROW_LENGTH = 12;
/** The columns that hold keys. */
const KEYS = [1, 2, 3];
/** One content file's row: [file, stamp, digest]. */
type FileRow = [string, string | null, string];

/**
 * Writes the record. The parts list the same profiles (a build keeps a page, an answer and a row of
 * columns for each); the manifest's order is the record's. `served`: the record of the release it
 * follows, as read; a line of rows that would be the same bytes as that record's line is copied
 * from its file, not made again (an edit at 1,000,000 profiles changes one line of a hundred).
 * Returns what `readRecord(file)` will give, when every part is there in the manifest's order (a
 * build's are): the next build need not read the file (2 s at 1,000,000 profiles). Its arrays are
 * then `record`'s, frozen.
 */
export function writeRecord(file: string, record: ReleaseRecord, served?: ReleaseRecord): ReleaseRecord | undefined {
  const { manifest, times, kept, files } = record;
  const names = manifest?.names ?? kept?.names ?? times?.names ?? [];
  // The answer times and the kept columns are in the manifest's order whenever a build writes them
  // (username order): a Map of every name only when they are not (at 1,000,000 names, 0.4 s each).
  const timesAt = times && !sameList(times.names, names) ? new Map(times.names.map((n, i) => [n, i])) : undefined;
  const keptAt = kept && !sameList(kept.names, names) ? new Map(kept.names.map((n, i) => [n, i])) : undefined;
  const { names: _m, pages: _p, inputs, ...manifestHead } = manifest ?? { names: [], pages: [] };
  const { names: _t, hashes: _h, at: _a, ...timesHead } = times ?? { names: [], hashes: [], at: [] };
  const { names: _k, stamps: _s, digests: _dg, avatars: _av, decorations: _d, domains: _do, suspended: _su, previews: _pr, ...keptHead } = kept ?? { names: [] };
  const perLine = rowsPerLineFromEnv();
  const head: Head = {
    version: VERSION, rows: names.length, perLine,
    manifest: manifest ? { ...(manifestHead as Omit<PageManifest, 'names' | 'pages' | 'inputs'>), inputs: inputs !== undefined } : null,
    times: times ? timesHead as Head['times'] : null,
    kept: kept ? keptHead as KeptHead : null,
    files: files ? { version: files.version, count: files.files.length } : null,
  };
  // Every column in the names' order: a part's own column where it is (a build's are), else its
  // values by place; a missing part's is its empty value.
  const n = names.length;
  const placesOf = (at: Map<string, number> | undefined) => at && Int32Array.from(names, (name) => at.get(name) ?? -1);
  const timesPlaces = placesOf(timesAt);
  const keptPlaces = placesOf(keptAt);
  const byPlace = <T,>(values: readonly T[] | undefined, places: Int32Array | undefined, empty: T): readonly T[] =>
    !values ? new Array<T>(n).fill(empty) : places ? Array.from(places, (j) => (j < 0 ? empty : values[j]!)) : values;
  const keys = (column: KeyColumn | undefined, places?: Int32Array) => (!column ? new KeyColumn(n) : places ? column.gather(places) : column);
  const pages = keys(manifest?.pages);
  const inputKeys = keys(inputs);
  const hashes = keys(times?.hashes, timesPlaces);
  const at = byPlace(times?.at, timesPlaces, -1);
  const keptColumn = <T,>(column: readonly T[] | undefined, empty: T) => byPlace(column, keptPlaces, empty);
  const plain: readonly (readonly unknown[])[] = [
    names, [], [], [], at, keptColumn(kept?.stamps, null), keptColumn(kept?.digests, null), keptColumn(kept?.avatars, null),
    keptColumn(kept?.decorations, null), keptColumn(kept?.domains, null), keptColumn(kept?.suspended, 0), keptColumn(kept?.previews, null),
  ];
  const keyed = [undefined, pages, inputKeys, hashes];
  /** Rows `first` to `first + count` as a line holds them: column by column, the keys as base64. */
  const lineOf = (first: number, count: number): unknown[] => {
    const line = new Array<unknown>(ROW_LENGTH);
    for (let c = 0; c < ROW_LENGTH; c++) {
      const key = keyed[c];
      if (key) {
        line[c] = key.toBase64(first, count);
        continue;
      }
      // A loop, not `slice`: on a frozen array (a read record's) V8's array builtins take a slow path.
      const from = plain[c]!;
      const to = new Array<unknown>(count);
      for (let i = 0; i < count; i++) to[i] = from[first + i] ?? null;
      line[c] = to;
    }
    return line;
  };
  const source = served?.source;
  // A served line is copied when each of its rows is this record's, value for value, and each
  // timestamp a row names by index is the same string at that index.
  const sameTime = source && times && !timesAt && !keptAt ? times.timestamps.map((t, k) => t === source.timestamps[k]) : undefined;
  /**
   * Whether rows `first` to `end` are the served record's from row `from` on, compared column by
   * column (a column that is the served one's own array, at the same place, is the same).
   */
  const sameRows = (first: number, end: number, from: number): boolean => {
    const c = source!.columns;
    const shift = from - first;
    if (end + shift > c.names.length) return false;
    const same = (ours: readonly unknown[], theirs: readonly unknown[]) => {
      if (ours === theirs && shift === 0) return true;
      for (let i = first; i < end; i++) if ((ours[i] ?? null) !== theirs[i + shift]) return false;
      return true;
    };
    const sameKeys = (ours: KeyColumn, theirs: KeyColumn) => (ours === theirs && shift === 0) || ours.sameRows(first, end, theirs, from);
    if (!same(names, c.names) || !sameKeys(pages, c.pages) || !sameKeys(inputKeys, c.inputs) || !sameKeys(hashes, c.hashes) || !same(at, c.at)) return false;
    if (times) for (let i = first; i < end; i++) if (!sameTime![at[i]!]) return false;
    return same(plain[5]!, c.stamps) && same(plain[6]!, c.digests) && same(plain[7]!, c.avatars) && same(plain[8]!, c.decorations)
      && same(plain[9]!, c.domains) && same(plain[10]!, c.suspended) && same(plain[11]!, c.previews);
  };
  // The served lines by their first name: a line whose rows a name added or removed before it moved is still copied.
  const servedLine = new Map(sameTime ? source!.lines.map((l) => [source!.columns.names[l.first]!, l]) : []);
  // Cut where the served record's lines were, but around the names that came or went (content-runs.ts).
  const sizes = recordLineSizes(perLine);
  const starts = source?.perLine === perLine ? runStartsAfter(names, sizes, { keys: source.columns.names, starts: source.lines.map((l) => l.first) }) : runStarts(names, sizes);
  const fd = fs.openSync(file, 'w');
  let from: number | undefined;
  /** Where each line of rows went: the written record's `source`, as readRecord finds it. */
  const lines: RecordSource['lines'] = [];
  try {
    let offset = writeJsonLine(fd, head);
    let buffer: Buffer | undefined;
    for (let line = 0; line < starts.length; line++) {
      const first = starts[line]!;
      const count = (starts[line + 1] ?? names.length) - first;
      const theirs = servedLine.get(names[first]!);
      let bytes: number;
      if (theirs !== undefined && theirs.count === count && sameRows(first, first + count, theirs.first)) {
        from ??= fs.openSync(source!.file, 'r');
        buffer = copyLines(fd, from, theirs.at, buffer);
        bytes = theirs.at[1] - theirs.at[0];
      } else {
        bytes = writeJsonLine(fd, lineOf(first, count));
      }
      lines.push({ at: [offset, offset + bytes], first, count });
      offset += bytes;
    }
    function* fileRows(): Generator<FileRow> {
      for (let i = 0; i < (files?.files.length ?? 0); i++) yield [files!.files[i]!, files!.stamps[i]!, files!.digests[i]!];
    }
    writeJsonLines(fd, undefined, [fileRows()], perLine, false);
  } finally {
    if (from !== undefined) fs.closeSync(from);
    fs.closeSync(fd);
  }
  if (!manifest || !times || !kept || timesAt || keptAt || !manifest.inputs) return undefined;
  // The columns as the file holds them: null where a value is missing, plain arrays of numbers.
  // Loops, not `some`: on a frozen array (a read record's) V8's array builtins take a slow path, 5x.
  const nulled = <T,>(c: readonly T[]): (T | null)[] => {
    for (let i = 0; i < c.length; i++) if (c[i] === undefined) return Array.from(c, (v) => v ?? null);
    return c as T[];
  };
  const numbers = (c: ArrayLike<number>): number[] => (Array.isArray(c) ? c : Array.from(c));
  const columns: Columns = {
    names: names as string[], pages: manifest.pages, inputs: manifest.inputs, hashes: times.hashes, at: numbers(times.at),
    stamps: nulled(kept.stamps), digests: nulled(kept.digests), avatars: nulled(kept.avatars), decorations: nulled(kept.decorations), domains: nulled(kept.domains),
    suspended: numbers(kept.suspended), previews: nulled(kept.previews),
  };
  const writtenFiles = files && { version: files.version, files: [...files.files], stamps: [...files.stamps], digests: [...files.digests] };
  return asRead(file, JSON.parse(JSON.stringify(head)) as Head, lines, columns, writtenFiles);
}

/**
 * How the profile rows are cut into lines: at most `perLine` rows a line, about half that, where
 * the names say (src/model/content-runs.ts): a name added or removed changes the line it falls in,
 * and the lines after it are copied from the served record, not written again (0.8 s at 1,000,000).
 */
export const recordLineSizes = (perLine: number): RunSizes => {
  const quarter = Math.max(1, Math.floor(perLine / 4));
  return { min: quarter, every: quarter, max: perLine };
};

const NONE: ReleaseRecord = { manifest: undefined, times: undefined, kept: undefined, files: undefined };

/** The record in `file`, or no parts (none, another version, or a file cut short). */
export function readRecord(file: string): ReleaseRecord {
  try {
    const at: LineAt[] = [];
    return readJsonLines(file, (lines) => readLines(lines, file, at), undefined, at);
  } catch {
    return NONE; // none (no release before), another version, or unreadable: everything is made anew
  }
}

/** The record's parts from its lines (throws on a line that is not what it should be: no record). */
function readLines(lines: Generator<unknown>, file: string, at: LineAt[]): ReleaseRecord {
  const head = lines.next().value as Head | undefined;
  if (head?.version !== VERSION || !Number.isInteger(head.rows)) return NONE;
  const n = head.rows;
  const columns = Array.from({ length: ROW_LENGTH }, (_, c) => (KEYS.includes(c) ? new KeyColumn(n) : new Array<unknown>(n)));
  const rowLines: RecordSource['lines'] = [];
  let i = 0;
  while (i < n) {
    const line = lines.next();
    if (line.done) return NONE;
    const values = line.value as unknown[];
    const count = Array.isArray(values) && values.length === ROW_LENGTH && Array.isArray(values[0]) ? values[0].length : 0;
    if (count === 0 || i + count > n) return NONE;
    for (let c = 0; c < ROW_LENGTH; c++) {
      const to = columns[c]!;
      if (to instanceof KeyColumn) {
        if (!to.setBase64(i, count, values[c])) return NONE;
        continue;
      }
      const from = values[c];
      if (!Array.isArray(from) || from.length !== count) return NONE;
      for (let k = 0; k < count; k++) to[i + k] = from[k];
    }
    rowLines.push({ at: at[at.length - 1]!, first: i, count });
    i += count;
  }
  const [names, pages, inputs, hashes, times, stamps, digests, avatars, decorations, domains, suspended, previews] = columns as [
    string[], KeyColumn, KeyColumn, KeyColumn, number[], (string | null)[], (string | null)[], (string | null)[], (string | null)[], (string | null)[], number[], (string | null)[],
  ];
  let files: FileDigests | undefined;
  if (head.files) {
    files = { version: head.files.version, files: [], stamps: [], digests: [] };
    while (files.files.length < head.files.count) {
      const line = lines.next();
      if (line.done) return NONE;
      for (const [file, stamp, digest] of line.value as FileRow[]) {
        files.files.push(file);
        files.stamps.push(stamp);
        files.digests.push(digest);
      }
    }
    if (files.files.length !== head.files.count) return NONE;
  }
  return asRead(file, head, rowLines, { names, pages, inputs, hashes, at: times, stamps, digests, avatars, decorations, domains, suspended, previews }, files);
}

/**
 * The record `readRecord` gives for a file of `head`, the lines `lines` and rows `columns`, the
 * arrays frozen: one record is shared by every step of a build, and by the builds `npm start`'s
 * builder runs one after the other (plan.ts `servedRecord`), so code that would change it throws
 * instead of changing what the next build starts from.
 */
function asRead(file: string, head: Head, lines: RecordSource['lines'], columns: Columns, files: FileDigests | undefined): ReleaseRecord {
  const { names, pages, inputs, hashes, at, stamps, digests, avatars, decorations, domains, suspended, previews } = columns;
  for (const column of Object.values(columns)) {
    if (column instanceof KeyColumn) column.freeze();
    else Object.freeze(column);
  }
  if (files) for (const column of [files.files, files.stamps, files.digests]) Object.freeze(column);
  const record: ReleaseRecord = {
    manifest: head.manifest ? { ...head.manifest, names, pages, inputs: head.manifest.inputs ? inputs : undefined } as PageManifest : undefined,
    times: head.times ? { ...head.times, names, hashes, at } as AnswerTimesRecord : undefined,
    kept: head.kept ? { ...head.kept, names, stamps, digests, avatars, decorations, domains, suspended, previews } as KeptIndex : undefined,
    files,
  };
  deepFreeze(head);
  for (const part of [record.manifest, record.times, record.kept, record.files]) if (part) Object.freeze(part);
  // Not one of the record's parts: left out of comparisons and copies of them.
  const source: RecordSource = { file, lines, timestamps: head.times?.timestamps ?? [], columns, perLine: Number.isInteger(head.perLine) ? head.perLine : undefined };
  return Object.defineProperty(record, 'source', { value: source, enumerable: false });
}

const sameList = (a: readonly string[], b: readonly string[]) => a === b || (a.length === b.length && a.every((x, i) => x === b[i]));

/** `value` and every object in it frozen: the record's head is small (the rows are frozen column by column). */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}
