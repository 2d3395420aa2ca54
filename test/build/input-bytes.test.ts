// What decides whether a page is made again is a digest of the bytes it is made from, not of file
// names: an avatar replaced by another image under the same name gives its profile a new page.
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
  const base = validationCacheFile(ROOT, path.join(work, 'content')).replace(/\.json$/, '');
  for (const suffix of ['.json', '-views.json', '-creators.json']) fs.rmSync(`${base}${suffix}`, { force: true });
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
