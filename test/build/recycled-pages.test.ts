// A whole release written over a retired one's pages (src/build/files/write-build.ts `recyclePages`):
// the pages are written into the retired files, never into one another release links, and the
// release serves what a build into an empty folder serves.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { buildLayout } from '../../src/release/layout.ts';
import { listReleases, releasePath, servedRelease } from '../../src/release/releases.ts';
import { buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, readDecoded, readServedFile } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

// One UTC day for every build, a minute apart: the pages differ only by what the content changes.
const at = (k: number, env: Record<string, string> = {}) => ({ SOURCE_DATE_EPOCH: String(1768482000 + k * 60), RELEASE_LAYERS: '0', BUILD_SETTLE_MS: '0', ...env });
const pagesOf = (dist: string, id: string) => buildLayout(releasePath(dist, id)).pages;
const rename = (content: string, name: string, displayName: string) => {
  const file = path.join(content, 'profiles', `${name}.yaml`);
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^displayName: .*$/m, `displayName: "${displayName}"`));
};

/** Four whole releases of `target` (the fourth retires the first); what each step saw. */
function fourReleases(name: string, target: string) {
  const work = workDir(name);
  made.push(work);
  fs.rmSync(work, { recursive: true, force: true });
  const content = path.join(work, 'content');
  fs.cpSync(FIXTURE, content, { recursive: true });
  const dist = path.join(work, 'dist');
  const env = (k: number) => at(k, { DEPLOY_TARGET: target });
  const build = (k: number) => {
    const b = buildFixture(content, dist, env(k));
    expect(b.status, b.stderr).toBe(0);
    return servedRelease(dist)!;
  };
  // bob's page changes in every build: release 1's copy is linked nowhere else, and is written over.
  const first = build(1);
  rename(content, 'bob', 'Bob 2');
  build(2);
  rename(content, 'bob', 'Bob 3');
  build(3);
  const retired = pagesOf(dist, first);
  const bobInode = fs.statSync(path.join(retired, 'bob.html')).ino;
  // alice's page is the same until the fourth: releases 2 and 3 link release 1's file, which the
  // fourth, rendering alice's page again, must replace, not write into.
  const alice = fs.statSync(path.join(retired, 'alice.html'));
  expect(alice.nlink).toBeGreaterThan(1);
  const aliceBytes = fs.readFileSync(path.join(retired, 'alice.html'));
  // A file of no page of the new release (a file of its own: the static releases link carol's
  // sibling), and erin_99's, whose profile is then removed.
  fs.rmSync(path.join(retired, 'carol.html.gz'), { force: true });
  fs.writeFileSync(path.join(retired, 'carol.html.gz'), 'not a coding of carol.html');
  fs.rmSync(path.join(content, 'profiles', 'erin_99.yaml'));
  rename(content, 'bob', 'Bob 4');
  rename(content, 'alice', 'Alice 4');
  const fourth = build(4);
  expect(listReleases(dist)).not.toContain(first);
  // The same content built into an empty folder.
  const fresh = path.join(work, 'fresh', 'dist');
  const b = buildFixture(content, fresh, env(4));
  expect(b.status, b.stderr).toBe(0);
  return { dist, fourth, fresh: servedRelease(fresh)!, freshDist: fresh, bobInode, aliceIno: alice.ino, aliceBytes };
}

describe('a whole release over a retired one\'s pages', () => {
  test('writes into its page files, never into one a kept release links, and serves what a build from nothing serves', () => {
    const r = fourReleases('recycled-pages', 'node');
    const pages = pagesOf(r.dist, r.fourth);
    // Written over in place: the retired file itself.
    expect(fs.statSync(path.join(pages, 'bob.html')).ino).toBe(r.bobInode);
    expect(readServedFile(path.join(pages, 'bob.html')).toString()).toContain('Bob 4');
    // The file releases 2 and 3 link keeps its bytes; this release's alice.html is a file of its own.
    expect(fs.statSync(path.join(pages, 'alice.html')).ino).not.toBe(r.aliceIno);
    expect(readServedFile(path.join(pages, 'alice.html')).toString()).toContain('Alice 4');
    const linking = listReleases(r.dist).filter((id) => id !== r.fourth).map((id) => path.join(pagesOf(r.dist, id), 'alice.html'));
    expect(linking.map((f) => fs.statSync(f).ino)).toEqual(linking.map(() => r.aliceIno));
    for (const f of linking) expect(fs.readFileSync(f).equals(r.aliceBytes), f).toBe(true);
    // Nothing of the retired release's that this one lacks: the same files as the build from nothing, the same bytes.
    const freshPages = pagesOf(r.freshDist, r.fresh);
    const names = fs.readdirSync(pages).sort();
    expect(names).toEqual(fs.readdirSync(freshPages).sort());
    expect(names).not.toContain('erin_99.html');
    expect(names).not.toContain('carol.html.gz');
    for (const name of names) expect(fs.readFileSync(path.join(pages, name)).equals(fs.readFileSync(path.join(freshPages, name))), name).toBe(true);
  }, 60_000);

  test('static: the siblings are the new bytes\' (or none), as a build from nothing writes them', () => {
    const r = fourReleases('recycled-pages-static', 'static');
    const pages = pagesOf(r.dist, r.fourth);
    const freshPages = pagesOf(r.freshDist, r.fresh);
    const names = fs.readdirSync(pages).sort();
    expect(names).toEqual(fs.readdirSync(freshPages).sort());
    expect(names).toContain('bob.html.gz');
    for (const name of names) expect(fs.readFileSync(path.join(pages, name)).equals(fs.readFileSync(path.join(freshPages, name))), name).toBe(true);
    expect(readDecoded(path.join(pages, 'bob.html.gz')).toString()).toContain('Bob 4');
  }, 60_000);
});
