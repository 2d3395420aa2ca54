// The release folder and its link (src/release/releases.ts) and the build lock (src/release/lock.ts),
// on their own; test/build/releases-crash.test.ts runs the real build against them.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { BuildLockHeld, acquireBuildLock, processRuns, readLock } from '../../src/release/lock.ts';
import {
  adoptPlainBuild, buildingPath, leftovers, listReleases, nextReleaseId, recoverLink, releasePath, releasesDir, releasesToPrune,
  retireRelease, servedRelease, switchRelease,
} from '../../src/release/releases.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });
function tempDist(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'releases-'));
  made.push(dir);
  return path.join(dir, 'dist');
}
/** A complete release holding one file that names it. */
function makeRelease(dist: string, id = nextReleaseId(dist)): string {
  fs.mkdirSync(path.join(releasePath(dist, id), 'client'), { recursive: true });
  fs.writeFileSync(path.join(releasePath(dist, id), 'client', 'which'), id);
  return id;
}
const servedFile = (dist: string) => fs.readFileSync(path.join(dist, 'client', 'which'), 'utf8');

describe('releases', () => {
  test('ids sort by sequence, and the link is switched to a release in one rename', () => {
    const dist = tempDist();
    const a = makeRelease(dist);
    const b = makeRelease(dist);
    expect(a).toMatch(/^000001-\d{8}T\d{6}Z$/);
    expect(b.startsWith('000002-')).toBe(true);
    switchRelease(dist, a);
    expect(servedRelease(dist)).toBe(a);
    expect(servedFile(dist)).toBe(a);
    switchRelease(dist, b);
    expect(fs.lstatSync(dist).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(dist)).toBe(path.join('dist.releases', b));
    expect(servedFile(dist)).toBe(b);
    expect(listReleases(dist)).toEqual([a, b]);
    // No temporary link left beside it.
    expect(fs.readdirSync(path.dirname(dist)).sort()).toEqual(['dist', 'dist.releases']);
  });

  test('pruning keeps the new release, the served one and the newest others; never the served one', () => {
    const ids = ['000001-x', '000002-x', '000003-x', '000004-x'];
    expect(releasesToPrune(ids, '000004-x', '000005-x', 3)).toEqual(['000001-x', '000002-x']);
    // Rolled back to 2: it stays (the rollback of the new release), and so does the newest other.
    expect(releasesToPrune(ids, '000002-x', '000005-x', 3)).toEqual(['000001-x', '000003-x']);
    expect(releasesToPrune([], undefined, '000001-x', 3)).toEqual([]);
  });

  test('a retired release is no longer a release, and dead builds\' folders and links are leftovers', () => {
    const dist = tempDist();
    const a = makeRelease(dist);
    const b = makeRelease(dist);
    switchRelease(dist, b);
    const half = buildingPath(dist, nextReleaseId(dist));
    fs.mkdirSync(`${half}.shard1`, { recursive: true });
    fs.mkdirSync(half);
    fs.symlinkSync('nowhere', `${dist}.switch-99999`);
    fs.writeFileSync(path.join(releasesDir(dist), 'build.lock'), '{}');
    const trash = retireRelease(dist, a);
    expect(listReleases(dist)).toEqual([b]);
    expect(leftovers(dist).sort()).toEqual([half, `${half}.shard1`, trash, `${dist}.switch-99999`].sort());
    // A new id never reuses the sequence of a folder being built or removed.
    expect(nextReleaseId(dist).startsWith('000004-')).toBe(true);
  });

  test('nor of the user files a dead build left alone: in the same second, its clean-up would delete the new build\'s', () => {
    const dist = tempDist();
    const a = makeRelease(dist);
    switchRelease(dist, a);
    const now = new Date('2026-11-23T03:00:00Z');
    const dead = nextReleaseId(dist, now);
    // Killed after its release folder was removed, before its staged user files were.
    fs.mkdirSync(`${buildingPath(dist, dead)}.users`, { recursive: true });
    expect(leftovers(dist)).toEqual([`${buildingPath(dist, dead)}.users`]);
    const next = nextReleaseId(dist, now);
    expect(next).not.toBe(dead);
    expect(next.startsWith('000003-')).toBe(true);
  });

  test('a plain dist/ (and dist.prev/) from before releases become releases, still served', () => {
    const dist = tempDist();
    fs.mkdirSync(path.join(dist, 'client'), { recursive: true });
    fs.writeFileSync(path.join(dist, 'client', 'which'), 'plain');
    fs.mkdirSync(`${dist}.prev`);
    const [prev, plain] = adoptPlainBuild(dist);
    expect(servedRelease(dist)).toBe(plain);
    expect(servedFile(dist)).toBe('plain');
    expect(listReleases(dist)).toEqual([prev, plain]);
    expect(fs.existsSync(`${dist}.prev`)).toBe(false);
    // Killed between the renames of the adoption: no link; the newest release is linked again.
    fs.rmSync(dist);
    expect(recoverLink(dist)).toBe(plain);
    expect(servedFile(dist)).toBe('plain');
  });
});

