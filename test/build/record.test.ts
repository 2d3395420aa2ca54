// The one record a release keeps (src/build/reuse/record.ts): what goes in comes out, in lines of at most
// BUILD_ROWS_PER_LINE profiles, and a record cut short or of another version is no record.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { readRecord, recordLineSizes, rowKey, writeRecord, type ReleaseRecord } from '../../src/build/reuse/record.ts';
import { KeyColumn } from '../../src/build/reuse/key-column.ts';
import { runStarts } from '../../src/model/content-runs.ts';

// Lines of 100 rows rather than ROWS_PER_LINE's 10,000: the same cuts (recordLineSizes scales with
// it), on records of hundreds of profiles instead of tens of thousands, which took seconds to compare.
const PER_LINE = 100;
let rowsPerLine: string | undefined;
beforeAll(() => {
  rowsPerLine = process.env.BUILD_ROWS_PER_LINE;
  process.env.BUILD_ROWS_PER_LINE = String(PER_LINE);
});
afterAll(() => {
  if (rowsPerLine === undefined) delete process.env.BUILD_ROWS_PER_LINE;
  else process.env.BUILD_ROWS_PER_LINE = rowsPerLine;
});

function tempFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'record-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'record.ndjson');
}

/** A record of `n` profiles with every column varied (nulls included). */
function recordOf(n: number): ReleaseRecord {
  const names = Array.from({ length: n }, (_, i) => `user${String(i).padStart(6, '0')}`);
  const at = (i: number) => (i % 7 === 0 ? null : `v${i}`);
  return {
    manifest: { version: 2, fingerprint: 'code', names, pages: KeyColumn.from(names.map((_, i) => rowKey(`page${i}`))), inputs: KeyColumn.from(names.map((_, i) => at(i) && rowKey(at(i)!))) },
    // The times list the same names in another order (a build notes them as it makes the answers).
    times: { version: 2, names: [...names].reverse(), hashes: KeyColumn.from(names.map((_, i) => rowKey(`hash${n - 1 - i}`))), at: names.map((_, i) => i % 2), timestamps: ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'], creators: ['h', '2026-01-01T00:00:00.000Z'] },
    kept: {
      version: 1, fingerprint: 'code', builtAt: '2026-01-02T00:00:00.000Z', others: 'digest', names,
      stamps: names.map((_, i) => at(i + 1)), digests: names.map((_, i) => (at(i + 1) === null ? `dg${i}` : null)), avatars: names.map((_, i) => (i % 3 ? null : `a${i}.png`)), decorations: names.map((_, i) => (i % 5 ? null : 'halo')),
      domains: names.map((_, i) => (i % 11 ? null : `d${i}.example`)), suspended: names.map((_, i) => (i % 13 ? 0 : 1)), previews: names.map((_, i) => (i % 4 ? null : `p${i}.png`)),
      decorationEntries: [['halo', 'Halo', 'halo.png']], example: { name: 'user000001', full: true }, warnings: ['a warning'],
      runs: { browse: [0, 7], sitemap: [0] },
    },
    // More files than profiles, so the files take lines of their own too.
    files: { version: 1, files: Array.from({ length: n + 3 }, (_, i) => `avatars/a${i}.png`), stamps: Array.from({ length: n + 3 }, (_, i) => at(i)), digests: Array.from({ length: n + 3 }, (_, i) => `d${i}`) },
  };
}

describe('the release record', () => {
  test('reads back what was written, names kept once, in lines of at most BUILD_ROWS_PER_LINE profiles', () => {
    const file = tempFile();
    const n = PER_LINE * 2 + 17;
    const written = recordOf(n);
    writeRecord(file, written);
    const read = readRecord(file);
    expect(read.manifest).toEqual(written.manifest);
    expect(read.kept).toEqual(written.kept);
    expect(read.files).toEqual(written.files);
    // Times come back in the record's (username) order, each name with its own hash and time.
    const timeOf = (r: ReleaseRecord) => new Map(r.times!.names.map((name, i) => [name, [r.times!.hashes.get(i), r.times!.timestamps[r.times!.at[i]!]]]));
    expect(timeOf(read)).toEqual(timeOf(written));
    expect(read.times!.creators).toEqual(written.times!.creators);
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    // The profiles' lines cut where their names say (recordLineSizes), the files' every PER_LINE.
    expect(lines).toHaveLength(1 + runStarts(written.manifest!.names, recordLineSizes(PER_LINE)).length + Math.ceil((n + 3) / PER_LINE));
    for (const line of lines.slice(1)) expect((JSON.parse(line) as unknown[]).length).toBeLessThanOrEqual(PER_LINE);
    // Each name once in the whole file; keys as bytes (base64), not as the 16 characters of each.
    expect(fs.readFileSync(file, 'utf8').split('"user000042"')).toHaveLength(2);
    expect(fs.readFileSync(file, 'utf8')).not.toContain(rowKey('page42'));
    expect(read.manifest!.pages.get(42)).toBe(rowKey('page42'));
    expect(read.manifest!.inputs!.get(7)).toBeNull();
  });

  test('a record written after another copies the lines it would write the same, and writes the others', () => {
    const n = PER_LINE * 3 + 5;
    const servedFile = tempFile();
    writeRecord(servedFile, recordOf(n));
    const served = readRecord(servedFile);
    // The next build's, as an edit build keeps it: the served columns, one row of the second line changed.
    const read = readRecord(servedFile);
    const edited = PER_LINE + 3;
    // A read record is frozen (it may be shared by builds): changed in copies.
    expect(() => read.manifest!.pages.set(edited, rowKey('page-edited'))).toThrow(TypeError);
    expect(() => { read.kept!.stamps[edited] = 'stamp-edited'; }).toThrow(TypeError);
    const next = { ...read, manifest: { ...read.manifest!, pages: read.manifest!.pages.copy() }, kept: { ...read.kept!, stamps: [...read.kept!.stamps] } };
    next.manifest.pages.set(edited, rowKey('page-edited'));
    next.kept.stamps[edited] = 'stamp-edited';
    const [copied, whole] = [tempFile(), tempFile()];
    writeRecord(copied, next, served);
    writeRecord(whole, next);
    expect(fs.readFileSync(copied).equals(fs.readFileSync(whole))).toBe(true);
    expect(readRecord(copied).manifest!.pages.get(edited)).toBe(rowKey('page-edited'));

    // Copied indeed: a byte changed in each served line (after it was read) shows up in every line
    // but the edited row's, which was written anew.
    const starts = runStarts(next.manifest.names, recordLineSizes(PER_LINE));
    const editedLine = 1 + starts.findLastIndex((start) => start <= edited);
    markLines(servedFile);
    const again = tempFile();
    writeRecord(again, next, served);
    const lines = fs.readFileSync(again, 'utf8').split('\n');
    expect(lines[editedLine]!.startsWith('[["user')).toBe(true);
    for (let line = 1; line <= starts.length; line++) if (line !== editedLine) expect(lines[line]!.startsWith('[["User'), `line ${line}`).toBe(true);
    // Other timestamps at the same index: nothing copied.
    const read2 = readRecord(whole);
    const retimed = { ...read2, times: { ...read2.times!, timestamps: [...read2.times!.timestamps].reverse() } };
    const none = tempFile();
    writeRecord(none, retimed, served);
    expect(fs.readFileSync(none, 'utf8')).not.toContain('"User');
  });

  test('after a name added or removed, the lines after its own are still copied', () => {
    const n = PER_LINE * 4;
    const servedFile = tempFile();
    writeRecord(servedFile, recordOf(n));
    const served = readRecord(servedFile);
    for (const next of [withRow(served, 7, 'user000006a'), withoutRow(served, PER_LINE + 1)]) {
      const [copied, whole] = [tempFile(), tempFile()];
      writeRecord(copied, next, served);
      writeRecord(whole, next);
      expect(fs.readFileSync(copied).equals(fs.readFileSync(whole))).toBe(true);
      markLines(servedFile);
      writeRecord(copied, next, served);
      const lines = fs.readFileSync(copied, 'utf8').trimEnd().split('\n').slice(1, 1 + runStarts(next.manifest!.names, recordLineSizes(PER_LINE)).length);
      // All but the line of the change (and at most one more, where a cut moved) are the served ones.
      expect(lines.filter((l) => !l.startsWith('[["User')).length).toBeLessThanOrEqual(2);
      expect(lines.length).toBeGreaterThan(4);
      fs.writeFileSync(servedFile, fs.readFileSync(servedFile, 'utf8').replaceAll('[["User', '[["user'));
    }
  });

  test('after a served record cut in shorter lines, the next is cut as one written without it', () => {
    const n = PER_LINE * 4;
    const servedFile = tempFile();
    const was = process.env.BUILD_ROWS_PER_LINE;
    process.env.BUILD_ROWS_PER_LINE = String(Math.floor(PER_LINE / 3));
    try { writeRecord(servedFile, recordOf(n)); } finally { if (was === undefined) delete process.env.BUILD_ROWS_PER_LINE; else process.env.BUILD_ROWS_PER_LINE = was; }
    const served = readRecord(servedFile);
    for (const next of [served, withRow(served, 7, 'user000006a')]) {
      const [copied, whole] = [tempFile(), tempFile()];
      writeRecord(copied, next, served);
      writeRecord(whole, next);
      expect(fs.readFileSync(copied).equals(fs.readFileSync(whole))).toBe(true);
    }
  });

  test('what writeRecord gives is what readRecord reads back, lines and columns included', () => {
    const n = PER_LINE * 3 + 5;
    const servedFile = tempFile();
    // Unaligned parts (the times in another order): nothing given, the next build reads the file.
    expect(writeRecord(servedFile, recordOf(n))).toBeUndefined();
    const served = readRecord(servedFile);
    const sourceOf = (r: ReleaseRecord) => Object.getOwnPropertyDescriptor(r, 'source')!.value as unknown;
    for (const next of [served, withRow(served, 7, 'user000006a'), withoutRow(served, PER_LINE + 1)]) {
      for (const from of [undefined, served]) {
        const file = tempFile();
        const written = writeRecord(file, next, from)!;
        const read = readRecord(file);
        expect(written).toEqual(read);
        expect(sourceOf(written)).toEqual(sourceOf(read));
        expect(written.manifest!.pages.frozen).toBe(true);
        expect(Object.isFrozen(written.kept!.stamps)).toBe(true);
      }
    }
  });

  test('parts a build did not keep stay undefined', () => {
    const file = tempFile();
    const { manifest, times } = recordOf(3);
    writeRecord(file, { manifest, times, kept: undefined, files: undefined });
    const read = readRecord(file);
    expect(read.kept).toBeUndefined();
    expect(read.files).toBeUndefined();
    expect(read.manifest).toEqual(manifest);
  });

  test('none, cut short, another version or not JSON: no part at all', () => {
    const file = tempFile();
    expect(readRecord(file)).toEqual({ manifest: undefined, times: undefined, kept: undefined, files: undefined });
    writeRecord(file, recordOf(PER_LINE + 5));
    const whole = fs.readFileSync(file);
    fs.writeFileSync(file, whole.subarray(0, whole.lastIndexOf(10, whole.length - 2) + 1));
    expect(readRecord(file)).toEqual({ manifest: undefined, times: undefined, kept: undefined, files: undefined });
    fs.writeFileSync(file, whole.toString().replace(/^\{"version":\d+,"rows"/, '{"version":0,"rows"'));
    expect(readRecord(file)).toEqual({ manifest: undefined, times: undefined, kept: undefined, files: undefined });
    // A line whose columns are not all as long as its first (one value short): no record, not rows shifted.
    const [head, first, ...rest] = whole.toString().split('\n');
    const columns = JSON.parse(first!) as unknown[][];
    expect(columns).toHaveLength(12);
    columns[5]!.pop();
    fs.writeFileSync(file, [head, JSON.stringify(columns), ...rest].join('\n'));
    expect(readRecord(file)).toEqual({ manifest: undefined, times: undefined, kept: undefined, files: undefined });
    fs.writeFileSync(file, '{ not json');
    expect(readRecord(file)).toEqual({ manifest: undefined, times: undefined, kept: undefined, files: undefined });
  });
});

/** Changes the first name of each line of profile rows in `file` (`user` to `User`), after it was read: a copied line shows it. */
function markLines(file: string): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  fs.writeFileSync(file, lines.map((l, k) => (k > 0 && l.startsWith('[["user') ? `[["User${l.slice('[["user'.length)}` : l)).join('\n'));
}

type Column = readonly unknown[];
/** A key column changed as `change` changes its keys. */
const keys = (c: KeyColumn, change: (column: Column) => Column) => KeyColumn.from(change(c.toArray()) as (string | null)[]);
/** `record` with a row for `name` at `at` (a copy of the row before it), as an edit build adding a profile keeps it. */
function withRow(record: ReleaseRecord, at: number, name: string): ReleaseRecord {
  const add = <T extends Column>(c: T, value?: unknown) => [...c.slice(0, at), value ?? c[at - 1], ...c.slice(at)] as unknown as T;
  return edited(record, (c, isNames) => add(c, isNames ? name : undefined));
}
/** `record` without the row at `at`. */
function withoutRow(record: ReleaseRecord, at: number): ReleaseRecord {
  return edited(record, (c) => [...c.slice(0, at), ...c.slice(at + 1)]);
}
function edited(r: ReleaseRecord, change: (column: Column, isNames: boolean) => Column): ReleaseRecord {
  const m = r.manifest!;
  const t = r.times!;
  const k = r.kept!;
  const names = change(m.names, true) as string[];
  const col = <T,>(c: readonly T[]) => change(c, false) as T[];
  return {
    ...r,
    manifest: { ...m, names, pages: keys(m.pages, (c) => change(c, false)), inputs: m.inputs && keys(m.inputs, (c) => change(c, false)) },
    times: { ...t, names, hashes: keys(t.hashes, (c) => change(c, false)), at: col(t.at) },
    kept: {
      ...k, names, stamps: col(k.stamps), digests: col(k.digests), avatars: col(k.avatars), decorations: col(k.decorations), domains: col(k.domains),
      suspended: col(k.suspended), previews: col(k.previews),
    },
  };
}
