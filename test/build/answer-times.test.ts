// A pre-rendered answer keeps the timestamp, and so the bytes, of the build that last changed its
// data: a rebuild rewrites only what changed, and CDN copies of the rest stay valid.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { AnswerTimes } from '../../src/build/reuse/answer-times.ts';
import { prerenderedCreators } from '../../src/api/prerendered.ts';
import { columnsOf } from '../../src/model/site-index.ts';
import { readRecord, writeRecord } from '../../src/build/reuse/record.ts';

/** Through the release's record file, as builds keep it. */
const save = (times: AnswerTimes, file: string) => writeRecord(file, { manifest: undefined, times: times.record(), kept: undefined, files: undefined });
const load = (file: string) => readRecord(file).times;
import { fixtureSite } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });
const recordFile = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'answer-times-'));
  made.push(dir);
  return path.join(dir, 'record.ndjson');
};

const T1 = '2026-01-15T10:00:00.000Z';
const T2 = '2026-01-15T11:00:00.000Z';
const T3 = '2026-01-15T12:00:00.000Z';

describe('answer times', () => {
  test('unchanged data keeps its first timestamp across builds; changed data takes the new one', () => {
    const file = recordFile();
    const first = new AnswerTimes(T1);
    expect(first.hasPrevious).toBe(false);
    expect(first.user('alice', '{"a":1}').timestamp).toBe(T1);
    expect(first.user('bob', '{"b":1}').timestamp).toBe(T1);
    expect(first.changedUsers).toEqual(['alice', 'bob']);
    save(first, file);

    const second = new AnswerTimes(T2, load(file));
    expect(second.hasPrevious).toBe(true);
    expect(second.user('alice', '{"a":1}').timestamp).toBe(T1);
    expect(second.user('bob', '{"b":2}').timestamp).toBe(T2);
    expect(second.user('carol', '{"c":1}').timestamp).toBe(T2);
    expect(second.changedUsers).toEqual(['bob', 'carol']);
    save(second, file);

    // The same build time again (SOURCE_DATE_EPOCH): unchanged data is still unchanged.
    expect(new AnswerTimes(T2, load(file)).user('alice', '{"a":1}')).toEqual({ timestamp: T1, changed: false });
    // Three builds on: alice still from the first, bob from the second.
    const third = new AnswerTimes(T3, load(file));
    expect([third.user('alice', '{"a":1}').timestamp, third.user('bob', '{"b":2}').timestamp]).toEqual([T1, T2]);
    expect(third.changedUsers).toEqual([]);
  });

  test('a record kept unhashed is the previous one; without one, nothing is kept', () => {
    const file = recordFile();
    const first = new AnswerTimes(T1);
    first.user('alice', '{"a":1}');
    save(first, file);
    const second = new AnswerTimes(T2, load(file));
    expect(second.keep('alice')).toBe(true);
    expect(second.keep('bob')).toBe(false);
    expect(second.keep('constructor')).toBe(false);
    // Asked later (the user files' writer does), the kept answer: unchanged, first timestamp.
    expect(second.user('alice', 'ignored: the record was kept')).toEqual({ timestamp: T1, changed: false });
    expect(second.changedUsers).toEqual([]);
    save(second, file);
    expect(new AnswerTimes(T3, load(file)).user('alice', '{"a":1}')).toEqual({ timestamp: T1, changed: false });
  });

  test('an edit build carries every answer by its place and records what keeping each by name records', () => {
    const file = recordFile();
    const first = new AnswerTimes(T1);
    for (const [name, data] of [['alice', 'a1'], ['bob', 'b1'], ['carol', 'c1']]) first.user(name!, data!);
    save(first, file);
    const second = new AnswerTimes(T2, load(file));
    second.keep('alice');
    second.user('bob', 'b2');
    second.keep('carol');
    save(second, file);

    // A profile added before the others (no place), bob edited back, alice and carol carried.
    const names = ['aaron', 'alice', 'bob', 'carol'];
    const places = Int32Array.from([-1, 0, 1, 2]);
    const byPlace = new AnswerTimes(T3, load(file));
    expect(byPlace.carry(names, places, new Set(['aaron', 'bob']))).toBe(true);
    expect(byPlace.user('aaron', 'n1', -1)).toEqual({ timestamp: T3, changed: true });
    expect(byPlace.user('bob', 'b2', 1)).toEqual({ timestamp: T2, changed: false });
    const byName = new AnswerTimes(T3, load(file));
    byName.user('aaron', 'n1');
    for (const name of ['alice', 'bob', 'carol']) byName.keep(name);
    expect(byPlace.record()).toEqual(byName.record());
    expect(byPlace.record().timestamps).toEqual([T3, T1, T2]);
    expect(byPlace.changedUsers).toEqual(['aaron']);

    // A place that is another name's, or none for a name not asked: nothing is carried.
    expect(new AnswerTimes(T3, load(file)).carry(names, Int32Array.from([-1, 1, 0, 2]), new Set(['aaron']))).toBe(false);
    expect(new AnswerTimes(T3, load(file)).carry(names, places, new Set())).toBe(false);
    expect(new AnswerTimes(T3).carry(names, places, new Set(['aaron']))).toBe(false);
  });

  test('a full build (previous ignored), a missing or foreign record: everything stamped anew', () => {
    const file = recordFile();
    const first = new AnswerTimes(T1);
    first.user('alice', 'x');
    save(first, file);
    expect(new AnswerTimes(T2, load(file), true).user('alice', 'x').timestamp).toBe(T2);
    expect(new AnswerTimes(T2, load(`${file}.missing`)).user('alice', 'x').timestamp).toBe(T2);
    fs.writeFileSync(file, '{"version":0,"names":["alice"],"hashes":["x"],"at":[0],"timestamps":["2020"]}');
    expect(new AnswerTimes(T2, load(file)).user('alice', 'x').timestamp).toBe(T2);
  });

  test('the creators file keeps its bytes while its rows are unchanged', () => {
    const file = recordFile();
    const { index } = fixtureSite();
    const first = new AnswerTimes(index.builtAt);
    const before = prerenderedCreators(columnsOf(index), (h) => first.creators(h));
    save(first, file);
    const later = { ...index, builtAt: '2026-01-15T18:00:00.000Z' };
    const same = prerenderedCreators(columnsOf(later), (h) => new AnswerTimes(later.builtAt, load(file)).creators(h));
    expect(same.body).toEqual(before.body);
    expect(same.headers.etag).toEqual(before.headers.etag);
    const fewer = { ...later, creators: later.creators.slice(1) };
    const changed = prerenderedCreators(columnsOf(fewer), (h) => new AnswerTimes(later.builtAt, load(file)).creators(h));
    expect(JSON.parse(changed.body as string).meta.timestamp).toBe(later.builtAt);
  });
});
