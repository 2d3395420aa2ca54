// What decides whether a page is made again is a digest of the bytes it is made from, not of file
// names: an avatar replaced by another image under the same name gives its profile a new page. And
// stamps only spare reads: a build right after every file was written (a fresh clone) keeps its
// records, so the edit after it reads only what changed.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { locator } from '../../src/release/layers.ts';
import { readReleaseInfo, releasePath, releasesDir, servedRelease } from '../../src/release/releases.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { validationCacheFile } from '../../src/config.ts';
import { TEST_SITE_URL, buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';
import { makePng } from '../support/png.ts';

const work = workDir('input-bytes');
afterAll(() => {
  for (const content of ['content', 'cloned']) {
    const base = validationCacheFile(ROOT, path.join(work, content)).replace(/\.json$/, '');
    for (const suffix of ['.json', '-views.json', '-creators.json']) fs.rmSync(`${base}${suffix}`, { force: true });
  }
  fs.rmSync(work, { recursive: true, force: true });
});

/** A file the release served from `dist` serves, read through its layers. */
function servedFile(dist: string, file: string): Buffer {
  const id = servedRelease(dist)!;
  const at = locator(releasesDir(dist), buildLayout(releasePath(dist, id)).client, readReleaseInfo(dist, id)?.layers)(file);
  return fs.readFileSync(path.join(at!, file));
}

const meta = (html: string, property: string) => html.match(new RegExp(`<meta property="${property}" content="([^"]*)"`))?.[1];

describe('a rebuild after an image changed under the same name', () => {
  test('makes the page of the profile showing it again: the new size, the avatar as preview', () => {
    fs.rmSync(work, { recursive: true, force: true });
    const content = path.join(work, 'content');
    const dist = path.join(work, 'dist');
    fs.cpSync(FIXTURE, content, { recursive: true });
    // The fixture's avatar is 64x64, too small for crawlers: the page names a generated preview.
    let r = buildFixture(content, dist);
    expect(r.status, r.stderr).toBe(0);
    let page = servedFile(dist, 'p/alice.html').toString();
    expect(meta(page, 'og:image:width')).toBe('400');
    expect(meta(page, 'og:image')).toMatch(/\/media\/og\//);

    const bigger = makePng(300, 300, 1);
    fs.writeFileSync(path.join(content, 'avatars', 'alice.png'), bigger);
    r = buildFixture(content, dist);
    expect(r.status, r.stderr).toBe(0);
    page = servedFile(dist, 'p/alice.html').toString();
    expect(meta(page, 'og:image:width')).toBe('300');
    expect(meta(page, 'og:image:height')).toBe('300');
    expect(meta(page, 'og:image')).toBe(`${TEST_SITE_URL}/media/avatars/alice.png`);
    expect(servedFile(dist, 'media/avatars/alice.png').equals(bigger)).toBe(true);

    // And back to a small one, of other bytes again: the generated preview once more.
    fs.writeFileSync(path.join(content, 'avatars', 'alice.png'), makePng(64, 64, 2));
    r = buildFixture(content, dist);
    expect(r.status, r.stderr).toBe(0);
    page = servedFile(dist, 'p/alice.html').toString();
    expect(meta(page, 'og:image:width')).toBe('400');
    expect(meta(page, 'og:image')).toMatch(/\/media\/og\//);
  }, 120_000);
});

describe('a build right after every content file was written', () => {
  test('keeps its records: the next edit reads the files whose stamps proved nothing, not every profile', () => {
    const content = path.join(work, 'cloned');
    const dist = path.join(work, 'cloned-dist');
    fs.rmSync(content, { recursive: true, force: true });
    fs.cpSync(FIXTURE, content, { recursive: true });
    // BUILD_SETTLE_MS: no stamp is older than an hour, so none proves its file's bytes (RACY_MS).
    let r = buildFixture(content, dist, { BUILD_SETTLE_MS: '3600000' });
    expect(r.status, r.stderr).toBe(0);
    const bob = path.join(content, 'profiles', 'bob.yaml');
    fs.writeFileSync(bob, fs.readFileSync(bob, 'utf8').replace('displayName: Bob', 'displayName: Robert'));
    // Every stamp proves its bytes now (BUILD_SETTLE_MS=0, as if a second had passed: a first build
    // with a kept renderer can take less), bob's included, which differs from the one recorded.
    r = buildFixture(content, dist, { BUILD_SETTLE_MS: '0' });
    expect(r.status, r.stderr).toBe(0);
    // The edit path: the others read again and found the same bytes, bob's page the only one rendered.
    expect(r.stdout).toMatch(/Finding the changed profiles/);
    expect(r.stdout).not.toMatch(/every profile is read|Validating content/);
    expect(r.stdout).toMatch(/\(1 rendered, 6 unchanged\)/);
    expect(servedFile(dist, 'p/bob.html').toString()).toContain('Robert');
  }, 120_000);
});
