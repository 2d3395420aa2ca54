// The files kept from run to run with a row per profile (src/content/json-lines.ts): what goes in
// comes out at any chunk size, no line holds more than its share of rows, and a file cut short
// never yields its last, partial line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, onTestFinished, test } from 'vitest';
import { readJsonLines, writeJsonLinesFile } from '../../src/content/json-lines.ts';

function tempFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'json-lines-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'rows.ndjson');
}

const row = fc.tuple(fc.string({ unit: 'binary' }), fc.oneof(fc.constant(null), fc.integer(), fc.string({ unit: 'grapheme' })));

describe('json lines', () => {
  test('read back as written, in lines of at most perLine rows, groups never sharing a line, at any chunk size', () => {
    const file = tempFile();
    fc.assert(fc.property(fc.array(fc.array(row, { maxLength: 40 }), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 300 }), (groups, perLine, chunk) => {
      writeJsonLinesFile(file, { head: groups.length }, groups, perLine);
      const [head, ...lines] = readJsonLines(file, (l) => [...l], chunk) as [unknown, ...unknown[][]];
      expect(head).toEqual({ head: groups.length });
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(perLine);
      expect(lines.length).toBe(groups.reduce((n, g) => n + Math.ceil(g.length / perLine), 0));
      expect(lines.flat()).toEqual(groups.flat());
    }), { numRuns: 150 });
  });

  test('a file cut short yields the complete lines before the cut only', () => {
    const file = tempFile();
    writeJsonLinesFile(file, { v: 1 }, [Array.from({ length: 25 }, (_, i) => [`user${i}`, i])], 10);
    const bytes = fs.readFileSync(file);
    // Cut inside the third line (rows 10-19): the head and the first line remain.
    const cut = bytes.indexOf(10, bytes.indexOf(10) + 1) + 5;
    fs.writeFileSync(file, bytes.subarray(0, cut));
    expect(readJsonLines(file, (l) => [...l], 4)).toEqual([{ v: 1 }, Array.from({ length: 10 }, (_, i) => [`user${i}`, i])]);
  });

  test('a reader that stops early closes the file', () => {
    const file = tempFile();
    writeJsonLinesFile(file, { v: 1 }, [Array.from({ length: 50 }, (_, i) => [i])], 5);
    const open = () => fs.readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i++) expect(readJsonLines(file, (lines) => lines.next().value)).toEqual({ v: 1 });
    expect(() => readJsonLines(file, () => { throw new Error('stop'); })).toThrow('stop');
    expect(open()).toBe(before);
  });

  test('a file is replaced whole or not at all: a row that cannot be written leaves the old file and no temporary one', () => {
    const file = tempFile();
    writeJsonLinesFile(file, { v: 1 }, [[['a', 1]]]);
    const before = fs.readFileSync(file, 'utf8');
    function* failing() {
      yield ['b', 2];
      throw new Error('disk full');
    }
    expect(() => writeJsonLinesFile(file, { v: 2 }, [failing()], 1)).toThrow('disk full');
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect(fs.readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  });
});
