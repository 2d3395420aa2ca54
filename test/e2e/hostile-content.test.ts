// Hostile content end to end: `npm run check` and `npm run build` (their real scripts) refuse a
// decoration image that is a link to a secret outside the content, and nothing is published.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { FIXTURE, ROOT, readDecoded } from '../support/helpers.ts';
import { workDir } from '../support/built-server.ts';
import { shownPath } from '../../src/cli.ts';

const SECRET = 'CI_TOKEN=ghp_d0-n0t-publish-7f3a';
let parent = '';
let content = '';
// The build refuses a DIST_DIR outside the project: its server bundle resolves packages from there.
const work = workDir('hostile');
const dist = path.join(work, 'dist');

beforeAll(() => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-e2e-'));
  content = path.join(parent, 'content');
  fs.cpSync(FIXTURE, content, { recursive: true });
  fs.writeFileSync(path.join(parent, 'secret.env'), `${SECRET}\n`);
  fs.symlinkSync(path.join(parent, 'secret.env'), path.join(content, 'decorations', 'x.png'));
  fs.writeFileSync(path.join(content, 'decorations', 'x.yaml'), 'name: X\nfile: x.png\n');
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
});
afterAll(() => {
  fs.rmSync(parent, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
});

const run = (script: string, env: Record<string, string>) => spawnSync(process.execPath, [script], {
  cwd: ROOT, encoding: 'utf8', env: { ...process.env, GITHUB_ACTIONS: 'false', SITE_URL: 'https://profiles.example.net', ...env },
});

/** Every file under `dir`, read, and whether any holds the secret. */
function anyFileHolds(dir: string, text: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => readDecoded(f).toString('utf8').includes(text));
}

describe('a decoration image that is a link to a secret', () => {
  test('npm run check fails naming the file, the reason and the fix', () => {
    const r = run('scripts/check-content.ts', { CONTENT_DIR: content });
    expect(r.status).toBe(1);
    expect(r.stderr.replaceAll(shownPath(content, ROOT), '<content>').split('\n').slice(0, 2)).toMatchInlineSnapshot(`
      [
        "<content>/decorations/x.png: is a symbolic link: links in the content folder are never followed",
        "    hint: commit the file itself instead of a link to it (or delete the link)",
      ]
    `);
  });

  test('npm run build fails, publishes nothing, and no file it leaves holds the secret', () => {
    const r = run('scripts/build-site.ts', { CONTENT_DIR: content, DIST_DIR: dist });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('decorations/x.png: is a symbolic link: links in the content folder are never followed');
    expect(r.stderr).toContain('Nothing was built');
    expect(fs.readdirSync(work)).toEqual([]);
    expect(anyFileHolds(work, SECRET)).toEqual([]);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});

describe('a display name of one letter under 63 combining marks', () => {
  test('npm run check and npm run build agree: both accept it (the build failed with ENAMETOOLONG, naming no file)', () => {
    const own = path.join(parent, 'zalgo');
    fs.cpSync(FIXTURE, own, { recursive: true });
    const name = `a${'\u0301'.repeat(63)}`;
    fs.writeFileSync(path.join(own, 'profiles', 'bob.yaml'), `displayName: "${name}"\ncreatedAt: 2024-11-02T00:00:00Z\n`);
    const check = run('scripts/check-content.ts', { CONTENT_DIR: own });
    expect(check.status, check.stderr).toBe(0);
    const ownDist = path.join(workDir('zalgo'), 'dist');
    onTestFinished(() => fs.rmSync(path.dirname(ownDist), { recursive: true, force: true }));
    const build = run('scripts/build-site.ts', { CONTENT_DIR: own, DIST_DIR: ownDist });
    expect(build.status, build.stderr).toBe(0);
    const client = path.join(ownDist, 'client');
    expect(fs.readFileSync(path.join(client, 'p', 'bob.html'), 'utf8')).toContain(name);
    // Its preview is the generic person's, under a short name.
    expect(fs.readdirSync(path.join(client, 'media', 'og')).every((f) => f.length < 64)).toBe(true);
  }, 120_000);
});

describe('a profile saved in Latin-1', () => {
  test('npm run check and npm run build refuse it alike, with its line (it was published with U+FFFD)', () => {
    const own = path.join(parent, 'latin1');
    fs.cpSync(FIXTURE, own, { recursive: true });
    fs.writeFileSync(path.join(own, 'profiles', 'bob.yaml'), Buffer.concat([Buffer.from('createdAt: 2024-11-02T00:00:00Z\ndisplayName: "Ren'), Buffer.from([0xe9]), Buffer.from('e"\n')]));
    const line = `${path.join(own, 'profiles', 'bob.yaml')}:2:1: is not valid UTF-8 on this line`;
    const check = run('scripts/check-content.ts', { CONTENT_DIR: own });
    expect(check.status).toBe(1);
    expect(check.stderr.replaceAll(shownPath(own, ROOT), own)).toContain(line);
    const ownDist = path.join(workDir('latin1'), 'dist');
    onTestFinished(() => fs.rmSync(path.dirname(ownDist), { recursive: true, force: true }));
    const build = run('scripts/build-site.ts', { CONTENT_DIR: own, DIST_DIR: ownDist });
    expect(build.status).toBe(1);
    expect(build.stderr.replaceAll(shownPath(own, ROOT), own)).toContain(line);
    expect(fs.existsSync(ownDist)).toBe(false);
  }, 120_000);
});
