// The build's promises under faults (src/build/faults.ts injects them): a build killed at any of
// its steps, a full disk, two builds at once. The last good release stays served, by the running
// server and a restarted one, and the next build succeeds and removes what the dead one left.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readLock } from '../../src/release/lock.ts';
import { BUILD_STEPS } from '../../src/build/faults.ts';
import { LOCK_FILE, leftovers, listReleases, readReleaseInfo, readsFromOf, releasePath, releasesDir, servedRelease } from '../../src/release/releases.ts';
import { locator } from '../../src/release/layers.ts';
import { serve } from '../../scripts/support/serve-build.ts';
import { BUILD_EPOCH, TEST_SITE_URL, buildFixture, ownBuild, type OwnBuild } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

let own: OwnBuild;
let edited = '';
/** What the tests here need of their build: its folder, its server, and builds into it with more environment. */
const service = {
  get dist() { return own.dist; },
  get base() { return own.base; },
  build: (contentDir: string, env: Record<string, string> = {}) => buildFixture(contentDir, own.dist, env),
};
beforeAll(async () => {
  own = await ownBuild('crash');
  edited = own.fixtureWith('edited', { 'profiles/bob.yaml': 'displayName: Robert\ncreatedAt: 2024-11-02T00:00:00Z\n' });
}, 120_000);
afterAll(() => own?.stop());

/** The served release's answer for bob, read where the release holds it (src/release/layers.ts). */
const siteIndex = (dist: string) => {
  const id = servedRelease(dist)!;
  const client = path.join(releasePath(dist, id), 'client');
  const at = locator(releasesDir(dist), client, readReleaseInfo(dist, id)?.layers)('api/v1/users/bob')!;
  return fs.readFileSync(path.join(at, 'api', 'v1', 'users', 'bob'), 'utf8');
};
const lockFile = (dist: string) => path.join(releasesDir(dist), LOCK_FILE);
const bobOf = async (base: string) => {
  // A connection of its own: minutes of builds pass between two of these, and a kept-alive socket
  // the server is closing as it is reused says nothing about releases.
  const r = await fetch(`${base}/api/v1/users/bob`, { headers: { connection: 'close' } });
  return { status: r.status, name: (await r.json() as { data: { displayName: string } }).data.displayName };
};

