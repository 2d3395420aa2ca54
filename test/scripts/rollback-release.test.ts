// `npm run rollback`: one atomic switch back to the release served before, refused while a build runs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { acquireBuildLock } from '../../src/release/lock.ts';
import { LOCK_FILE, nextReleaseId, releasePath, releasesDir, servedRelease, switchRelease, writeReleaseInfo } from '../../src/release/releases.ts';
import { ROOT } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

/** Three releases as builds leave them, each recording the one served before it; the newest served. */
function threeReleases() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rollback-'));
  made.push(dir);
  const dist = path.join(dir, 'dist');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = nextReleaseId(dist);
    fs.mkdirSync(releasePath(dist, id), { recursive: true });
    writeReleaseInfo(releasePath(dist, id), { id, previous: ids.at(-1) ?? null, builtAt: `2026-01-0${i + 1}T00:00:00.000Z` });
    ids.push(id);
  }
  switchRelease(dist, ids[2]!);
  return { dist, ids };
}
const rollback = (dist: string, ...args: string[]) => spawnSync(process.execPath, ['scripts/rollback-release.ts', ...args], {
  cwd: ROOT, encoding: 'utf8', env: { ...process.env, DIST_DIR: dist },
});

describe('npm run rollback', () => {
  test('--help prints the usage', () => {
    const r = rollback('/nonexistent/dist', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: npm run rollback/);
    expect(rollback('/nonexistent/dist', '--bogus').status).toBe(2);
    const both = rollback('/nonexistent/dist', '--list', '--to', 'x');
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/give --list or --to, not both/);
  });

  test('switches back one release at a time, then says there is none', () => {
    const { dist, ids } = threeReleases();
    const once = rollback(dist);
    expect(once.status, once.stderr).toBe(0);
    expect(servedRelease(dist)).toBe(ids[1]);
    expect(fs.lstatSync(dist).isSymbolicLink()).toBe(true);
    expect(rollback(dist).status).toBe(0);
    expect(servedRelease(dist)).toBe(ids[0]);
    const none = rollback(dist);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain(`no release to go back to from ${ids[0]}`);
    expect(servedRelease(dist)).toBe(ids[0]);
    // Forward again by name; the list marks the one served.
    expect(rollback(dist, '--to', ids[2]!).status).toBe(0);
    expect(servedRelease(dist)).toBe(ids[2]);
    expect(rollback(dist, '--list').stdout).toContain(`* ${ids[2]}`);
    expect(fs.readdirSync(path.dirname(dist)).sort()).toEqual(['dist', 'dist.releases']);
  });

  test('before any build: one line that says to build, for a rollback and for `--to`, and no folder made', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rollback-'));
    made.push(dir);
    for (const args of [[], ['--to', 'x']]) {
      const r = rollback(path.join(dir, 'dist'), ...args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr.trim(), args.join(' ')).toMatch(/^rollback: no releases beside .*dist: run `npm run build` first\.$/);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('refuses while a build holds the lock, and changes nothing', () => {
    const { dist, ids } = threeReleases();
    const lock = acquireBuildLock(path.join(releasesDir(dist), LOCK_FILE));
    try {
      const r = rollback(dist);
      expect(r.status).toBe(75);
      expect(r.stderr).toContain(`another build holds the lock: pid ${process.pid}`);
      expect(servedRelease(dist)).toBe(ids[2]);
    } finally {
      lock.release();
    }
  });
});
