// Parsing the profile files, the one step of loading content whose cost grows with the directory:
// at 100,000 profiles YAML parsing and validation are most of a build's CPU time. Three ways to
// run the same `parseProfileFile`: in the calling thread (`loadContent`, small folders, tests),
// in worker threads (`parseProfiles` with many files), and not at all for a file whose bytes are
// in the validation cache from an earlier run, or not even read when its stat says it is the very
// file the cache saw.
import { createHash, hash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ProfileSchema, type Profile } from '../schemas/index.ts';
import type { ContentProblem } from './problems.ts';
import { decodeText, type ReadResult } from './read-file.ts';
import { parseYamlFile } from './yaml-file.ts';
import { readJsonLines, writeJsonLinesFile } from './json-lines.ts';
import { RACY_MS, stampAt, stampFiles, stampOf, type Stamp } from './file-stamps.ts';
import { pruneValidationCaches } from '../config.ts';

/** A profile as the rest of the build sees it: validated, without its `private:` notes. */
export type PublicProfile = Omit<Profile, 'private'>;

type Place = { line?: number; column?: number };

export type ParsedProfile =
  | { ok: true; username: string; profile: PublicProfile; places: { avatar?: Place; decoration?: Place; customDomain?: Place } }
  | { ok: false; username: string; problems: ContentProblem[] };

export interface ProfileFile {
  username: string;
  file: string;
}

/**
 * Validates one profile file. Keeps where `avatar` and `decoration` are, for the checks across
 * files that run later without the parsed document. `private:` is dropped here, so it is never
 * held past this function, passed between threads or written to the cache.
 */
export function parseProfileFile(username: string, file: string, source: string): ParsedProfile {
  const r = parseYamlFile(file, source, ProfileSchema);
  if (!r.ok) return { ok: false, username, problems: r.problems };
  const { private: _notes, ...profile } = r.value;
  const places: { avatar?: Place; decoration?: Place; customDomain?: Place } = {};
  if (profile.avatar !== undefined) places.avatar = r.locate(['avatar']);
  if (profile.decoration !== undefined) places.decoration = r.locate(['decoration']);
  if (profile.customDomain !== undefined) places.customDomain = r.locate(['customDomain']);
  return { ok: true, username, profile, places };
}

export interface ParseOptions {
  /**
   * A JSON file of earlier results keyed by each file's SHA-1: a file whose bytes did not change
   * is not parsed again. Only valid profiles are kept, never their `private:` notes.
   */
  cacheFile?: string;
  /** Parse every file and rewrite the cache without reading it (a full build). */
  ignoreCache?: boolean;
  /** Worker threads for the files not in the cache; default: one per core when there are thousands of files. */
  workers?: number;
  /**
   * How long before this run a file must have last changed for its stamp to prove its bytes to the
   * next run (`stamps` of the result); default RACY_MS. Tests set 0 to rebuild at once what they just wrote.
   */
  settleMs?: number;
  /**
   * When few files changed, leave writing the cache to the caller (`saveCache` in the result): a
   * rebuild writes it after the new release is served, since at 100,000 profiles it is a second.
   */
  deferCacheWrite?: boolean;
  /** A test hook: threads read ahead (`readAhead`) after this many reads, however fast they were. */
  readAheadAfter?: number;
  /** Text read and not yet parsed, at most (UTF-16 code units); default OUTSTANDING_CHARS. */
  textInFlight?: number;
}

export interface ParseStats {
  files: number;
  fromCache: number;
  /** Files whose bytes were read: the others' stat matched the cache's. */
  read: number;
  workers: number;
  /** `stats/views.yaml`'s counts came from the cache (StampedFileCache), not a parse. */
  viewsFromCache?: boolean;
  /** Creator files whose parsed value came from the cache. */
  creatorsFromCache?: number;
  /** Threads read the files ahead (they came from disk: `readAhead`). */
  readAhead?: boolean;
  /** The most text read and not yet parsed at any time (UTF-16 code units): what `textInFlight` bounds. */
  mostTextInFlight?: number;
}

/** Below this many files to parse, starting workers costs more than it saves. */
const FILES_PER_WORKER_MIN = 2_000;
/** Files per message to a worker: small enough to balance two workers, big enough to amortise the message. */
const BATCH = 1_000;
/**
 * Text read and not yet parsed, at most: past it this thread waits before reading on, and a
 * message holds an eighth of it at most (a thousand files of 128 KiB would be one of 250 MB).
 * Without a bound it read far ahead of the parsing: 5,000 files of 127 KiB took 1.6-2.0 GB.
 */
