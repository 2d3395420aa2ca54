// When each pre-rendered answer's data last changed. A pre-rendered answer's `meta.timestamp` is the
// time of the build that last changed its `data`, not of the latest build: a build then leaves the
// bytes (and strong ETag) of every unchanged answer as they were, so it rewrites only the files
// that changed and CDN copies of the others stay valid (docs/api.md). Each release keeps the
// record in `server/answer-times.json`; the next build reads the served release's.
import { hash } from 'node:crypto';
import fs from 'node:fs';

const VERSION = 1;

/** A hash of an answer's data, and the build time that data was first published with. */
type Stamp = [hash: string, timestamp: string];

interface AnswerTimesFile {
  version: number;
  /** username → the stamp of `/api/v1/users/<username>`. */
  users: Record<string, Stamp>;
  /** The stamp of the creators list's first page. */
  creators?: Stamp;
}

// One-shot `hash`: twice as fast as createHash for inputs this small, and it runs 100,000 times a build.
export const dataHash = (data: Uint8Array | string): string => hash('sha1', data, 'base64url');

export class AnswerTimes {
  readonly #previous: AnswerTimesFile | undefined;
  readonly #next: AnswerTimesFile = { version: VERSION, users: Object.create(null) };
  readonly #builtAt: string;
  /** Users whose data is new or changed since the previous record (all of them without one). */
  readonly changedUsers: string[] = [];

  /** `previousFile`: the served release's record; none (or `ignorePrevious`) stamps everything with `builtAt`. */
  constructor(builtAt: string, previousFile?: string, ignorePrevious = false) {
    this.#builtAt = builtAt;
    this.#previous = previousFile && !ignorePrevious ? read(previousFile) : undefined;
  }

  /** Whether there was a previous record to compare with. */
  get hasPrevious(): boolean {
    return this.#previous !== undefined;
  }

  readonly #users = new Map<string, { timestamp: string; changed: boolean }>();

  /**
   * The `meta.timestamp` for this user's answer with this `data`, and whether the data changed;
   * noted for the next build. Asked again for the same user (in the same build), the same answer.
   */
  user(username: string, data: Uint8Array | string): { timestamp: string; changed: boolean } {
    const known = this.#users.get(username);
    if (known) return known;
    const hash = dataHash(data);
    const before = this.#previous?.users[username];
    const changed = !before || before[0] !== hash;
    const timestamp = changed ? this.#builtAt : before[1];
    if (changed) this.changedUsers.push(username);
    this.#next.users[username] = [hash, timestamp];
    const result = { timestamp, changed };
    this.#users.set(username, result);
    return result;
  }

  /**
   * Keeps the previous record of this user's answer, whose data the caller knows to be the same
   * (the same public user on the same date: page-reuse.ts `sameInputs`), without hashing it; false
   * when there is none. Later calls of `user` for this user answer from it.
   */
  keep(username: string): boolean {
    if (this.#users.has(username)) return true;
    const before = this.#previous?.users[username];
    if (!before || !Object.hasOwn(this.#previous!.users, username)) return false;
    this.#next.users[username] = before;
    this.#users.set(username, { timestamp: before[1], changed: false });
    return true;
  }

  /** The `meta.timestamp` of the creators list's first page, given a hash of everything in it but its meta. */
  creators(hash: string): string {
    const before = this.#previous?.creators;
    const timestamp = before && before[0] === hash ? before[1] : this.#builtAt;
    this.#next.creators = [hash, timestamp];
    return timestamp;
  }

  write(file: string): void {
    fs.writeFileSync(file, JSON.stringify(this.#next));
  }
}

function read(file: string): AnswerTimesFile | undefined {
  try {
    const f = JSON.parse(fs.readFileSync(file, 'utf8')) as AnswerTimesFile;
    return f && f.version === VERSION && f.users && typeof f.users === 'object' ? f : undefined;
  } catch {
    return undefined; // no previous release, or one from before: every answer is stamped anew
  }
}
