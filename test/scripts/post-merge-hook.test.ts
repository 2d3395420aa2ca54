// scripts/deploy/post-merge, the git hook docs/operators.md gives for production: linked into a
// content repository, a `git pull` that brings in an edit builds it, and the release it serves has
// the edit; a pull that brings in a broken edit leaves the last good release served.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { servedRelease } from '../../src/release/releases.ts';
import { TEST_SITE_URL, BUILD_EPOCH, buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT, readServedFile } from '../support/helpers.ts';

const hasGit = !spawnSync('git', ['--version']).error;
const work = workDir('post-merge-hook');
const upstream = path.join(work, 'upstream');
const content = path.join(work, 'content');
const dist = path.join(work, 'dist');
// Stamps trusted at once (BUILD_SETTLE_MS=0), as in the edit path's tests: the clone writes every
// file a moment before the first build, and a pull right after would find them too new to trust
// (a whole read, correct but not what this test looks at) whenever the builds are fast.
const env = { ...process.env, CONTENT_DIR: content, DIST_DIR: dist, SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(BUILD_EPOCH), BUILD_SETTLE_MS: '0' };

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.net', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', env });
  expect(r.status, `git ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
};
const bobAnswer = () => JSON.parse(readServedFile(path.join(dist, 'client', 'api', 'v1', 'users', 'bob')).toString('utf8')) as { data: { displayName: string } };
const editBob = (line: string) => {
  const file = path.join(upstream, 'profiles', 'bob.yaml');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^displayName: .*$/m, line));
  git(upstream, 'commit', '-qam', line);
};

describe.skipIf(!hasGit)('the post-merge hook (skipped without git)', () => {
  beforeAll(() => {
    fs.rmSync(work, { recursive: true, force: true });
    fs.cpSync(FIXTURE, upstream, { recursive: true });
    git(upstream, 'init', '-q');
    git(upstream, 'add', '.');
    git(upstream, 'commit', '-qm', 'content');
    git(work, 'clone', '-q', upstream, content);
    fs.symlinkSync(path.join(ROOT, 'scripts', 'deploy', 'post-merge'), path.join(content, '.git', 'hooks', 'post-merge'));
    const r = buildFixture(content, dist, { BUILD_SETTLE_MS: '0' });
    expect(r.status, r.stderr).toBe(0);
  }, 120_000);
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test('git pull builds the edit it brought in, and the release served has it', () => {
    const before = servedRelease(dist);
    expect(bobAnswer().data.displayName).toBe('Bob');
    editBob('displayName: Bob Pulled');
    const pull = git(content, 'pull', '--ff-only');
    expect(pull.stdout + pull.stderr).toContain('post-merge: building');
    // git passes a hook's stdout on to its own stderr.
    expect(pull.stderr).toMatch(/^Built 7 profiles/m);
    // Told what the pull changed, as npm start tells a build: it looked at bob's file, then checked the rest.
    expect(pull.stderr).toMatch(/Finding the changed profiles/);
    expect(pull.stderr).not.toMatch(/every profile is (stamped|read)/);
    expect(pull.stderr).toMatch(/Nothing else changed before the last build began/);
    expect(servedRelease(dist)).not.toBe(before);
    expect(bobAnswer().data.displayName).toBe('Bob Pulled');
  }, 120_000);

  test('a pull of a broken edit keeps the last good release and says why', () => {
    const before = servedRelease(dist);
    const served = bobAnswer().data.displayName;
    editBob('displayName: [broken');
    const pull = git(content, 'pull', '--ff-only');
    expect(pull.stderr).toMatch(/profiles\/bob\.yaml:\d+:\d+: YAML syntax/);
    expect(servedRelease(dist)).toBe(before);
    expect(bobAnswer().data.displayName).toBe(served);
  }, 120_000);
});