const OUTSTANDING_CHARS = 32 * 1024 * 1024;
const CACHE_VERSION = 3;

/** Reads timed before deciding whether to read ahead: a few milliseconds when the files are in memory. */
const PROBE_READS = 1_000;
/** Slower than this a file on average (read, decoded), the files come from disk: from memory 21-25 µs on this machine, the first thousand included, from disk 70-160 µs. */
const COLD_READ_US = 60;
/** Fewer files left than this are read by this thread alone. */
const READ_AHEAD_MIN = 20_000;
/**
 * Threads reading ahead: on this machine's disk 60,000 profile files not in memory took 4.2-5.2 s
 * read one at a time, 1.9-2.3 s with 4 threads ahead, 2.2 s with 8 (docs/scale.md).
 */
const READ_AHEAD_THREADS = 4;
/** Files a thread reads in a row before the next thread's: each thread's run stays ahead of the reader. */
const READ_AHEAD_RUN = 64;

interface ReadAhead {
  /** Stops the threads (those still reading are behind this thread's reads, and useless). */
  stop(): Promise<void>;
}

/**
 * Reads `files` in threads ahead of this one, only so that the operating system holds them when
 * this thread reads them: a fresh clone's or a cold machine's files come from disk, and one thread
 * reading a million small files one at a time waits on each (154.6 s of a 1,000,000-profile build)
 * where several at once keep the disk busy. Nothing read ahead is kept or trusted: this thread
 * reads every file again, through the same reader (read-file.ts), and parses what it read.
 */
function readAhead(files: readonly string[]): ReadAhead {
  const parts: string[][] = Array.from({ length: READ_AHEAD_THREADS }, () => []);
  for (let i = 0; i < files.length; i++) parts[Math.floor(i / READ_AHEAD_RUN) % READ_AHEAD_THREADS]!.push(files[i]!);
  // Profile files are `<content>/profiles/<name>.yaml`: the reader is given the content folder.
  const root = path.dirname(path.dirname(files[0]!));
  const workers = parts.map((part) => {
    const worker = new Worker(new URL('./profile-files-worker.ts', import.meta.url), { workerData: { readAhead: { root, files: part } } });
    // A thread that fails only reads less ahead.
    worker.on('error', () => {});
    return worker;
  });
  return { stop: async () => { await Promise.all(workers.map((w) => w.terminate())); } };
}

/** A valid profile's cached result: the digest of its bytes, what they parsed to, and the stamp that proved them. */
type CacheEntry = [sha1: string, parsed: ParsedProfile & { ok: true }, stamp: string];

/** The cache file's first line; then lines of `[username, ...CacheEntry]` rows (json-lines.ts). */
interface CacheHead {
  version: number;
  /** Hash of the code that validates: a schema change empties the cache. */
  validator: string;
  /** When the run that wrote it started (ms): a file changed since then is read again, whatever its stat. */
  scannedAt: number;
  /** How many rows follow: a file cut short is not used. */
  count: number;
}

interface ProfileCache {
  scannedAt: number;
  entries: Map<string, CacheEntry>;
}

/**
 * Parses every profile file, in the order given, with the cache and workers of `options`. `read`
 * reads a file in this thread (ContentReader: no links, size limits), so workers get text only.
 */
