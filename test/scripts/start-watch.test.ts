// `npm start` keeps the content folder live: it builds, serves, and builds again after each change
// to the content; the server picks the new release up by itself. A broken edit keeps the last good
// release served, and its problem is printed once however often the same broken file is saved.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serve, type RunningServer } from '../../scripts/support/serve-build.ts';
import { BuildLockHeld, acquireBuildLock } from '../../src/release/lock.ts';
import { LOCK_FILE, releasesDir } from '../../src/release/releases.ts';
import { BUILD_EPOCH, TEST_SITE_URL, buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

const work = workDir('start-watch');
const content = path.join(work, 'content');
const profile = path.join(content, 'profiles', 'bob.yaml');
let start: RunningServer;

/** Polls `check` until it returns a value, or fails with what it saw last after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms (last: ${String(last)})\n${start.output()}`);
    // A poll, not a wait for an answer: the next request as soon as the event loop is free.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const displayName = async () => {
  const r = await fetch(`${start.base}/api/v1/users/bob`);
  return ((await r.json()) as { data: { displayName: string } }).data.displayName;
};
const count = (text: string, part: string) => text.split(part).length - 1;

beforeAll(async () => {
  fs.rmSync(work, { recursive: true, force: true });
  fs.cpSync(FIXTURE, content, { recursive: true });
  start = await serve({
    script: 'scripts/start-site.ts',
    env: { CONTENT_DIR: content, DIST_DIR: path.join(work, 'dist'), SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(BUILD_EPOCH) },
  });
}, 120_000);

afterAll(async () => {
  await start?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('npm start watches the content folder', () => {
  test('an edit is served by itself; a broken one keeps the old answer and says why once', async () => {
    // Each test makes its own edits from whatever is served, so they may run alone or in any order.
    expect(start.output()).toContain('start: watching');

    const text = fs.readFileSync(profile, 'utf8');
    fs.writeFileSync(profile, text.replace(/^displayName: .*$/m, 'displayName: Bob Live'));
    await until('new displayName', async () => ((await displayName()) === 'Bob Live' ? true : undefined));
    expect(start.output()).toMatch(/start: (a file|\d+ files) changed in .*: building \.\.\./);

    // Broken: the build fails, the last good release stays served.
    const broken = text.replace(/^displayName: .*$/m, 'displayName: [oops');
    const builds = () => count(start.output(), 'building ...');
    const failed = start.nextOutput(/start: the build failed \(exit code 1\)/);
    fs.writeFileSync(profile, broken);
    await failed;
    expect(await displayName()).toBe('Bob Live');
    const problem = 'YAML syntax';
    expect(count(start.output(), problem)).toBe(1);

    // Saved again, still broken the same way: one line, not the problem again.
    const building = builds();
    const again = start.nextOutput(/start: the build failed as before/);
    fs.writeFileSync(profile, `${broken}\n`);
    await again;
    expect(builds()).toBe(building + 1);
    expect(count(start.output(), problem)).toBe(1);
    expect(await displayName()).toBe('Bob Live');

    // Fixed: served again.
    fs.writeFileSync(profile, text.replace(/^displayName: .*$/m, 'displayName: Bob Fixed'));
    await until('fixed displayName', async () => ((await displayName()) === 'Bob Fixed' ? true : undefined));
  }, 180_000);

  test('a file saved by replacing it (sed -i, an editor\'s atomic save) is built, and so is every edit of it after', async () => {
    const text = fs.readFileSync(profile, 'utf8');
    const from = start.output().length;
    fs.writeFileSync(`${profile}.tmp`, text.replace(/^displayName: .*$/m, 'displayName: Bob Replaced'));
    fs.renameSync(`${profile}.tmp`, profile);
    await until('the replaced displayName', async () => ((await displayName()) === 'Bob Replaced' ? true : undefined));
    // One file changed, as the operator sees it: the temporary one, gone, is not counted.
    expect(start.output().slice(from)).toMatch(/start: a file changed in /);
    expect(start.output().slice(from)).not.toMatch(/start: \d+ files changed/);
    fs.writeFileSync(profile, text.replace(/^displayName: .*$/m, 'displayName: Bob In Place'));
    await until('the displayName written in place after', async () => ((await displayName()) === 'Bob In Place' ? true : undefined));
  }, 120_000);

  test('a hidden file (an editor\'s swap file) is no change', async () => {
    const building = count(start.output(), 'building ...');
    fs.writeFileSync(path.join(content, 'profiles', '.bob.yaml.swp'), 'x');
    // Then a real change: had the swap file counted, the two would be built one after the other or counted together.
    fs.writeFileSync(profile, fs.readFileSync(profile, 'utf8').replace(/^displayName: .*$/m, 'displayName: Bob Again'));
    await until('the last displayName', async () => ((await displayName()) === 'Bob Again' ? true : undefined));
    expect(count(start.output(), 'building ...')).toBe(building + 1);
    expect(start.output()).toMatch(/start: a file changed in [^\n]*\n(?![\s\S]*changed in)/);
  }, 120_000);

  test('a change while another build holds the lock is built once that build ends', async () => {
    // This test process holds the lock, as a build run by hand would: taken once the builder is
    // done with the last edit (after serving it, it checks the rest of the content under the lock).
    const lock = await until('the build lock', async () => {
      try {
        return acquireBuildLock(path.join(releasesDir(path.join(work, 'dist')), LOCK_FILE));
      } catch (e) {
        if (e instanceof BuildLockHeld) return undefined;
        throw e;
      }
    });
    const before = await displayName();
    const waiting = start.nextOutput(/start: trying again every 2 s/);
    try {
      fs.writeFileSync(profile, fs.readFileSync(profile, 'utf8').replace(/^displayName: .*$/m, 'displayName: Bob Locked'));
      await waiting;
      expect(await displayName()).toBe(before);
    } finally {
      lock.release();
    }
    await until('the displayName after the lock', async () => ((await displayName()) === 'Bob Locked' ? true : undefined));
    expect(count(start.output(), 'trying again every')).toBe(1);
  }, 120_000);
});

describe('npm start on content broken since the last build', () => {
  test('serves the release built before, says why, and builds the fix as any edit', async () => {
    const own = workDir('start-broken');
    fs.rmSync(own, { recursive: true, force: true });
    const [ownContent, dist] = [path.join(own, 'content'), path.join(own, 'dist')];
    fs.cpSync(FIXTURE, ownContent, { recursive: true });
    try {
      const built = buildFixture(ownContent, dist);
      expect(built.status, built.stderr).toBe(0);
      const bob = path.join(ownContent, 'profiles', 'bob.yaml');
      const text = fs.readFileSync(bob, 'utf8');
      fs.writeFileSync(bob, text.replace(/^displayName: .*$/m, 'displayName: [oops'));
      const broken = await serve({
        script: 'scripts/start-site.ts',
        env: { CONTENT_DIR: ownContent, DIST_DIR: dist, SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(BUILD_EPOCH) },
      });
      try {
        expect(broken.output()).toMatch(/YAML syntax/);
        expect(broken.output()).toMatch(/start: the build failed \(exit code 1\): serving the release built before, \d{6}-/);
        const name = async () => ((await (await fetch(`${broken.base}/api/v1/users/bob`)).json()) as { data: { displayName: string } }).data.displayName;
        expect(await name()).toBe('Bob');
        fs.writeFileSync(bob, text.replace(/^displayName: .*$/m, 'displayName: Bob Fixed'));
        const deadline = Date.now() + 60_000;
        while ((await name()) !== 'Bob Fixed') {
          if (Date.now() > deadline) throw new Error(`the fix was not served\n${broken.output()}`);
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        await broken.stop();
      }
      // With no release built before there is nothing to serve: it exits with the build's code, as before.
      fs.writeFileSync(bob, text.replace(/^displayName: .*$/m, 'displayName: [oops'));
      const none = path.join(own, 'none', 'dist');
      const r = spawnSync(process.execPath, ['scripts/start-site.ts'], {
        cwd: ROOT, encoding: 'utf8', timeout: 60_000,
        env: { ...process.env, CONTENT_DIR: ownContent, DIST_DIR: none, SITE_URL: TEST_SITE_URL, PORT: '0' },
      });
      expect(r.status, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/serving the release built before/);
      expect(fs.existsSync(none)).toBe(false);
    } finally {
      fs.rmSync(own, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('npm start -- --no-watch', () => {
  test('builds once and serves, watching nothing', async () => {
    const own = workDir('start-no-watch');
    fs.rmSync(own, { recursive: true, force: true });
    try {
      const once = await serve({
        script: 'scripts/start-site.ts', args: ['--no-watch'],
        env: { CONTENT_DIR: FIXTURE, DIST_DIR: path.join(own, 'dist'), SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(BUILD_EPOCH) },
      });
      try {
        const r = await fetch(`${once.base}/api/v1/users/bob`);
        expect(((await r.json()) as { data: { displayName: string } }).data.displayName).toBe('Bob');
        expect(once.output()).toMatch(/^Built 7 profiles/m);
        expect(once.output()).not.toContain('start: watching');
      } finally {
        await once.stop();
      }
    } finally {
      fs.rmSync(own, { recursive: true, force: true });
    }
  }, 120_000);
});
