// An edit build (src/build/reuse/edit-path.ts) reads only the changed profile files and takes the rest
// from the served release's kept index. It must serve exactly what a build that reads every
// profile serves from the same release, file for file and byte for byte, and leave the same
// records for the next build; and anything it does not cover must make the build read every profile.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { LAYERED_DIRS, listFiles, locator, releaseFiles } from '../../src/release/layers.ts';
import { CREATORS_ROWS_FILE, USER_NAMES_FILE } from '../../src/api/release-files.ts';
import { listReleases, readReleaseInfo, releasePath, releasesDir, servedRelease } from '../../src/release/releases.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { readRecord } from '../../src/build/reuse/record.ts';
import { SLOW_FINDING_MS, stampingHint } from '../../src/build/plan.ts';
import { Builder, spawnBuilder, type Rebuilt } from '../../src/build/rebuilds.ts';
import { browsePages, changedBrowsePages } from '../../src/ui/browse.ts';
import { TEST_SITE_URL, buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT, servedText } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

// 2026-01-15T13:00:00Z, then a minute later each time: the same UTC date.
const FIRST = 1768482000;
// Stamps trusted at once (BUILD_SETTLE_MS=0): the tests write files a moment before they build.
const settled = (epoch: number, env: Record<string, string> = {}) => ({ BUILD_SETTLE_MS: '0', SOURCE_DATE_EPOCH: String(epoch), ...env });

/** Every file the served release serves, with its bytes, and its server records. */
function servedState(dist: string) {
  const id = servedRelease(dist)!;
  const dir = releasePath(dist, id);
  const info = readReleaseInfo(dist, id)!;
  const client = buildLayout(dir).client;
  const at = locator(releasesDir(dist), client, info.layers);
  const files = new Map(releaseFiles(releasesDir(dist), client, info.layers).sort().map((f) => [f, fs.readFileSync(path.join(at(f)!, f))]));
  const layout = buildLayout(dir);
  const { manifest, times, kept } = readRecord(layout.record);
  const records = [manifest, times];
  // Releases by their number (their ids end with the clock's time), the release's own as `this`.
  const number = (r: string) => r.slice(0, r.indexOf('-'));
  const layers = info.layers && { base: number(info.layers.base), from: Object.fromEntries(Object.entries(info.layers.from).map(([f, r]) => [f, r === id ? 'this' : r && number(r)])) };
  return { files, records, kept, layers };
}

/** The edit build's served state is the whole read's: every file byte for byte, layers and records. */
function expectSameServed(dist: string, reference: string, context = '') {
  const [a, b] = [servedState(dist), servedState(reference)];
  expect([...a.files.keys()], context).toEqual([...b.files.keys()]);
  for (const [file, bytes] of b.files) expect(a.files.get(file)!.equals(bytes), `${context} ${file}`).toBe(true);
  expect(a.layers, context).toEqual(b.layers);
  expect(a.records, context).toEqual(b.records);
  expect(a.kept, context).toEqual(b.kept);
  return a;
}

/**
 * What `dist` serves after builds that made more releases than one whole read makes from the same
 * served state (`reference`): the same bytes and records, in other layers. Returns it.
 */
function servesAsWholeReadInMoreReleases(content: string, dist: string, reference: string) {
  const theirs = buildFixture(content, reference, settled(FIRST + 60, { EDIT_PATH: '0' }));
  expect(theirs.status, theirs.stderr).toBe(0);
  const [a, b] = [servedState(dist), servedState(reference)];
  expect([...a.files.keys()]).toEqual([...b.files.keys()]);
  for (const [file, bytes] of b.files) expect(a.files.get(file)!.equals(bytes), file).toBe(true);
  expect(a.records).toEqual(b.records);
  expect(a.kept).toEqual(b.kept);
  return a;
}

/** The fixture with one more profile before alice (the API description's example). */
function fixtureWithAaron(content: string) {
  fs.cpSync(FIXTURE, content, { recursive: true });
  // A decoration but no socials: not a full example, until an edit gives it socials.
  fs.writeFileSync(path.join(content, 'profiles', 'aaron.yaml'), 'displayName: Aaron\ncreatedAt: 2023-03-03T00:00:00Z\ndecoration: sakura\n');
}