export async function parseProfiles(files: readonly ProfileFile[], options: ParseOptions, read: (file: string) => ReadResult): Promise<{
  parsed: ParsedProfile[]; stats: ParseStats; saveCache: () => void;
  /**
   * username → its file's stamp (stampOf), where that proves the bytes parsed: the file was last
   * changed well before this run began (RACY_MS), so any later write shows in its stamp. None for
   * the rest, and none without a `cacheFile`. The build compares them with the served release's (page-reuse.ts).
   */
  stamps: Map<string, string>;
  /**
   * username → the digest of its file's bytes parsed, where its stamp does not prove them (written
   * within RACY_MS of this run, as a fresh clone leaves many): the next build reads such a file
   * again and compares, rather than take it for changed (src/build/reuse/edit-path.ts).
   */
  digests: Map<string, string>;
}> {
  const validator = options.cacheFile ? validatorFingerprint() : '';
  // Before any stat, so a file written after one is never trusted for the stamp it had (RACY_MS).
  const scannedAt = Date.now();
  // Many files are stamped in another thread while this one reads the cache: at 100,000 profiles
  // each is about half a second.
  const stamping = options.cacheFile ? stampFiles(files.map((f) => f.file)) : undefined;
  const cache = options.cacheFile && !options.ignoreCache ? readCache(options.cacheFile, validator) : undefined;
  const stamped = await stamping;
  const parsed: ParsedProfile[] = new Array(files.length);
  const hashes: string[] = new Array(files.length);
  const stamps: string[] = new Array(files.length);
  const settledStamps = new Map<string, string>();
  const todo: ParseItem[] = [];
  /** The files the cache's stamps do not prove: read, in order. */
  const reads: number[] = [];
  for (let i = 0; i < files.length; i++) {
    const { username, file } = files[i]!;
    if (options.cacheFile) {
      // Unchanged by its stat since a run that validated it: not read at all. Only a regular file
      // (lstat: never through a link) that the walk of the folder found; its bytes, once read
      // through the safe reader, gave the cached result.
      const stat: Stamp | undefined = stamped ? stampAt(stamped, i) : stampOf(file);
      const hit = stat ? cache?.entries.get(username) : undefined;
      if (stat) stamps[i] = stat.stamp;
      if (stat && stat.changedMs < scannedAt - (options.settleMs ?? RACY_MS)) settledStamps.set(username, stat.stamp);
      if (hit && stat && hit[2] === stat.stamp && stat.changedMs < cache!.scannedAt - RACY_MS) {
        hashes[i] = hit[0];
        parsed[i] = hit[1];
        continue;
      }
    }
    reads.push(i);
  }
  const readCount = reads.length;
  // Workers parse as this thread reads (ParsePool): by default one per core once there are a few
  // thousand files to parse, none (this thread parses) below; `workers` forces a count.
  let pool: ParsePool | undefined;
  const cores = os.availableParallelism();
  const startPoolAt = options.workers !== undefined ? (options.workers > 0 ? 1 : Infinity) : cores > 1 ? 2 * FILES_PER_WORKER_MIN : Infinity;
  /** Files parsed (not taken from the cache), in this thread (`todo`) or by the pool. */
  let parseCount = 0;
  const limit = options.textInFlight ?? OUTSTANDING_CHARS;
  let todoChars = 0;
  let mostTextInFlight = 0;
  const toParse = (item: ParseItem) => {
    parseCount++;
    if (pool) {
      pool.push(item);
      mostTextInFlight = Math.max(mostTextInFlight, pool.inFlight);
      return;
    }
    todo.push(item);
    todoChars += item.source.length;
    mostTextInFlight = Math.max(mostTextInFlight, todoChars);
    // Big files start the pool sooner: 4,000 of 127 KiB waited in this thread, 500 MB.
    if (todo.length < startPoolAt && (todoChars < limit || startPoolAt === Infinity)) return;
    pool = new ParsePool(options.workers ?? Math.min(cores, Math.max(2, Math.floor(readCount / FILES_PER_WORKER_MIN))), (i, result) => { parsed[i] = result; }, limit);
    // Their texts are the pool's now: at 1,000,000 profiles, 1 GB this thread need not hold.
    for (const t of todo.splice(0)) pool.push(t);
  };
  let ahead: ReadAhead | undefined;
  const forced = options.readAheadAfter !== undefined;
  const decideAt = options.readAheadAfter ?? PROBE_READS;
  const probeStart = performance.now();
  try {
    for (let k = 0; k < reads.length; k++) {
      // Files that come from disk one at a time: threads read the rest ahead (`readAhead`).
      if (k === decideAt && (forced || (reads.length - k >= READ_AHEAD_MIN && (performance.now() - probeStart) * 1000 > PROBE_READS * COLD_READ_US))) {
        ahead = readAhead(reads.slice(k).map((i) => files[i]!.file));
      }
      // The pool's results wait for this thread's event loop: taken every batch, not piled up
      // (serialised) until the last file is read; and the reading waits for the parsing.
      if (pool && (k % BATCH === 0 || pool.full)) await pool.room();
      const i = reads[k]!;
      const { username, file } = files[i]!;
      const r = read(file);
      if (!r.ok) {
        parsed[i] = { ok: false, username, problems: r.problems };
        continue;
      }
      const bytes = r.bytes;
      // Before the cache: a file that is not UTF-8 is refused on every run, whatever an older cache says.
      const decoded = decodeText(file, bytes);
      if (!decoded.ok) {
        parsed[i] = { ok: false, username, problems: decoded.problems };
        continue;
      }
      if (options.cacheFile) {
        const digest = hash('sha1', bytes, 'base64url');
        hashes[i] = digest;
        const hit = cache?.entries.get(username);
        if (hit && hit[0] === digest) {
          parsed[i] = hit[1];
          continue;
        }
      }
      toParse({ i, username, file, source: decoded.text });
    }
  } catch (e) {
    await pool?.stop();
    throw e;
  } finally {
    await ahead?.stop();
  }

  const workers = pool?.threads ?? 0;
  if (pool) await pool.finish();
  else for (const t of todo) parsed[t.i] = parseProfileFile(t.username, t.file, t.source);

  // Rewritten when anything was parsed or read (a file read again gets its new stamp, so the next
  // run need not read it).
  let saveCache = () => {};
  if (options.cacheFile && (parseCount || readCount || !cache || cache.entries.size !== files.length)) {
    const cacheFile = options.cacheFile;
    saveCache = () => {
      let count = 0;
      for (const p of parsed) if (p!.ok) count++;
      function* rows() {
        for (let i = 0; i < files.length; i++) {
          const p = parsed[i]!;
          if (p.ok) yield [p.username, hashes[i]!, p, stamps[i] ?? ''];
        }
      }
      writeCache(cacheFile, { version: CACHE_VERSION, validator, scannedAt, count } satisfies CacheHead, rows());
      saveCache = () => {};
    };
    // A big parse is written at once, so its results need not be held for the rest of the build.
    if (!options.deferCacheWrite || parseCount > files.length / 20) saveCache();
  }
  const digests = new Map<string, string>();
  for (let i = 0; i < files.length; i++) {
    const { username } = files[i]!;
    if (hashes[i] !== undefined && !settledStamps.has(username)) digests.set(username, hashes[i]!);
  }
  return { parsed, stats: { files: files.length, fromCache: files.length - parseCount, read: readCount, workers, readAhead: ahead !== undefined, mostTextInFlight }, saveCache: () => saveCache(), stamps: settledStamps, digests };
}

