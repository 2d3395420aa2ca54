// Files the build keeps from one run to the next that hold a row per profile (the validation cache,
// a release's record): a head line, then lines of at most a fixed number of rows, each its own JSON
// text. No string or buffer holds every profile's row: at 1,000,000 profiles one JSON text of the
// validation cache passed V8's limit on a string's length ("Invalid string length").
import fs from 'node:fs';

/**
 * Profiles per line of the files a build keeps (the release's record, the validation cache): no
 * line, and so no string read or written, holds more, whatever the number of profiles: a line
 * of the record is 1-2 MB of JSON text.
 */
export const ROWS_PER_LINE = 10_000;

/** `BUILD_ROWS_PER_LINE`: a test hook (test/scale/build-sizes.test.ts), so that a build of a few hundred profiles writes many lines. */
export function rowsPerLineFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.BUILD_ROWS_PER_LINE);
  return Number.isInteger(n) && n > 0 ? n : ROWS_PER_LINE;
}

/** Bytes read at a time: a line longer than this is read in several. */
const CHUNK = 8 * 1024 * 1024;

/** Writes `head` (unless `withHead` is false), then each group of rows in lines of at most `perLine` (a line never mixes two groups), to the open file `fd`. */
export function writeJsonLines(fd: number, head: unknown, groups: Iterable<unknown>[], perLine = rowsPerLineFromEnv(), withHead = true): void {
  if (withHead) fs.writeSync(fd, `${JSON.stringify(head)}\n`);
  for (const rows of groups) {
    let line: unknown[] = [];
    for (const row of rows) {
      line.push(row);
      if (line.length === perLine) {
        fs.writeSync(fd, `${JSON.stringify(line)}\n`);
        line = [];
      }
    }
    if (line.length) fs.writeSync(fd, `${JSON.stringify(line)}\n`);
  }
}

/**
 * `read` given each line of `file` parsed, in order, read a chunk at a time; returns what `read`
 * returns, and closes the file however `read` ends (a reader that stops early included). Throws
 * when the file cannot be read or a line is not JSON; a last line without its newline (a file cut
 * short) is never given.
 */
export function readJsonLines<T>(file: string, read: (lines: Generator<unknown>) => T, chunkBytes = CHUNK, at?: LineAt[]): T {
  const lines = jsonLines(file, chunkBytes, at);
  try {
    return read(lines);
  } finally {
    lines.return(undefined);
  }
}

/** Where a line is in its file: its first byte and the byte after its newline. */
export type LineAt = [start: number, end: number];

/**
 * Each line of `file` parsed; `at`, when given, gets where each line given is. One buffer, read
 * into after the part of a line the last read left, and doubled for a line longer than it: no
 * buffer made and copied whole per chunk (70 ms of reading a 137 MB record at 1,000,000 profiles).
 */
function* jsonLines(file: string, chunkBytes: number, at?: LineAt[]): Generator<unknown> {
  const fd = fs.openSync(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(chunkBytes);
    /** Bytes of `buf` holding the file from `offset` on. */
    let filled = 0;
    let offset = 0;
    for (;;) {
      if (filled === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const n = fs.readSync(fd, buf, filled, buf.length - filled, null);
      if (n === 0) return;
      const read = buf.subarray(0, filled + n);
      let start = 0;
      // Only the bytes just read can hold the next newline.
      for (let end = read.indexOf(10, filled); end >= 0; end = read.indexOf(10, start)) {
        at?.push([offset + start, offset + end + 1]);
        // A string of its own: the buffer's bytes are read over after.
        yield JSON.parse(read.toString('utf8', start, end));
        start = end + 1;
      }
      read.copy(buf, 0, start);
      filled = read.length - start;
      offset += start;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes one line of `value` to the open file `fd`; returns its bytes. */
export const writeJsonLine = (fd: number, value: unknown): number => fs.writeSync(fd, `${JSON.stringify(value)}\n`);

/** Copies the bytes `at` of the open file `from` (whole lines, newline included) to the open file `fd`. */
export function copyLines(fd: number, from: number, at: LineAt, buffer?: Buffer): Buffer {
  const length = at[1] - at[0];
  const buf = buffer && buffer.length >= length ? buffer : Buffer.allocUnsafe(length);
  let read = 0;
  while (read < length) {
    const n = fs.readSync(from, buf, read, length - read, at[0] + read);
    if (n === 0) throw new Error('the file is shorter than its lines');
    read += n;
  }
  fs.writeSync(fd, buf, 0, length);
  return buf;
}

/** Writes a file whole or not at all: to a temporary name, renamed over `file` once complete. */
export function writeJsonLinesFile(file: string, head: unknown, groups: Iterable<unknown>[], perLine = rowsPerLineFromEnv()): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    writeJsonLines(fd, head, groups, perLine);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}