/** A content folder (by default `fixtureWithAaron`), built once, and a copy of that served state. */
/** An empty work folder of this test's (removed after it) and its content folder, made by `makeContent`. */
function workWith(name: string, makeContent: (content: string) => void) {
  const work = workDir(name);
  made.push(work);
  fs.rmSync(work, { recursive: true, force: true });
  const content = path.join(work, 'content');
  makeContent(content);
  return { work, content };
}

function firstBuild(name: string, makeContent = fixtureWithAaron) {
  const { work, content } = workWith(name, makeContent);
  const dist = path.join(work, 'a', 'dist');
  const first = buildFixture(content, dist, settled(FIRST));
  expect(first.status, first.stderr).toBe(0);
  // The same served state in a second folder, for the build that reads every profile.
  fs.cpSync(path.join(work, 'a'), path.join(work, 'b'), { recursive: true, verbatimSymlinks: true });
  return { content, dist, reference: path.join(work, 'b', 'dist') };
}

const edit = (content: string, name: string, change: (text: string) => string) => {
  const file = path.join(content, 'profiles', `${name}.yaml`);
  fs.writeFileSync(file, change(fs.readFileSync(file, 'utf8')));
};

/** Builds the edited content by the edit path and by reading every profile; both serve the same, which it returns. */
function editBuildServesAsWholeRead(content: string, dist: string, reference: string) {
  const ours = buildFixture(content, dist, settled(FIRST + 60));
  expect(ours.status, ours.stderr).toBe(0);
  expect(ours.stdout).toMatch(/Finding the changed profiles/);
  expect(ours.stdout).not.toMatch(/Validating content|every profile is read/);
  // Quick to find: no word on a faster way (plan.ts `stampingHint`).
  expect(ours.stdout).not.toMatch(/stamping every file/);
  const theirs = buildFixture(content, reference, settled(FIRST + 60, { EDIT_PATH: '0' }));
  expect(theirs.status, theirs.stderr).toBe(0);
  expect(theirs.stdout).toMatch(/Validating content/);
  return expectSameServed(dist, reference);
}