/** A profile file to parse: its place in the run's order, and its text. */
interface ParseItem {
  i: number;
  username: string;
  file: string;
  source: string;
}

/**
 * Worker threads parsing profile files while this thread reads them: every `BATCH` files read go to
 * the thread with the fewest outstanding, at once, so parsing overlaps the reading. Before, every
 * file was read first, one core busy and the other waiting (at 20,000 profiles about half a second).
 * `done` gets each result when this thread next turns its event loop (`finish`).
 */
class ParsePool {
  readonly threads: number;
  readonly #workers: { worker: Worker; pending: { order: number[]; chars: number }[]; outstanding: number }[];
  readonly #done: (i: number, result: ParsedProfile) => void;
  #batch: ParseItem[] = [];
  #batchChars = 0;
  /** Text sent and not yet parsed. */
  #outstandingChars = 0;
  #failure: unknown;
  #finishing: (() => void) | undefined;
  #roomMade: (() => void) | undefined;
  readonly #limit: number;

  constructor(count: number, done: (i: number, result: ParsedProfile) => void, limit = OUTSTANDING_CHARS) {
    this.threads = count;
    this.#done = done;
    this.#limit = limit;
    this.#workers = Array.from({ length: count }, () => {
      const entry = { worker: new Worker(new URL('./profile-files-worker.ts', import.meta.url)), pending: [] as { order: number[]; chars: number }[], outstanding: 0 };
      entry.worker.on('message', (results: ParsedProfile[]) => {
        const { order, chars } = entry.pending.shift()!;
        for (let k = 0; k < results.length; k++) this.#done(order[k]!, results[k]!);
        entry.outstanding -= results.length;
        this.#outstandingChars -= chars;
        this.#settle();
      });
      entry.worker.once('error', (e) => { this.#failure ??= e; this.#settle(); });
      entry.worker.once('exit', (code) => {
        if (entry.pending.length) this.#failure ??= new Error(`a validation worker stopped (exit code ${code})`);
        entry.pending = [];
        this.#settle();
      });
      return entry;
    });
  }