describe('the build lock', () => {
  test('a second holder is refused at once, naming the first; released, it can be taken', () => {
    const file = path.join(path.dirname(tempDist()), 'build.lock');
    const first = acquireBuildLock(file);
    let refused: unknown;
    try { acquireBuildLock(file); } catch (e) { refused = e; }
    expect(refused).toBeInstanceOf(BuildLockHeld);
    expect((refused as BuildLockHeld).holder).toMatchObject({ pid: process.pid, host: os.hostname() });
    expect((refused as Error).message).toContain(`pid ${process.pid} on ${os.hostname()}`);
    first.release();
    expect(fs.existsSync(file)).toBe(false);
    acquireBuildLock(file).release();
  });

  test('a build whose write of the lock fails (a full disk) leaves nothing that refuses the next', async () => {
    const file = path.join(path.dirname(tempDist()), 'build.lock');
    const lockModule = path.resolve('src/release/lock.ts');
    // `ulimit -f 0`: the kernel refuses the first byte written to any file, as a full disk does
    // (EFBIG with SIGXFSZ caught; ENOSPC on a full disk), after the file was created.
    const script = `process.on('SIGXFSZ', () => {});
      const { acquireBuildLock } = await import(${JSON.stringify(lockModule)});
      try { acquireBuildLock(${JSON.stringify(file)}); console.log('locked'); } catch (e) { console.log(e.code); }`;
    // Without Node's compile cache (vitest.config.ts), which Node writes at exit past the limit.
    const { NODE_COMPILE_CACHE: _cache, ...env } = process.env;
    const child = spawn('bash', ['-c', 'ulimit -f 0 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d; });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect({ out: out.trim(), code }).toEqual({ out: 'EFBIG', code: 0 });
    // The next build, at once: no empty lock is left to refuse it.
    const lock = acquireBuildLock(file);
    expect(readLock(file).holder?.pid).toBe(process.pid);
    lock.release();
    expect(fs.readdirSync(path.dirname(file)).filter((n) => n.startsWith('build.lock'))).toEqual([]);
  });

  test('the temporary lock file of a build killed before linking it is removed by the next', async () => {
    const file = path.join(path.dirname(tempDist()), 'build.lock');
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => child.once('exit', resolve));
    const dead = `${file}.${child.pid}.0badf00d.tmp`;
    const mine = `${file}.${process.pid}.0badf00d.tmp`;
    fs.writeFileSync(dead, '{"pid":');
    fs.writeFileSync(mine, '{}');
    acquireBuildLock(file).release();
    expect(fs.readdirSync(path.dirname(file)).filter((n) => n.startsWith('build.lock')).sort()).toEqual([path.basename(mine)]);
  });

  test('a lock left by a dead process is taken over', async () => {
    const file = path.join(path.dirname(tempDist()), 'build.lock');
    // A real process that has exited: its pid is free.
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => child.once('exit', resolve));
    fs.writeFileSync(file, JSON.stringify({ pid: child.pid, host: os.hostname(), startedAt: '2026-01-01T00:00:00.000Z', command: 'build' }));
    const lock = acquireBuildLock(file);
    expect(lock.tookOverFrom?.pid).toBe(child.pid);
    expect(readLock(file).holder?.pid).toBe(process.pid);
    lock.release();
  });

  test.runIf(fs.existsSync('/proc/self/stat'))('a lock left by a build that is a zombie (killed with its parent, not yet reaped) is taken over', async () => {
    const file = path.join(path.dirname(tempDist()), 'build.lock');
    // `sleep` never reaps the child it inherits from the shell it replaced: that child, ended only
    // once the shell is `sleep` (bash reaps its own children), stays a zombie.
    const parent = spawn('bash', ['-c', 'sh -c "read line" <&0 & echo $!; exec sleep 30'], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(String(d).trim()))));
      await expect.poll(() => fs.readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim(), { timeout: 5_000 }).toBe('sleep');
      parent.stdin.end('\n');
      const state = () => { const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1'); return stat[stat.lastIndexOf(')') + 2]; };
      await expect.poll(state, { timeout: 5_000 }).toBe('Z');
      // `kill(pid, 0)` finds it (unless something reaped it since); it runs no build.
      expect(processRuns(pid)).toBe(false);
      fs.writeFileSync(file, JSON.stringify({ pid, host: os.hostname(), startedAt: '2026-01-01T00:00:00.000Z', command: 'build' }));
      const lock = acquireBuildLock(file);
      expect(lock.tookOverFrom?.pid).toBe(pid);
      lock.release();
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