describe('a build that dies', () => {
  test('killed at each step, it leaves the last good release served, and the next build cleans up', async () => {
    const { dist, base } = service;
    // The fixture served (whatever another test left), the edited content built by the dying builds.
    expect(service.build(FIXTURE).status).toBe(0);
    const good = servedRelease(dist)!;
    const goodIndex = siteIndex(dist);
    for (const step of BUILD_STEPS) {
      const b = service.build(edited, { BUILD_FAULT: step });
      expect(b.signal, `${step}: ${b.stderr}`).toBe('SIGKILL');
      expect(b.stderr).toContain(`BUILD_FAULT: SIGKILL at ${step}`);
      // The dead build's lock is still there, for the next build to take over.
      expect(readLock(lockFile(dist)).holder?.pid, step).toBe(b.pid);
      if (step === 'switched') break;
      expect(servedRelease(dist), step).toBe(good);
      expect(siteIndex(dist), step).toBe(goodIndex);
      expect(await bobOf(base), step).toEqual({ status: 200, name: 'Bob' });
      if (step === 'rendered') expect(leftovers(dist).length, 'a half-written release to clean up').toBeGreaterThan(0);
      if (step === 'switching') {
        // Killed between making the new link and renaming it over dist: a restarted server serves the good release.
        expect(fs.readdirSync(path.dirname(dist)).some((n) => n.startsWith('dist.switch-'))).toBe(true);
        const restarted = await serve({ env: { DIST_DIR: dist } });
        try {
          expect(await bobOf(restarted.base)).toEqual({ status: 200, name: 'Bob' });
        } finally {
          await restarted.stop();
        }
      }
    }
    // Killed after the switch: the new release is served, complete.
    expect(servedRelease(dist)).not.toBe(good);
    expect(siteIndex(dist)).toContain('"displayName":"Robert"');

    const next = service.build(FIXTURE);
    expect(next.status, String(next.stderr)).toBe(0);
    expect(next.stderr).toMatch(/took over the lock of build pid \d+/);
    expect(leftovers(dist)).toEqual([]);
    expect(fs.existsSync(lockFile(dist))).toBe(false);
    // Three kept, and any release they read files from (a layered release's base).
    const releases = listReleases(dist);
    const kept = releases.slice(-3);
    const readFrom = new Set(kept.flatMap(readsFromOf(dist)));
    expect(releases.filter((id) => !kept.includes(id) && !readFrom.has(id))).toEqual([]);
    expect(siteIndex(dist)).toBe(goodIndex);
  }, 240_000);

  test('a full disk fails the build with the reason, leaves nothing behind, and the served release stays', async () => {
    const { dist, base } = service;
    // The fixture served (whatever another test left), so that each failing build of the edited
    // content has pages and answers to write at every step.
    expect(service.build(FIXTURE).status).toBe(0);
    const before = { served: servedRelease(dist)!, index: siteIndex(dist), releases: listReleases(dist) };
    // `users`: the user answers' writer, whose failure waits for the render to end (it ended the
    // build with Node's unhandled rejection, leaving the staging folders on the full disk).
    for (const step of ['rendering', 'users', 'written', 'sealed'] as const) {
      const b = service.build(edited, { BUILD_FAULT: `enospc@${step}` });
      expect(b.status, step).toBe(1);
      // In words: the disk, what to do, and that nothing needs cleaning up; then what failed.
      expect(b.stderr, step).toMatch(/build failed: the disk holding .*dist\.releases\/ is full \(ENOSPC\): free space there, then build again\. Nothing needs cleaning up/);
      expect(b.stderr, step).toContain('ENOSPC: no space left on device');
      expect(b.stderr, step).not.toMatch(/triggerUncaughtException|kept renderer failed/);
      // No step's line is left open for the reason to run on (pipeline.ts `step`).
      expect(b.stdout.trimEnd(), step).not.toMatch(/…$/);
      expect(b.stderr).toContain(`still serves release ${before.served}`);
      expect(servedRelease(dist)).toBe(before.served);
      expect(siteIndex(dist)).toBe(before.index);
      expect(leftovers(dist), step).toEqual([]);
      expect(fs.existsSync(lockFile(dist)), step).toBe(false);
      // Only releases this build would have pruned anyway may be gone; the served one never.
      expect(listReleases(dist)).toContain(before.served);
      expect(before.releases).toEqual(expect.arrayContaining(listReleases(dist)));
      expect((await bobOf(base)).status).toBe(200);
    }
    expect(service.build(edited).status).toBe(0);
  }, 120_000);
});

describe('output nobody reads', () => {
  test('a build whose reader went away (`npm run build | head -1`) goes on, and serves its release', async () => {
    const before = servedRelease(service.dist);
    const build = spawn(process.execPath, ['scripts/build-site.ts'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CONTENT_DIR: edited, SITE_URL: TEST_SITE_URL, DIST_DIR: service.dist, SOURCE_DATE_EPOCH: String(BUILD_EPOCH), PROFILES_INCREMENTAL: '0' },
    });
    // The first line read, both pipes closed, as `head -1` closes its input: every later write fails with EPIPE.
    let stderr = '';
    build.stdout.once('data', () => { build.stdout.destroy(); build.stderr.destroy(); });
    build.stderr.on('data', (d) => { stderr += d; });
    const code = await new Promise<number | null>((resolve) => build.once('exit', resolve));
    expect(code, stderr).toBe(0);
    expect(servedRelease(service.dist)).not.toBe(before);
    expect(siteIndex(service.dist)).toContain('Robert');
    expect(leftovers(service.dist)).toEqual([]);
  }, 60_000);
});

describe('two builds at once', () => {
  test('the second refuses at once, naming the first, which then finishes', async () => {
    const first = spawn(process.execPath, ['scripts/build-site.ts'], {
      cwd: ROOT,
      env: { ...process.env, CONTENT_DIR: edited, SITE_URL: TEST_SITE_URL, DIST_DIR: service.dist, SOURCE_DATE_EPOCH: String(BUILD_EPOCH), BUILD_FAULT: 'pause@locked' },
    });
    let out = '';
    first.stderr.on('data', (d) => { out += d; });
    await new Promise<void>((resolve, reject) => {
      first.stdout.on('data', (d) => { out += d; if (out.includes('PAUSED locked')) resolve(); });
      first.once('exit', () => reject(new Error(out)));
    });
    const second = service.build(FIXTURE);
    expect(second.status).toBe(75);
    expect(second.stderr).toContain(`build: another build holds the lock: pid ${first.pid} on ${os.hostname()}, started `);
    expect(second.stdout).toBe('');
    first.stdin.end();
    const code = await new Promise((resolve) => first.once('exit', resolve));
    expect(code, out).toBe(0);
  }, 60_000);
});
