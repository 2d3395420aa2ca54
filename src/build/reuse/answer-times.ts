// When each pre-rendered answer's data last changed. A pre-rendered answer's `meta.timestamp` is the
// time of the build that last changed its `data`, not of the latest build: a build then leaves the
// bytes (and strong ETag) of every unchanged answer as they were, so it rewrites only the files
// that changed and CDN copies of the others stay valid (docs/api.md). Each release keeps the
// record in its one record (record.ts); the next build reads the served release's.
import { rowKey } from './record.ts';
import { KeyColumn } from './key-column.ts';

const VERSION = 2;

/** A hash of an answer's data, and the build time that data was first published with. */
type Stamp = [hash: string, timestamp: string];

/**
 * In columns, as the page manifest is (page-reuse.ts): `names[i]`'s answer hashes to `hashes[i]`
 * and was first published at `timestamps[at[i]]`. Few distinct times, each written once.
 */
export interface AnswerTimesRecord {
  version: number;
  names: string[];
  /** Each answer's hash (`rowKey`). */
  hashes: KeyColumn;
  at: number[];
  timestamps: string[];
  /** The stamp of the creators list's first page. */
  creators?: Stamp;
}

export class AnswerTimes {
  /** The previous record's columns, valid. */
  readonly #previous: AnswerTimesRecord | undefined;
  /** username → its place in the previous record; a Map, so a user named `constructor` is only data. Made when first asked by name. */
  #previousAt: Map<string, number> | undefined;
  #previousCreators: Stamp | undefined;
  readonly #next = new Map<string, Stamp>();
  /** An edit build's names, each keeping the previous record at its place unless asked anew (`carry`). */
  #carried: { names: readonly string[]; places: Int32Array } | undefined;
  #nextCreators: Stamp | undefined;
  readonly #builtAt: string;
  /** Users whose data is new or changed since the previous record (all of them without one). */
  readonly changedUsers: string[] = [];
  readonly #changed = new Set<string>();

  /** `previousRecord`: the served release's (record.ts); none (or `ignorePrevious`) stamps everything with `builtAt`. */
  constructor(builtAt: string, previousRecord?: AnswerTimesRecord, ignorePrevious = false) {
    this.#builtAt = builtAt;
    this.#previous = previousRecord && !ignorePrevious ? valid(previousRecord) : undefined;
    this.#previousCreators = this.#previous?.creators;
  }

  /** Whether there was a previous record to compare with. */
  get hasPrevious(): boolean {
    return this.#previous !== undefined;
  }