describe('edit builds', () => {
  test('serve what a build reading every profile serves, and leave the same records', () => {
    const { content, dist, reference } = firstBuild('edit-same');
    // erin's name (a new preview image, the old one unused), frank no longer suspended (the
    // sitemaps change), aaron given socials (the API description's example now); two creators: bob
    // renamed, kate suspended (the creators list, its rows and the home page change).
    edit(content, 'erin_99', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Zoë"'));
    edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Robert"'));
    edit(content, 'kate', (t) => `${t}suspension:\n  reason: spam\n  at: 2026-01-10T00:00:00Z\n`);
    edit(content, 'frank', (t) => t.replace(/^suspension:\n(  .*\n)+/m, '').replace('Frank', 'Franz'));
    edit(content, 'aaron', (t) => `${t}socials:\n  - platform: github\n    url: https://github.com/aaron\n`);

    const a = editBuildServesAsWholeRead(content, dist, reference);
    // The edits are in what is served.
    expect(servedText(a.files.get('sitemap.xml')!)).toContain('/p/frank<');
    expect(servedText(a.files.get('openapi.json')!)).toContain('"username": "aaron"');
    expect(a.kept!.example).toEqual({ name: 'aaron', full: true });
    expect(JSON.parse(servedText(a.files.get('api/v1/users/erin_99')!)).data.displayName).toBe('Zoë');
    const listed = JSON.parse(servedText(a.files.get('service-api/v1/creators')!)).data.map((c: { username: string; displayName: string }) => `${c.username} ${c.displayName}`);
    expect(listed).toContain('bob Robert');
    expect(listed.some((c: string) => c.startsWith('kate '))).toBe(false);
    expect(servedText(a.files.get('index.html')!)).toContain('Robert');
  }, 120_000);

  test('an edit no file made from the whole index reads links those files, and leaves the served release as it was', () => {
    const { content, dist, reference } = firstBuild('edit-carry');
    const oldId = servedRelease(dist)!;
    const old = buildLayout(releasePath(dist, oldId)).client;
    const oldFiles = new Map(listFiles(old, LAYERED_DIRS).map((f) => [f, fs.readFileSync(path.join(old, f))]));
    // erin_99 is no creator and stays active: no column of the index changes.
    edit(content, 'erin_99', (t) => t.replace(/^bio: .*$/m, 'bio: "Still here."'));
    const a = editBuildServesAsWholeRead(content, dist, reference);
    expect(JSON.parse(servedText(a.files.get('api/v1/users/erin_99')!)).data.bio).toBe('Still here.');
    const now = buildLayout(releasePath(dist, servedRelease(dist)!)).client;
    const inode = (dir: string, file: string) => fs.statSync(path.join(dir, file)).ino;
    // Carried: the same file as the served release's, not a copy.
    // The home page too: it shows the count and the creators, and no creator changed (derived.ts `homeChanged`).
    for (const file of ['sitemap.xml', 'browse/1.html', USER_NAMES_FILE, CREATORS_ROWS_FILE, 'favicon.svg', 'index.html']) expect(inode(now, file), file).toBe(inode(old, file));
    // Made again every time: the API description (the example user).
    for (const file of ['openapi.json']) expect(inode(now, file), file).not.toBe(inode(old, file));
    // The release it replaced is byte for byte what it served, for a rollback.
    for (const [file, bytes] of oldFiles) expect(fs.readFileSync(path.join(old, file)).equals(bytes), file).toBe(true);
  }, 120_000);

  test('a profile added or removed is in the browse pages, as a build reading every profile makes them', () => {
    const { content, dist, reference } = firstBuild('edit-browse');
    const servedBrowse = () => servedText(servedState(dist).files.get('browse/1.html')!);
    expect(servedBrowse()).toContain('href="/p/erin_99"');
    expect(servedBrowse()).not.toContain('/p/bea"');
    fs.writeFileSync(path.join(content, 'profiles', 'bea.yaml'), 'displayName: Bea\ncreatedAt: 2024-01-01T00:00:00Z\n');
    fs.rmSync(path.join(content, 'profiles', 'erin_99.yaml'));
    const a = editBuildServesAsWholeRead(content, dist, reference);
    const page = servedText(a.files.get('browse/1.html')!);
    // In username order: aaron, alice, bea, bob.
    expect(page).toMatch(/\/p\/alice"[^]*\/p\/bea"[^]*\/p\/bob"/);
    expect(page).not.toContain('/p/erin_99"');
    expect(page).toContain('8 profiles by username');
    expect(servedText(a.files.get('index.html')!)).toContain('href="/browse/1"');
  }, 120_000);

  test('among thousands, a profile added or removed makes again its browse page and the first; the others are the served files', () => {
    // 3,000 generated profiles: three browse pages (src/ui/browse.ts), the one added on the third.
    const { content, dist, reference } = firstBuild('edit-browse-pages', (dir) => {
      const gen = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'bench', 'generate-profiles.ts'), '3000', dir], { encoding: 'utf8' });
      expect(gen.status, gen.stderr).toBe(0);
    });
    const pagesOf = (names: string[]) => browsePages(names).length;
    const names = () => fs.readdirSync(path.join(content, 'profiles')).map((f) => f.slice(0, -'.yaml'.length)).sort();
    expect(pagesOf(names())).toBeGreaterThan(2);
    for (const change of [
      () => fs.writeFileSync(path.join(content, 'profiles', 'user002900a.yaml'), 'displayName: Added\ncreatedAt: 2024-01-01T00:00:00Z\n'),
      () => fs.rmSync(path.join(content, 'profiles', 'user000900.yaml')),
    ]) {
      const before = names();
      const old = buildLayout(releasePath(dist, servedRelease(dist)!)).client;
      change();
      const a = editBuildServesAsWholeRead(content, dist, reference);
      const now = buildLayout(releasePath(dist, servedRelease(dist)!)).client;
      const { changed, gone } = changedBrowsePages(names(), before);
      expect(changed).toContain(1);
      expect(changed.length).toBeLessThan(pagesOf(names()));
      expect(gone).toEqual([]);
      // Remade: a file of its own; the others: the served release's, linked.
      for (let page = 1; page <= pagesOf(names()); page++) {
        const file = `browse/${page}.html`;
        expect(a.files.has(file)).toBe(true);
        expect(fs.statSync(path.join(now, file)).ino === fs.statSync(path.join(old, file)).ino, file).toBe(!changed.includes(page));
      }
    }
  }, 120_000);

  test('without a profile that shows every part, one added first becomes the example', () => {
    const { content, dist, reference } = firstBuild('edit-example', (dir) => {
      fs.mkdirSync(path.join(dir, 'profiles'), { recursive: true });
      for (const name of ['bob', 'carol']) fs.writeFileSync(path.join(dir, 'profiles', `${name}.yaml`), `displayName: ${name}\ncreatedAt: 2024-01-01T00:00:00Z\n`);
    });
    expect(readRecord(buildLayout(releasePath(dist, servedRelease(dist)!)).record).kept?.example).toEqual({ name: 'bob', full: false });

    fs.writeFileSync(path.join(content, 'profiles', 'amy.yaml'), 'displayName: Amy\ncreatedAt: 2024-01-01T00:00:00Z\n');
    fs.rmSync(path.join(content, 'profiles', 'carol.yaml'));
    const a = editBuildServesAsWholeRead(content, dist, reference);
    expect(a.kept!.example).toEqual({ name: 'amy', full: false });
    expect(a.files.has('api/v1/users/carol')).toBe(false);
    expect(servedText(a.files.get('index.html')!)).toContain('2 public profiles');
  }, 120_000);

  test('a build that renders every page though a release is served says why; one that reuses pages says nothing', () => {
    const { work, content } = workWith('every-page-why', fixtureWithAaron);
    const dist = path.join(work, 'dist');
    const build = (epoch: number, env: Record<string, string> = {}) => {
      const r = buildFixture(content, dist, settled(epoch, env));
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const why = /\(every page is rendered: (.*)\)/;
    // The first build has nothing to reuse, and nothing to explain.
    expect(build(FIRST)).not.toMatch(why);
    const first = servedRelease(dist)!;
    // New code (BUILD_CODE_SALT stands for a change in src/): every page, and the reason, once.
    const other = build(FIRST + 60, { BUILD_CODE_SALT: 'other code' });
    expect(other).toMatch(/^Rendering (\d+) of \1 profile pages/m);
    expect(why.exec(other)?.[1]).toBe(`release ${first} was made by other code or settings: a change in src/, public/, astro.config.mjs, tsconfig.json or package-lock.json, or another SITE_URL or PRECOMPRESS`);
    // The same code again, one profile edited, read whole: one page, no reason.
    edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Robert"'));
    const again = build(FIRST + 120, { BUILD_CODE_SALT: 'other code', EDIT_PATH: '0' });
    expect(again).toMatch(/^Rendering 1 of \d+ profile pages/m);
    expect(again).not.toMatch(why);
  }, 120_000);

  test('anything else reads every profile, and a problem fails the build as it always does', () => {
    const { content, dist } = firstBuild('edit-else');
    let epoch = FIRST;
    const rebuild = (env: Record<string, string> = {}) => buildFixture(content, dist, settled(epoch += 60, env));
    const reasons: [string, () => void, RegExp][] = [
      ['a profile added with an avatar', () => fs.writeFileSync(path.join(content, 'profiles', 'zed.yaml'), 'displayName: Zed\ncreatedAt: 2025-05-05T00:00:00Z\navatar: alice.png\n'), /avatar, decoration or custom domain of zed changed/],
      ['the view counts changed', () => fs.appendFileSync(path.join(content, 'stats', 'views.yaml'), 'zed: 5\nyan: 3\n'), /files outside profiles\/ changed/],
      // The count of a name without a profile is a warning: one that comes or goes, the whole read prints.
      ['a profile with a view count added', () => fs.writeFileSync(path.join(content, 'profiles', 'yan.yaml'), 'displayName: Yan\ncreatedAt: 2025-05-05T00:00:00Z\n'), /yan, added, has a view count/],
      ['a profile with an avatar removed', () => fs.rmSync(path.join(content, 'profiles', 'zed.yaml')), /zed, removed, had an avatar or a custom domain/],
      ['a profile with a view count removed', () => fs.rmSync(path.join(content, 'profiles', 'yan.yaml')), /yan, removed, has a view count/],
      ['an avatar given', () => edit(content, 'erin_99', (t) => `${t}avatar: alice.png\n`), /avatar, decoration or custom domain of erin_99 changed/],
    ];
    for (const [what, change, reason] of reasons) {
      change();
      const b = rebuild();
      expect(b.status, `${what}: ${b.stderr}`).toBe(0);
      expect(b.stdout, what).toMatch(reason);
      expect(b.stdout, what).toMatch(/Validating content/);
      // And the next edit of a plain profile takes the edit path again.
      edit(content, 'erin_99', (t) => t.replace(/^bio: .*$/m, `bio: "${what}"`));
      const next = rebuild();
      expect(next.status, next.stderr).toBe(0);
      expect(next.stdout, `after ${what}`).not.toMatch(/Validating content/);
    }
    // A problem: the build reads every profile and reports it with its place, and serves what it did.
    const before = servedRelease(dist);
    edit(content, 'frank', (t) => t.replace(/^createdAt: .*$/m, 'createdAt: yesterday'));
    const bad = rebuild();
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/frank\.yaml:2:\d+/);
    expect(servedRelease(dist)).toBe(before);
    // The next day every answer's accountAgeDays moves: every profile is read.
    edit(content, 'frank', (t) => t.replace(/^createdAt: .*$/m, 'createdAt: 2024-01-01T00:00:00Z'));
    const nextDay = rebuild({ SOURCE_DATE_EPOCH: String(FIRST + 86_400) });
    expect(nextDay.status, nextDay.stderr).toBe(0);
    expect(nextDay.stdout).toMatch(/the date changed/);
  }, 180_000);
});