  push(item: ParseItem): void {
    this.#batch.push(item);
    this.#batchChars += item.source.length;
    if (this.#batch.length === BATCH || this.#batchChars >= this.#limit / 8) this.#send();
  }

  /**
   * Resolves once the workers hold less than the limit of text not yet parsed (at once
   * where they do, after the event loop has taken their results), or one has failed.
   */
  room(): Promise<void> {
    if (this.#outstandingChars < this.#limit || this.#failure !== undefined) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => { this.#roomMade = resolve; });
  }

  /** Whether the reader should wait for `room()` before reading on. */
  get full(): boolean {
    return this.#outstandingChars >= this.#limit;
  }

  /** Text read and not yet parsed: sent, or waiting for its message. */
  get inFlight(): number {
    return this.#outstandingChars + this.#batchChars;
  }

  /** Sends what is left, waits for every result, and ends the threads; rejects with the first failure. */
  async finish(): Promise<void> {
    if (this.#batch.length) this.#send();
    await new Promise<void>((resolve) => {
      this.#finishing = resolve;
      this.#settle();
    });
    await this.stop();
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Ends the threads, whatever they were doing. */
  async stop(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.worker.terminate()));
  }

  #send(): void {
    const batch = this.#batch;
    const chars = this.#batchChars;
    this.#batch = [];
    this.#batchChars = 0;
    const to = this.#workers.reduce((a, b) => (b.outstanding < a.outstanding ? b : a));
    to.pending.push({ order: batch.map((t) => t.i), chars });
    to.outstanding += batch.length;
    this.#outstandingChars += chars;
    to.worker.postMessage(batch.map(({ username, file, source }) => ({ username, file, source })));
  }

  #settle(): void {
    if (this.#roomMade && (this.#outstandingChars < this.#limit || this.#failure !== undefined)) {
      this.#roomMade();
      this.#roomMade = undefined;
    }
    if (this.#finishing && (this.#failure !== undefined || this.#workers.every((w) => w.pending.length === 0))) this.#finishing();
  }
}

/** The validating code and the versions of the libraries it calls: what a cached result depends on. Once per process (three caches ask). */
let knownValidator: string | undefined;
function validatorFingerprint(): string {
  return (knownValidator ??= computeValidatorFingerprint());
}

function computeValidatorFingerprint(): string {
  const hash = createHash('sha1').update(`v${CACHE_VERSION}\0${process.version}\0`);
  const here = path.dirname(fileURLToPath(import.meta.url));
  // Every file of the folders that read and validate content, not a hand-kept list: one left out
  // (simple-yaml.ts, which reads every file first) kept stale verdicts after it changed.
  const sources = [here, path.join(here, '..', 'schemas')].flatMap((dir) => fs.readdirSync(dir).sort().filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f)));
  for (const file of sources) hash.update(fs.readFileSync(file)).update('\0');
  // The exact versions of yaml and zod installed.
  try {
    hash.update(fs.readFileSync(path.join(here, '..', '..', 'package-lock.json')));
  } catch {
    hash.update('no lockfile');
  }
  return hash.digest('base64url');
}

function readCache(file: string, validator: string): ProfileCache | undefined {
  try {
    return readJsonLines(file, (lines) => {
      const head = lines.next().value as CacheHead | undefined;
      if (head?.version !== CACHE_VERSION || head.validator !== validator || !Number.isInteger(head.count)) return undefined;
      const entries = new Map<string, CacheEntry>();
      for (const line of lines) for (const [username, ...entry] of line as [string, ...CacheEntry][]) entries.set(username, entry);
      return entries.size === head.count ? { scannedAt: head.scannedAt, entries } : undefined;
    });
  } catch {
    return undefined; // none yet, or unreadable: parse everything
  }
}

/** Writes a cache whole or not at all (json-lines.ts): a crash never leaves half a cache. */
function writeCache(file: string, head: unknown, rows: Iterable<unknown>): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    writeJsonLinesFile(file, head, [rows]);
  } catch (e) {
    // A cache that cannot be written only costs time next run.
    console.warn(`warning: could not write the validation cache ${file}: ${(e as Error).message}`);
    return;
  }
  try {
    pruneValidationCaches(file);
  } catch {
    // Old caches left only take disk: the next build's write tries again.
  }
}


/**
 * Parsed values of content files other than profiles (`stats/views.yaml`, the creators), kept
 * beside the profiles' cache and reused while a file's stamp is unchanged, by the same rules: at
 * 100,000 profiles parsing views.yaml was 2.4 s of every rebuild, and the 4,800 creator files 1.3 s.
 * Only values that had no problem are stored; `save` writes what this run looked at.
 */
