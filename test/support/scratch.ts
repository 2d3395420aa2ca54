// Where a test run writes its builds and temporary files: a folder of its own on a RAM disk
// (/dev/shm) when the machine has one with room. Creating inodes on this machine's ext4 disk, which
// builds delete by the hundred thousand, was a tenth of the suite's CPU (perf: ext4's
// `recently_deleted` looking over freed inodes on every create); on tmpfs the suite's kernel time
// fell from 83 to 55-58 s (its wall time within this machine's noise). Otherwise the run writes
// inside the project, as before.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The RAM disk's folder of test runs, one folder per run named by the run's pid. */
export const RUNS_DIR = '/dev/shm/profile-lookup-tests';
/** The room a run may need there: the largest test build is a few hundred MB. */
const ROOM_BYTES = 4 * 1024 ** 3;
/** The variable that gives the test files the run's folder of builds (vitest.config.ts sets it). */
export const WORK_ENV = 'PROFILE_TESTS_WORK';

/** This machine's RAM disk, if it is one with room. */
function ramDisk(): boolean {
  try {
    const s = fs.statfsSync('/dev/shm');
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    // TMPFS_MAGIC: a folder of the disk, not memory, would gain nothing.
    return s.type === 0x01021994 && s.bavail * s.bsize >= ROOM_BYTES;
  } catch {
    return false;
  }
}

/**
 * The run's folders, for the run with main process `pid`: `work`, where a test file keeps its
 * builds (its `node_modules` links the project's, for the server bundle and DIST_DIR's rule), and
 * `tmp`, TMPDIR for the test files and everything they start (no `node_modules` above it, as the
 * tests of a folder outside the project want). Undefined: no RAM disk, the project's cache.
 */
export function runScratch(pid = process.pid): { dir: string; work: string; tmp: string } | undefined {
  if (!ramDisk()) return undefined;
  const dir = path.join(RUNS_DIR, String(pid));
  return { dir, work: path.join(dir, 'work'), tmp: path.join(dir, 'tmp') };
}

/** Where a test file keeps its builds: the run's folder, or inside the project. */
export const workRoot = (): string => process.env[WORK_ENV] ?? path.join(ROOT, 'node_modules', '.cache', 'profile-tests');

/** Makes the run's folders (global-setup.ts), and removes those of runs that no longer run. */
export function makeRunScratch(scratch: NonNullable<ReturnType<typeof runScratch>>, runs: (pid: number) => boolean): void {
  for (const name of fs.existsSync(RUNS_DIR) ? fs.readdirSync(RUNS_DIR) : []) {
    if (/^\d+$/.test(name) && !runs(Number(name))) fs.rmSync(path.join(RUNS_DIR, name), { recursive: true, force: true });
  }
  fs.mkdirSync(scratch.work, { recursive: true });
  fs.mkdirSync(scratch.tmp, { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(scratch.work, 'node_modules'));
}