describe('edit builds told which files changed (npm start sets CHANGED_FILES)', () => {
  test('a build by hand slow to find the changed profiles names the way that looks at the changed files only', () => {
    expect(stampingHint(SLOW_FINDING_MS - 1)).toBeUndefined();
    const said = stampingHint(7_240)!;
    expect(said).toContain('took 7.2 s');
    for (const way of ['`npm start`', 'post-merge hook', 'docs/operators.md#edits-going-live']) expect(said).toContain(way);
  });

  /** A build told that `files` changed since the served release, as `npm start` tells it. */
  const told = (content: string, dist: string, files: string[], since = servedRelease(dist)!) =>
    buildFixture(content, dist, settled(FIRST + 60, { CHANGED_FILES: files.join('\n'), CHANGED_SINCE: since }));
  const builtLines = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('Built ')).length;

  test('stamp the profiles named, serve what a whole read serves, then find nothing else changed', () => {
    const { content, dist, reference } = firstBuild('told-one');
    edit(content, 'erin_99', (t) => t.replace(/^bio: .*$/m, 'bio: "Told."'));
    // An editor's swap file and vim's probe file, gone by now, change nothing.
    const ours = told(content, dist, ['profiles/erin_99.yaml', 'profiles/.erin_99.yaml.swp', 'profiles/4913']);
    expect(ours.status, ours.stderr).toBe(0);
    expect(ours.stdout).not.toMatch(/every profile is (read|stamped)/);
    expect(ours.stdout).toMatch(/Nothing else changed before the last build began: release \S+ stays served/);
    expect(builtLines(ours.stdout)).toBe(1);
    const theirs = buildFixture(content, reference, settled(FIRST + 60, { EDIT_PATH: '0' }));
    expect(theirs.status, theirs.stderr).toBe(0);
    const a = expectSameServed(dist, reference);
    expect(JSON.parse(servedText(a.files.get('api/v1/users/erin_99')!)).data.bio).toBe('Told.');
  }, 120_000);

  test('a static build told which files changed reads every profile anyway: one release, no check after it', () => {
    const { work, content } = workWith('told-static', (dir) => fs.cpSync(FIXTURE, dir, { recursive: true }));
    const dist = path.join(work, 'dist');
    const static_ = (epoch: number, env: Record<string, string> = {}) => buildFixture(content, dist, settled(epoch, { DEPLOY_TARGET: 'static', ...env }));
    expect(static_(FIRST).status).toBe(0);
    const first = servedRelease(dist)!;
    edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Listed"'));
    const r = static_(FIRST + 60, { CHANGED_FILES: 'profiles/bob.yaml', CHANGED_SINCE: first });
    expect(r.status, r.stderr).toBe(0);
    // Two identical releases made `npm run rollback` go nowhere.
    expect(builtLines(r.stdout)).toBe(1);
    expect(listReleases(dist)).toHaveLength(2);
  }, 120_000);

  test('a problem the list left out: the check finds it, and the release the list built is withdrawn, as a full build would publish nothing', () => {
    const { content, dist } = firstBuild('told-problem');
    const first = servedRelease(dist)!;
    // A pull after a failed build: carol broke then, bob changes now; the list has bob only.
    edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Listed"'));
    edit(content, 'carol', () => 'displayName: [unclosed\n');
    const r = told(content, dist, ['profiles/bob.yaml']);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/carol\.yaml:\d+:/);
    expect(r.stderr).toMatch(/is withdrawn: the content has the problem above, which the list left out\. .*serves release .* again/);
    expect(servedRelease(dist)).toBe(first);
    expect(JSON.parse(servedText(servedState(dist).files.get('api/v1/users/bob')!)).data.displayName).not.toBe('Listed');
  }, 120_000);

  test('a profile added or removed by name, and a change the list left out, which the check finds and builds', () => {
    const { content, dist, reference } = firstBuild('told-missed');
    fs.writeFileSync(path.join(content, 'profiles', 'bea.yaml'), 'displayName: Bea\ncreatedAt: 2024-01-01T00:00:00Z\n');
    fs.rmSync(path.join(content, 'profiles', 'erin_99.yaml'));
    edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Left out"'));
    const ours = told(content, dist, ['profiles/bea.yaml', 'profiles/erin_99.yaml']);
    expect(ours.status, ours.stderr).toBe(0);
    // The listed build, then the check's build of bob's edit.
    expect(builtLines(ours.stdout)).toBe(2);
    expect(ours.stdout).not.toMatch(/Nothing else changed/);
    const a = servesAsWholeReadInMoreReleases(content, dist, reference);
    expect(a.files.has('api/v1/users/bea')).toBe(true);
    expect(a.files.has('api/v1/users/erin_99')).toBe(false);
    expect(JSON.parse(servedText(a.files.get('api/v1/users/bob')!)).data.displayName).toBe('Left out');
  }, 120_000);

  const bobCategory = (files: Map<string, Buffer>) =>
    (JSON.parse(servedText(files.get('service-api/v1/creators')!)).data as { username: string; category: string }[]).find((c) => c.username === 'bob')!.category;
  test('files outside profiles/ the list leaves out are taken as served and found by the check; one it names is looked at', () => {
    const { content, dist, reference } = firstBuild('told-others');
    const creator = path.join(content, 'creators', 'bob.yaml');
    edit(content, 'erin_99', (t) => t.replace(/^bio: .*$/m, 'bio: "Told."'));
    fs.writeFileSync(creator, 'category: art\n');
    const ours = told(content, dist, ['profiles/erin_99.yaml']);
    expect(ours.status, ours.stderr).toBe(0);
    // The listed build is an edit build that never saw bob's creator file; the check's build reads every profile.
    const built = ours.stdout.split('\n').filter((l) => l.startsWith('Built '));
    expect(built).toHaveLength(2);
    expect(ours.stdout.slice(0, ours.stdout.indexOf(built[0]!))).not.toMatch(/every profile is/);
    expect(ours.stdout).toMatch(/every profile is read: files outside profiles\/ changed/);
    const a = servesAsWholeReadInMoreReleases(content, dist, reference);
    expect(bobCategory(a.files)).toBe('art');

    // Named: the listed build looks at every file outside profiles/, finds the change and reads every profile.
    fs.writeFileSync(creator, 'category: music\n');
    const named = told(content, dist, ['creators/bob.yaml']);
    expect(named.status, named.stderr).toBe(0);
    expect(builtLines(named.stdout)).toBe(1);
    expect(named.stdout).toMatch(/every profile is read: files outside profiles\/ changed/);
    expect(bobCategory(servedState(dist).files)).toBe('music');
  }, 120_000);

  test('BUILD_IF_CHANGED: no new release when no profile changed (before the time it gives)', () => {
    const { content, dist } = firstBuild('if-changed');
    const served = servedRelease(dist);
    const ifChanged = (when: string) => buildFixture(content, dist, settled(FIRST + 60, { BUILD_IF_CHANGED: when }));
    const same = ifChanged('1');
    expect(same.status, same.stderr).toBe(0);
    expect(same.stdout).toMatch(new RegExp(`Nothing else changed: release ${served} stays served`));
    expect(servedRelease(dist)).toBe(served);
    edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Later"'));
    // A file outside profiles/ too (bob's creator file): the next build reads every profile.
    const creator = path.join(content, 'creators', 'bob.yaml');
    fs.writeFileSync(creator, `${fs.readFileSync(creator, 'utf8')}\n`);
    // Changed after the time given: the next build's, not this one's.
    expect(ifChanged(String(Date.now() - 60_000)).stdout).toMatch(/Nothing else changed before the last build began/);
    expect(servedRelease(dist)).toBe(served);
    const built = ifChanged(String(Date.now() + 60_000));
    expect(built.stdout).toMatch(/^Built /m);
    expect(built.stdout).toMatch(/every profile is read: files outside profiles\/ changed/);
    expect(servedRelease(dist)).not.toBe(served);
    expect(JSON.parse(servedText(servedState(dist).files.get('api/v1/users/bob')!)).data.displayName).toBe('Later');
  }, 120_000);

  test('a list since another release, or naming what it cannot say, is not trusted: every profile is stamped', () => {
    const { content, dist } = firstBuild('told-not');
    const cases: [string[], string | undefined, RegExp][] = [
      [['profiles/bob.yaml'], '000000-20200101T000000Z', /listed since release 000000-20200101T000000Z, not the served/],
      [['.'], undefined, /the changed file \. is not one in the content folder/],
      [['profiles'], undefined, /the changed files include profiles, not a profile file/],
      [['profiles/notes.txt'], undefined, /the changed files include profiles\/notes\.txt, not a profile file/],
    ];
    fs.writeFileSync(path.join(content, 'profiles', 'notes.txt'), 'not a profile');
    for (const [files, since, why] of cases) {
      const r = told(content, dist, files, since);
      expect(r.stdout, files.join()).toMatch(why);
      expect(r.stdout).toMatch(/every profile is stamped, not only the changed files/);
    }
  }, 120_000);
});