  /** The place in the previous record of the user at `place` there, or of `username`; undefined: none. */
  #placeOf(username: string, place?: number): number | undefined {
    const p = this.#previous;
    if (!p) return undefined;
    let at = place;
    if (at === undefined) {
      if (!this.#previousAt) {
        this.#previousAt = new Map();
        for (let i = 0; i < p.names.length; i++) this.#previousAt.set(p.names[i]!, i);
      }
      at = this.#previousAt.get(username);
    }
    return at === undefined || at < 0 || p.names[at] !== username ? undefined : at;
  }

  /** The timestamp of the previous record's row `at`. */
  #timeAt(at: number): string {
    const p = this.#previous!;
    return p.timestamps[p.at[at]!]!;
  }

  /**
   * The `meta.timestamp` for this user's answer with this `data`, and whether the data changed;
   * noted for the next build. Asked again for the same user (in the same build), the same answer.
   * `place`: the user's place in the previous record, when the caller knows it (-1: none).
   */
  user(username: string, data: Uint8Array | string, place?: number): { timestamp: string; changed: boolean } {
    const known = this.#next.get(username);
    if (known) return { timestamp: known[1], changed: this.#changed.has(username) };
    const hash = rowKey(data);
    const before = this.#placeOf(username, place);
    const changed = before === undefined || !this.#previous!.hashes.has(before, hash);
    const timestamp = changed ? this.#builtAt : this.#timeAt(before!);
    if (changed) {
      this.changedUsers.push(username);
      this.#changed.add(username);
    }
    this.#next.set(username, [hash, timestamp]);
    return { timestamp, changed };
  }

  /**
   * Keeps the previous record of this user's answer, whose data the caller knows to be the same
   * (the same public user on the same date: page-reuse.ts `sameInputs`), without hashing it; false
   * when there is none. Later calls of `user` for this user answer from it.
   */
  keep(username: string): boolean {
    if (this.#next.has(username)) return true;
    const before = this.#placeOf(username);
    if (before === undefined) return false;
    this.#next.set(username, [this.#previous!.hashes.get(before)!, this.#timeAt(before)]);
    return true;
  }

  /**
   * An edit build's answers (edit-path.ts): `names[i]` keeps the previous record at `places[i]`
   * unless `user` is asked for it; no Map of a million names. False when a place is not that
   * name's in the previous record: then nothing is carried.
   */
  carry(names: readonly string[], places: Int32Array, asked: { has(name: string): boolean }): boolean {
    const p = this.#previous;
    if (!p || this.#carried) return false;
    for (let i = 0; i < names.length; i++) {
      if (asked.has(names[i]!)) continue;
      const at = places[i]!;
      if (at < 0 || p.names[at] !== names[i]) return false;
    }
    this.#carried = { names, places };
    return true;
  }

  /** The `meta.timestamp` of the creators list's first page, given a hash of everything in it but its meta. */
  creators(hash: string): string {
    const before = this.#previousCreators;
    const timestamp = before && before[0] === hash ? before[1] : this.#builtAt;
    this.#nextCreators = [hash, timestamp];
    return timestamp;
  }

  /** What this build's record keeps (record.ts): rows in the order they were asked for, or in the carried names' order. */
  record(): AnswerTimesRecord {
    const carried = this.#carried;
    // The carried names as they are: the record's other columns list the same array (record.ts).
    const names: string[] = carried ? carried.names as string[] : [];
    const at: number[] = [];
    const timestamps: string[] = [];
    const timeAt = new Map<string, number>();
    // Most rows share a few times: the last one's index is kept at hand (1,000,000 lookups an edit build).
    let lastTime: string | undefined;
    let lastAt = -1;
    const timeIndex = (timestamp: string): number => {
      let t = timestamp === lastTime ? lastAt : timeAt.get(timestamp);
      if (t === undefined) timeAt.set(timestamp, t = timestamps.push(timestamp) - 1);
      lastTime = timestamp;
      lastAt = t;
      return t;
    };
    let hashes: KeyColumn;
    if (carried) {
      const p = this.#previous!;
      // The carried hashes by place, copied as runs of bytes; each asked one set below.
      hashes = p.hashes.gather(carried.places);
      for (let i = 0; i < names.length; i++) {
        const asked = this.#next.get(names[i]!);
        if (asked) hashes.set(i, asked[0]);
        at.push(timeIndex(asked ? asked[1] : this.#timeAt(carried.places[i]!)));
      }
    } else {
      hashes = new KeyColumn(this.#next.size);
      for (const [name, [hash, timestamp]] of this.#next) {
        hashes.set(names.push(name) - 1, hash);
        at.push(timeIndex(timestamp));
      }
    }
    return { version: VERSION, names, hashes, at, timestamps, ...(this.#nextCreators && { creators: this.#nextCreators }) };
  }
}

/** Whether every row names one of the record's timestamps: a loop, since `every` on a frozen array (a read record's) is 5x slower. */
function timesNamed(f: AnswerTimesRecord): boolean {
  for (let i = 0; i < f.at.length; i++) if (typeof f.timestamps[f.at[i]!] !== 'string') return false;
  return true;
}

/** Records found valid that cannot change since (a read record is frozen: record.ts): not checked again by the next build of the process. */
const VALID = new WeakSet<AnswerTimesRecord>();

/** The record if it is this version's and whole; else undefined, and every answer is stamped anew. */
function valid(f: AnswerTimesRecord): AnswerTimesRecord | undefined {
  if (f && VALID.has(f)) return f;
  const ok = f && f.version === VERSION && Array.isArray(f.names) && KeyColumn.is(f.hashes, f.names.length) && Array.isArray(f.at) && f.at.length === f.names.length
    && Array.isArray(f.timestamps) && timesNamed(f);
  if (ok && f.hashes.frozen && [f, f.names, f.at, f.timestamps].every(Object.isFrozen)) VALID.add(f);
  return ok ? f : undefined;
}