/** What StampedFileCache read of each file with `shareReads`, and the file's stamp then. */
const SHARED_READS = new Map<string, { stamp: string; validator: string; stored: Map<string, [string, unknown]>; scannedAt: number }>();

export class StampedFileCache<T> {
  readonly #file: string | undefined;
  readonly #validator: string;
  readonly #scannedAt = Date.now();
  #stored = new Map<string, [stamp: string, value: T]>();
  readonly #next = new Map<string, [stamp: string, value: T]>();
  /** Stamps stored by a run are trusted for files changed well before it began (RACY_MS). */
  readonly #trustedBefore: number;
  #stamps = new Map<string, string>();
  #hits = 0;
  #changed = false;

  /**
   * `cacheFile`: the profiles' cache file (ParseOptions), or undefined for no cache; `name` tells
   * this one's file apart. `shareReads`: the values stored are taken as the last such cache of this
   * process read them while the file is the same, for a caller that only reads them (the edit path:
   * at 1,000,000 profiles the view counts took 0.4 s to read, for each edit `npm start` built).
   */
  constructor(cacheFile: string | undefined, name: string, ignoreCache = false, shareReads = false) {
    this.#file = cacheFile && `${cacheFile.replace(/\.json$/, '')}-${name}.json`;
    this.#validator = this.#file ? validatorFingerprint() : '';
    let scannedAt = 0;
    const stamp = this.#file && shareReads ? stampOf(this.#file)?.stamp : undefined;
    const shared = stamp ? SHARED_READS.get(this.#file!) : undefined;
    if (shared && shared.stamp === stamp && shared.validator === this.#validator) {
      this.#stored = shared.stored as Map<string, [string, T]>;
      this.#trustedBefore = shared.scannedAt - RACY_MS;
      return;
    }
    // The same lines as the profiles' cache (CacheHead), of `[file, stamp, value]` rows.
    if (this.#file && !ignoreCache) {
      try {
        readJsonLines(this.#file, (lines) => {
          const head = lines.next().value as CacheHead | undefined;
          if (head?.version !== CACHE_VERSION || head.validator !== this.#validator) return;
          for (const line of lines) for (const [file, stamp, value] of line as [string, string, T][]) this.#stored.set(file, [stamp, value]);
          if (this.#stored.size === head.count) scannedAt = head.scannedAt;
          else this.#stored.clear();
        });
      } catch {
        this.#stored.clear(); // none yet, or unreadable: parse
      }
    }
    this.#trustedBefore = scannedAt - RACY_MS;
    if (stamp) SHARED_READS.set(this.#file!, { stamp, validator: this.#validator, stored: this.#stored, scannedAt });
  }

  /**
   * The value stored for `file` if the file is unchanged since (it need not be read) and `usable`
   * accepts it; else undefined. Call before reading the file.
   */
  get(file: string, usable: (value: T) => boolean = () => true): T | undefined {
    if (!this.#file) return undefined;
    const stat = stampOf(file);
    if (!stat) return undefined;
    this.#stamps.set(file, stat.stamp);
    const hit = this.#stored.get(file);
    if (hit && hit[0] === stat.stamp && stat.changedMs < this.#trustedBefore && usable(hit[1])) {
      this.#next.set(file, hit);
      this.#hits++;
      return hit[1];
    }
    return undefined;
  }

  /**
   * The value stored for `file` when it was stored for exactly `stamp`, without `get`'s own check
   * of the stamp: for a caller that proved the file unchanged since (src/build/reuse/edit-path.ts).
   */
  storedFor(file: string, stamp: string): T | undefined {
    const hit = this.#stored.get(file);
    return hit && hit[0] === stamp ? hit[1] : undefined;
  }

  /** Stores the value parsed from `file`, which `get` looked at first. */
  set(file: string, value: T): void {
    const stamp = this.#stamps.get(file);
    if (!this.#file || stamp === undefined) return;
    this.#next.set(file, [stamp, value]);
    this.#changed = true;
  }

  /** How many values `get` found. */
  get hits(): number {
    return this.#hits;
  }

  /** Writes the values of this run (whole or not at all), when any is new or one stored is gone. */
  save(): void {
    if (!this.#file) return;
    if (!this.#changed && this.#next.size === this.#stored.size) return;
    const head: CacheHead = { version: CACHE_VERSION, validator: this.#validator, scannedAt: this.#scannedAt, count: this.#next.size };
    writeCache(this.#file, head, [...this.#next].map(([file, [stamp, value]]) => [file, stamp, value]));
  }
}