describe('npm start\'s builder: one process, build after build (src/build/rebuilds.ts)', () => {
  /** A builder for `dist`, as `npm start` starts it (`npm run build -- --rebuilds`), with `env` added. */
  const builderFor = (content: string, dist: string, env: Record<string, string> = {}, onCheck?: (checked: Rebuilt) => void) => new Builder(spawnBuilder(process.execPath, ['scripts/build-site.ts'], ROOT, {
    ...process.env, CONTENT_DIR: content, DIST_DIR: dist, SITE_URL: TEST_SITE_URL, ...settled(FIRST + 60), ...env,
  }), onCheck);
  const told = (builder: Builder, dist: string, files: string[]) => builder.build({ CHANGED_FILES: files.join('\n'), CHANGED_SINCE: servedRelease(dist)! });

  test('edit builds one after the other in one process serve what a whole read serves; a whole read ends the process', async () => {
    const { content, dist, reference } = firstBuild('builder');
    const builder = builderFor(content, dist);
    try {
      const pid = builder.child!.pid;
      edit(content, 'erin_99', (t) => t.replace(/^bio: .*$/m, 'bio: "First."'));
      const first = await told(builder, dist, ['profiles/erin_99.yaml']);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^Built /m);
      // The check runs after, in a process of its own, and says nothing when it finds nothing.
      expect(first.stdout).not.toMatch(/Nothing else changed/);
      // The second build starts from the record the first one wrote, read by the same process.
      edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Second"'));
      fs.writeFileSync(path.join(content, 'profiles', 'bea.yaml'), 'displayName: Bea\ncreatedAt: 2024-01-01T00:00:00Z\n');
      const second = await told(builder, dist, ['profiles/bob.yaml', 'profiles/bea.yaml']);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout.split('\n').filter((l) => l.startsWith('Built '))).toHaveLength(1);
      expect(second.stdout).not.toMatch(/every profile is (read|stamped)|Validating content/);
      expect(builder.child!.pid).toBe(pid);
      const a = servesAsWholeReadInMoreReleases(content, dist, reference);
      expect(JSON.parse(servedText(a.files.get('api/v1/users/bob')!)).data.displayName).toBe('Second');

      // A file outside profiles/ changed: this build reads every profile, and a new builder follows.
      const creator = path.join(content, 'creators', 'bob.yaml');
      fs.writeFileSync(creator, `${fs.readFileSync(creator, 'utf8')}\n`);
      const whole = await builder.build({});
      expect(whole.code, whole.stderr).toBe(0);
      expect(whole.stdout).toMatch(/Validating content/);
      expect(builder.child!.pid).not.toBe(pid);
      edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Third"'));
      const after = await told(builder, dist, ['profiles/bob.yaml']);
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).not.toMatch(/Validating content/);
      expect(JSON.parse(servedText(servedState(dist).files.get('api/v1/users/bob')!)).data.displayName).toBe('Third');
    } finally {
      builder.stop();
    }
  }, 120_000);

  test('a change the list left out is found by the check after the build, built, and reported', async () => {
    const { content, dist } = firstBuild('builder-check');
    let reported: (checked: Rebuilt) => void;
    const checked = new Promise<Rebuilt>((resolve) => { reported = resolve; });
    const builder = builderFor(content, dist, {}, (r) => reported(r));
    try {
      edit(content, 'erin_99', (t) => t.replace(/^bio: .*$/m, 'bio: "Listed."'));
      edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Not listed"'));
      const r = await told(builder, dist, ['profiles/erin_99.yaml']);
      expect(r.code, r.stderr).toBe(0);
      const served = servedRelease(dist);
      const check = await checked;
      expect(check.code, check.stderr).toBe(0);
      expect(check.stdout).toMatch(/^Built /m);
      expect(servedRelease(dist)).not.toBe(served);
      const a = servedState(dist);
      expect(JSON.parse(servedText(a.files.get('api/v1/users/bob')!)).data.displayName).toBe('Not listed');
      expect(JSON.parse(servedText(a.files.get('api/v1/users/erin_99')!)).data.bio).toBe('Listed.');
    } finally {
      builder.stop();
    }
  }, 120_000);

  test('a builder killed during a build fails that build, with what it printed; the served release stays', async () => {
    const { content, dist } = firstBuild('builder-killed');
    const served = servedRelease(dist);
    const builder = builderFor(content, dist, { BUILD_FAULT: 'rendered' });
    try {
      const pid = builder.child!.pid;
      edit(content, 'bob', (t) => t.replace(/^displayName: .*$/m, 'displayName: "Never"'));
      const killed = await told(builder, dist, ['profiles/bob.yaml']);
      expect(killed.code).not.toBe(0);
      expect(killed.stderr).toMatch(/BUILD_FAULT: SIGKILL at rendered/);
      expect(servedRelease(dist)).toBe(served);
      // The next build starts a builder of its own.
      const again = await told(builder, dist, ['profiles/bob.yaml']);
      expect(again.stderr).toMatch(/BUILD_FAULT: SIGKILL at rendered/);
      expect(builder.child?.pid).not.toBe(pid);
    } finally {
      builder.stop();
    }
  }, 120_000);
});
