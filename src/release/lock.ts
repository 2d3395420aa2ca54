// The build lock: one build (or rollback) at a time per DIST_DIR. The file holds who has it, and
// appears whole or not at all: written to a temporary file first, then hard-linked into place
// (link fails when the lock exists, as O_EXCL does). A second build refuses at once, naming the
// holder. A lock whose process is gone (a killed build) is taken over, under a short guard so two
// builds never take over the same lock.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface LockHolder {
  pid: number;
  host: string;
  startedAt: string;
  command: string;
}

export class BuildLockHeld extends Error {
  readonly file: string;
  readonly holder: LockHolder | undefined;
  constructor(file: string, holder: LockHolder | undefined) {
    super(holder
      ? `another build holds the lock: pid ${holder.pid} on ${holder.host}, started ${holder.startedAt} (${holder.command}). Wait for it to finish; if no such process runs, remove ${file}.`
      : `another build is taking the lock ${file} right now. Try again; if no build runs, remove it.`);
    this.file = file;
    this.holder = holder;
  }
}

export interface BuildLock {
  /** The dead holder whose lock this build took over, if any. */
  tookOverFrom: LockHolder | undefined;
  release(): void;
}

/** A takeover guard older than this was left by a process killed in the middle of a takeover. */
const GUARD_STALE_MS = 10_000;

export function acquireBuildLock(file: string, command = 'build'): BuildLock {
  const me: LockHolder = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString(), command };
  removeDeadTemps(file);
  // Written in full before it can be the lock: a full disk or a kill while writing leaves only this
  // temporary file, never an empty lock that refuses the next build (exit 75) though no build runs.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = fs.openSync(temp, 'wx');
    try {
      fs.writeSync(fd, JSON.stringify(me));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    let tookOverFrom: LockHolder | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        fs.linkSync(temp, file);
        return { tookOverFrom, release: () => releaseLock(file, me) };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      // A lock without a readable holder was written by no build of this version: nothing holds it.
      const { holder } = readLock(file);
      if (holder && isAlive(holder)) throw new BuildLockHeld(file, holder);
      if (takeOver(file, holder)) tookOverFrom = holder;
    }
    throw new BuildLockHeld(file, readLock(file).holder);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Temporary lock files (`<lock>.<pid>.<random>.tmp`) of processes killed between writing and linking them. */
function removeDeadTemps(file: string): void {
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(file));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = name.startsWith(prefix) && name.endsWith('.tmp') ? Number(name.slice(prefix.length).split('.')[0]) : NaN;
    if (Number.isInteger(pid) && pid > 0 && !isAlive({ pid, host: os.hostname(), startedAt: '', command: '' })) {
      fs.rmSync(path.join(path.dirname(file), name), { force: true });
    }
  }
}

/** Removes a dead holder's lock, unless someone else got there first; true when this call removed it. */
function takeOver(file: string, dead: LockHolder | undefined): boolean {
  const guard = `${file}.takeover`;
  try {
    fs.mkdirSync(guard);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    try {
      if (Date.now() - fs.statSync(guard).mtimeMs > GUARD_STALE_MS) fs.rmdirSync(guard);
    } catch { /* removed meanwhile */ }
    return false;
  }
  try {
    // Still the same dead holder? Another build may have taken over and locked meanwhile.
    const now = readLock(file).holder;
    if (now?.pid !== dead?.pid || now?.startedAt !== dead?.startedAt) return false;
    fs.rmSync(file, { force: true });
    return true;
  } finally {
    fs.rmdirSync(guard);
  }
}

function releaseLock(file: string, me: LockHolder): void {
  const { holder } = readLock(file);
  if (holder?.pid === me.pid && holder.startedAt === me.startedAt) fs.rmSync(file, { force: true });
}

export function readLock(file: string): { holder: LockHolder | undefined; ageMs: number } {
  try {
    const text = fs.readFileSync(file, 'utf8');
    const ageMs = Date.now() - fs.statSync(file).mtimeMs;
    try {
      const holder = JSON.parse(text) as LockHolder;
      return { holder: Number.isInteger(holder?.pid) ? holder : undefined, ageMs };
    } catch {
      return { holder: undefined, ageMs };
    }
  } catch {
    return { holder: undefined, ageMs: Infinity };
  }
}

/** Whether the holder may still run: a process of another host cannot be checked, so it may. */
function isAlive(holder: LockHolder): boolean {
  return holder.host !== os.hostname() || processRuns(holder.pid);
}

/**
 * Whether a process of this host with that id runs (one of another user's counts). A zombie does
 * not: a build killed with its parent stays one until PID 1 reaps it, which in a container without
 * an init never happens, and `kill(pid, 0)` still finds it.
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/** Linux's state letter in /proc/<pid>/stat, after the name in parentheses (which may hold any byte). */
function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}
