// What makes rebuilds cheap, and must never make them wrong: the validation cache and worker
// threads (src/content/profile-files.ts) and the reuse of unchanged profile pages (src/build/reuse/page-reuse.ts).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadContent, loadContentFast } from '../../src/content/load.ts';
import { parseProfiles } from '../../src/content/profile-files.ts';
import { ContentReader, YAML_LIMIT } from '../../src/content/read-file.ts';
import { execFileSync } from 'node:child_process';
import { formatProblem } from '../../src/content/problems.ts';
import { MANIFEST_VERSION, avatarKey, goneNames, linkPages, manifestPages, planPages, profilePageKey, userInputKey, type PageManifest, type PagePlan } from '../../src/build/reuse/page-reuse.ts';
import { KeyColumn } from '../../src/build/reuse/key-column.ts';
import { rowKey } from '../../src/build/reuse/record.ts';
import { prerenderedUserBody, userData } from '../../src/api/prerendered.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { recycleUserFiles, writeUserFiles } from '../../src/build/files/write-build.ts';
import { AnswerTimes } from '../../src/build/reuse/answer-times.ts';
import { emptyStats } from '../../src/build/files/compress.ts';
import type { PublicUser } from '../../src/schemas/api.ts';
import { FIXTURE } from '../support/helpers.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs();
const fixtureCopy = () => {
  const dir = tempDir('incremental-content-');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  return dir;
};
const ctx = { siteUrl: 'https://profiles.example.net', builtAt: new Date('2026-01-15T12:00:00Z') };
const plain = (r: ReturnType<typeof loadContent>) => ({
  profiles: [...r.content.profiles], creators: [...r.content.creators], views: [...r.content.views],
  problems: r.problems.map((p) => formatProblem(p, r.content.dir)),
});

describe('reading ahead (the files come from disk)', () => {
  test('the same content and problems as without; a link or a pipe put in a file\'s place after the walk is still refused (what is read ahead is never what is parsed)', async () => {
    const dir = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'profiles', 'broken.yaml'), 'displayName: Broken\ncreatedAt: yesterday\n');
    const without = await loadContentFast(dir, { cacheFile: undefined });
    expect(without.stats.readAhead).toBe(false);
    const ahead = await loadContentFast(dir, { cacheFile: undefined, readAheadAfter: 1 });
    expect(ahead.stats.readAhead).toBe(true);
    expect(plain(ahead)).toEqual(plain(without));

    // Files swapped after the walk found them regular: both readers use the one safe reader.
    const files = fs.readdirSync(path.join(dir, 'profiles')).sort().map((f) => ({ username: f.replace(/\.yaml$/, ''), file: path.join(dir, 'profiles', f) }));
    const [linked, piped] = files.filter((f) => f.username !== 'broken').slice(1, 3) as [typeof files[0], typeof files[0]];
    const secret = path.join(tempDir('read-ahead-outside-'), 'secret.yaml');
    fs.writeFileSync(secret, 'displayName: Secret\ncreatedAt: 2024-01-01T00:00:00Z\n');
    fs.rmSync(linked.file);
    fs.symlinkSync(secret, linked.file);
    fs.rmSync(piped.file);
    execFileSync('mkfifo', [piped.file]);
    const reader = new ContentReader(dir);
    expect(reader.rootProblem()).toBeUndefined();
    const r = await parseProfiles(files, { readAheadAfter: 0 }, (file) => reader.read(file, YAML_LIMIT));
    expect(r.stats.readAhead).toBe(true);
    const byName = new Map(r.parsed.map((p) => [p.username, p]));
    for (const swapped of [linked, piped]) {
      const p = byName.get(swapped.username)!;
      expect(p.ok, swapped.username).toBe(false);
      expect(JSON.stringify(p)).not.toContain('Secret');
    }
    expect(r.parsed.filter((p) => p.ok).length).toBe(files.length - 3);
  });
});

describe('the validation cache and worker threads', () => {
  /** As if the run that wrote the cache `file` had started 5 s from now: its head line says when (json-lines.ts). */
  const scannedLater = (file: string) => {
    const [head, ...lines] = fs.readFileSync(file, 'utf8').split('\n');
    fs.writeFileSync(file, [JSON.stringify({ ...JSON.parse(head!), scannedAt: Date.now() + 5000 }), ...lines].join('\n'));
  };

  test('workers, the cache and this thread give the same content, problems included', async () => {
    const dir = fixtureCopy();
    fs.writeFileSync(path.join(dir, 'profiles', 'broken.yaml'), 'displayName: Broken\ncreatedAt: yesterday\nbadgez: []\n');
    fs.writeFileSync(path.join(dir, 'profiles', 'lost.yaml'), 'displayName: Lost\ncreatedAt: 2024-01-01T00:00:00Z\navatar: nowhere.png\n');
    const cacheFile = path.join(tempDir('incremental-cache-'), 'cache.json');
    const inThread = plain(loadContent(dir));
    expect(inThread.problems.length).toBeGreaterThanOrEqual(3);
    expect(inThread.problems.join('\n')).toMatch(/lost\.yaml:3:9 `avatar`/);

    const viaWorkers = await loadContentFast(dir, { cacheFile, workers: 2 });
    expect(viaWorkers.stats).toMatchObject({ fromCache: 0, workers: 2 });
    expect(plain(viaWorkers)).toEqual(inThread);

    // Second run: every valid file from the cache, the invalid ones parsed again (never cached),
    // and the cross-file problem still points at its line.
    const cached = await loadContentFast(dir, { cacheFile });
    expect(cached.stats.fromCache).toBe(cached.stats.files - 1);
    expect(plain(cached)).toEqual(inThread);
  });

  test('an edited file is parsed again, and its new problem is reported', async () => {
    const dir = fixtureCopy();
    const cacheFile = path.join(tempDir('incremental-cache-'), 'cache.json');
    const first = await loadContentFast(dir, { cacheFile });
    expect(first.problems).toEqual([]);
    const alice = path.join(dir, 'profiles', 'alice.yaml');
    fs.writeFileSync(alice, fs.readFileSync(alice, 'utf8').replace(/^displayName: .*$/m, 'displayName: Alice Edited'));
    const second = await loadContentFast(dir, { cacheFile });
    expect(second.stats.fromCache).toBe(second.stats.files - 1);
    expect(second.content.profiles.get('alice')!.displayName).toBe('Alice Edited');

    fs.appendFileSync(alice, 'colour: red\n');
    const third = await loadContentFast(dir, { cacheFile });
    expect(third.problems.map((p) => p.message)).toEqual(['unknown key `colour`']);
    expect(third.content.profiles.has('alice')).toBe(false);
  });

  test('a file whose stat matches the cache is not even read; any write to it is seen', async () => {
    const dir = fixtureCopy();
    const cacheFile = path.join(tempDir('incremental-cache-'), 'cache.json');
    // As if the first run had started 5 s after the files were written: stamps are then trusted
    // (a file changed within a second of a run is read again by the next, whatever its stat).
    const later = async () => {
      const r = await loadContentFast(dir, { cacheFile });
      scannedLater(cacheFile);
      return r;
    };
    const first = await later();
    expect(first.stats.read).toBe(first.stats.files);
    const second = await later();
    expect(second.stats).toMatchObject({ read: 0, fromCache: second.stats.files });
    expect(plain(second)).toEqual(plain(first));

    // The same size and the old modification time put back: the change time still shows the write.
    const bob = path.join(dir, 'profiles', 'bob.yaml');
    const before = fs.statSync(bob);
    const text = fs.readFileSync(bob, 'utf8');
    fs.writeFileSync(bob, text.replace('displayName: Bob', 'displayName: Rob'));
    fs.utimesSync(bob, before.atime, before.mtime);
    expect(fs.statSync(bob).size).toBe(before.size);
    const third = await later();
    expect(third.stats.read).toBe(1);
    expect(third.content.profiles.get('bob')!.displayName).toBe('Rob');

    // A file written just before a run is read again by the next one, even when its stamp matches
    // (here every file was written within a second of it, so all of them are).
    const fourth = await loadContentFast(dir, { cacheFile });
    expect(fourth.stats.read).toBe(0);
    fs.appendFileSync(bob, '\n');
    const fifth = await loadContentFast(dir, { cacheFile });
    expect(fifth.stats.read).toBe(1);
    const sixth = await loadContentFast(dir, { cacheFile });
    expect(sixth.stats.read).toBe(sixth.stats.files);
    expect(sixth.stats.fromCache).toBe(sixth.stats.files);
  });

  test('stats/views.yaml and creator files unchanged are not parsed again; an edit, or a count for a removed profile, is', async () => {
    const dir = fixtureCopy();
    const cacheFile = path.join(tempDir('incremental-cache-'), 'cache.json');
    const viewsFile = path.join(dir, 'stats', 'views.yaml');
    const creatorFiles = fs.readdirSync(path.join(dir, 'creators'));
    // As in the test above: the run that stored the values began well after the files were written.
    const later = async () => {
      const r = await loadContentFast(dir, { cacheFile });
      for (const name of ['views', 'creators']) {
        scannedLater(`${cacheFile.replace(/\.json$/, '')}-${name}.json`);
      }
      return r;
    };
    const first = await later();
    expect(first.stats.viewsFromCache).toBe(false);
    expect(first.content.views.get('dave')).toBe(1337);
    expect(first.stats.creatorsFromCache).toBe(0);
    const second = await later();
    expect(second.stats.viewsFromCache).toBe(true);
    expect(second.stats.creatorsFromCache).toBe(creatorFiles.length);
    expect(plain(second)).toEqual(plain(first));

    // An edited creator file is parsed again, and a broken one is a problem, never a cached value.
    const creator = path.join(dir, 'creators', creatorFiles[0]!);
    fs.writeFileSync(creator, 'category: edited\nfeatured: true\n');
    const edited = await later();
    expect(edited.stats.creatorsFromCache).toBe(creatorFiles.length - 1);
    expect(edited.content.creators.get(creatorFiles[0]!.replace(/\.yaml$/, ''))).toEqual({ category: 'edited', featured: true });
    fs.writeFileSync(creator, 'category: edited\nfeatured: maybe\n');
    expect((await later()).problems.map((p) => p.message)).toEqual([expect.stringMatching(/true.*false/)]);
    expect((await later()).problems).toHaveLength(1);
    fs.writeFileSync(creator, 'category: edited\nfeatured: true\n');

    // An edit is seen.
    fs.writeFileSync(viewsFile, 'dave: 7\nalice: 12\n');
    const third = await later();
    expect(third.stats.viewsFromCache).toBe(false);
    expect([...third.content.views]).toEqual([['dave', 7], ['alice', 12]]);

    // A count for a profile that is gone is a warning with its line: the file is parsed for it.
    fs.rmSync(path.join(dir, 'profiles', 'alice.yaml'));
    fs.rmSync(path.join(dir, 'creators', 'alice.yaml'), { force: true });
    const fourth = await later();
    expect(fourth.stats.viewsFromCache).toBe(false);
    expect(fourth.warnings.map((w) => formatProblem(w, dir))).toEqual(['stats/views.yaml:2:8 `alice`: views for `alice`, who has no profile, are ignored']);
    expect([...fourth.content.views]).toEqual([['dave', 7]]);
  });

  test('a rebuild that parsed few files may write the cache later (after its switch); a big parse writes it at once', async () => {
    const dir = fixtureCopy();
    const cacheFile = path.join(tempDir('incremental-cache-'), 'cache.json');
    const first = await loadContentFast(dir, { cacheFile, deferCacheWrite: true });
    // Everything parsed: written at once, so the parsed files need not be held.
    expect(fs.existsSync(cacheFile)).toBe(true);
    const written = fs.readFileSync(cacheFile, 'utf8');
    // Enough profiles that one edit is under the threshold (5% of files).
    for (let k = 0; k < 30; k++) fs.writeFileSync(path.join(dir, 'profiles', `extra${k}.yaml`), `displayName: Extra ${k}\ncreatedAt: 2024-01-01T00:00:00Z\n`);
    await loadContentFast(dir, { cacheFile });
    const before = fs.readFileSync(cacheFile, 'utf8');
    const alice = path.join(dir, 'profiles', 'alice.yaml');
    fs.writeFileSync(alice, fs.readFileSync(alice, 'utf8').replace(/^displayName: .*$/m, 'displayName: Alice Later'));
    const edit = await loadContentFast(dir, { cacheFile, deferCacheWrite: true });
    expect(edit.content.profiles.get('alice')!.displayName).toBe('Alice Later');
    expect(fs.readFileSync(cacheFile, 'utf8')).toBe(before);
    edit.saveCache();
    expect(fs.readFileSync(cacheFile, 'utf8')).toContain('Alice Later');
    expect(first.problems).toEqual([]);
    expect(written).not.toBe(before);
  });

  test('private notes are never in the cache, and a cache from other code is ignored', async () => {
    const dir = fixtureCopy();
    const marker = 'do-not-publish-7f3a';
    const carol = path.join(dir, 'profiles', 'carol.yaml');
    fs.appendFileSync(carol, `private:\n  note: ${marker}\n`);
    const cacheFile = path.join(tempDir('incremental-cache-'), 'cache.json');
    const r = await loadContentFast(dir, { cacheFile });
    expect(r.problems).toEqual([]);
    expect(fs.readFileSync(cacheFile, 'utf8')).not.toContain(marker);
    expect(JSON.stringify([...r.content.profiles])).not.toContain(marker);

    // A cache written by other validating code (a schema change) is not trusted.
    const [head, ...lines] = fs.readFileSync(cacheFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    for (const line of lines) for (const [username, , parsed] of line) if (username === 'carol') parsed.profile.displayName = 'Tampered';
    fs.writeFileSync(cacheFile, [{ ...head, validator: 'older-schemas' }, ...lines].map((l) => `${JSON.stringify(l)}\n`).join(''));
    const again = await loadContentFast(dir, { cacheFile });
    expect(again.stats.fromCache).toBe(0);
    expect(again.content.profiles.get('carol')!.displayName).not.toBe('Tampered');

    // A cache that is not JSON at all costs a full parse, nothing else.
    fs.writeFileSync(cacheFile, '{ not json');
    expect((await loadContentFast(dir, { cacheFile })).problems).toEqual([]);
  });
});

describe('reusing unchanged profile pages', () => {
  const index = () => buildSiteIndex(loadContent(FIXTURE).content, ctx);

  /** The manifest a release's record holds, as the build reads it (here from a file of its own). */
  const manifestIn = (file: string): PageManifest => {
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as Omit<PageManifest, 'pages' | 'inputs'> & { pages: string[]; inputs?: (string | null)[] };
    return { ...m, pages: KeyColumn.from(m.pages), inputs: m.inputs && KeyColumn.from(m.inputs) };
  };

  /** A previous build: its page files, and a manifest of `pages` (username → key) in the build's column format. */
  function previousBuild(pages: Record<string, string>, fingerprint: string, inputs?: Record<string, string>) {
    const dir = tempDir('incremental-pages-');
    const manifestFile = path.join(dir, 'page-manifest.json');
    const pagesDir = path.join(dir, 'p');
    fs.mkdirSync(pagesDir);
    for (const name of Object.keys(pages)) fs.writeFileSync(path.join(pagesDir, `${name}.html`), `<h1>${name}</h1>`);
    const names = Object.keys(pages).sort();
    fs.writeFileSync(manifestFile, JSON.stringify({
      version: MANIFEST_VERSION, fingerprint, names, pages: names.map((n) => pages[n]), ...(inputs && { inputs: names.map((n) => inputs[n] ?? null) }),
    }));
    return { manifestFile, pagesDir };
  }
  const pagesOf = (plan: PagePlan) => Object.fromEntries(manifestPages(plan.manifest));

  test('only pages whose profile changed, or whose file is gone, are rendered', () => {
    const idx = index();
    const fresh = planPages(idx, 'code-1', undefined, '/nonexistent');
    expect(fresh.reuse).toEqual([]);
    expect(fresh.render.size).toBe(idx.users.length);

    const pages = { ...pagesOf(fresh), alice: rowKey('an older key') };
    const prev = previousBuild(pages, 'code-1');
    fs.rmSync(path.join(prev.pagesDir, 'bob.html'));
    const plan = planPages(idx, 'code-1', manifestIn(prev.manifestFile), prev.pagesDir);
    expect([...plan.render].sort()).toEqual(['alice', 'bob']);
    expect(plan.reuse).toEqual(idx.users.map((u) => u.username).filter((n) => n !== 'alice' && n !== 'bob'));
  });

  test('other code, another SITE_URL (in the fingerprint) or PROFILES_INCREMENTAL=0 render everything', () => {
    const idx = index();
    const pages = pagesOf(planPages(idx, 'code-1', undefined, '/nonexistent'));
    const prev = previousBuild(pages, 'code-1');
    expect(planPages(idx, 'code-2', manifestIn(prev.manifestFile), prev.pagesDir).reuse).toEqual([]);
    expect(planPages(idx, 'code-1', manifestIn(prev.manifestFile), prev.pagesDir, false).reuse).toEqual([]);
    expect(planPages(idx, 'code-1', manifestIn(prev.manifestFile), prev.pagesDir).reuse).toHaveLength(idx.users.length);
  });

  test('a user whose inputs are the previous build\'s takes its key unmade; any other input makes it anew', () => {
    const idx = index();
    const stampOf = (name: string) => (name === 'carol' ? undefined : `stamp-${name}`);
    const inputKeyOf = (u: (typeof idx.users)[number]) => { const s = stampOf(u.username); return s === undefined ? undefined : userInputKey(s, u, undefined); };
    const first = planPages(idx, 'code-1', undefined, '/nonexistent', true, undefined, inputKeyOf);
    const firstInputs = Object.fromEntries(first.manifest.names.map((n, i) => [n, first.manifest.inputs!.get(i)]).filter(([, input]) => input !== null));
    expect(Object.keys(firstInputs).sort()).toEqual(idx.users.map((u) => u.username).filter((n) => n !== 'carol').sort());
    // Keys no hash could give: taken as they are only where the inputs prove the public user the same.
    const pages = Object.fromEntries(first.manifest.names.map((n) => [n, rowKey(`kept-${n}`)]));
    const prev = previousBuild(pages, 'code-1', firstInputs);
    const made: string[] = [];
    const jsonOf = (u: (typeof idx.users)[number]) => { made.push(u.username); return JSON.stringify(u); };
    // alice's file changed (another stamp); bob's view count did; carol's stamp proves nothing.
    const next = buildSiteIndex(loadContent(FIXTURE).content, ctx);
    const bob = next.users.find((u) => u.username === 'bob')!;
    bob.views += 1;
    const plan = planPages(next, 'code-1', manifestIn(prev.manifestFile), prev.pagesDir, true, jsonOf,
      (u) => (u.username === 'alice' ? userInputKey('stamp-alice-2', u, undefined) : inputKeyOf(u)));
    expect(made.sort()).toEqual(['alice', 'bob', 'carol']);
    expect([...plan.sameInputs].sort()).toEqual(next.users.map((u) => u.username).filter((n) => !['alice', 'bob', 'carol'].includes(n)).sort());
    for (const name of plan.sameInputs) expect(pagesOf(plan)[name]).toBe(rowKey(`kept-${name}`));
    expect(pagesOf(plan).bob).toBe(profilePageKey(bob, next.avatars.find(([n]) => n === 'bob')?.[1]));
    expect([...plan.render].sort()).toEqual(['alice', 'bob', 'carol']);
    // Other code: nothing taken, whatever the inputs.
    expect(planPages(next, 'code-2', manifestIn(prev.manifestFile), prev.pagesDir, true, undefined, inputKeyOf).sameInputs.size).toBe(0);
    // A decoration renamed is another input.
    const decorated = next.users.find((u) => u.avatarDecoration)!;
    expect(userInputKey('s', { ...decorated, avatarDecoration: { ...decorated.avatarDecoration!, name: 'Other' } }, undefined)).not.toBe(userInputKey('s', decorated, undefined));
    // So is an avatar of other bytes under the same name.
    const digest = (d: string) => avatarKey('a.png', () => d);
    expect(userInputKey('s', decorated, digest('one'))).not.toBe(userInputKey('s', decorated, digest('two')));
  });

  test('a manifest out of username order only costs renders: nothing is taken from another user', () => {
    const idx = index();
    const keys = pagesOf(planPages(idx, 'code-1', undefined, '/nonexistent'));
    const prev = previousBuild(keys, 'code-1');
    const record = JSON.parse(fs.readFileSync(prev.manifestFile, 'utf8'));
    // Reversed columns: a merge over sorted lists finds at most one entry; each found is the user's own.
    record.names.reverse();
    record.pages.reverse();
    fs.writeFileSync(prev.manifestFile, JSON.stringify(record));
    const plan = planPages(idx, 'code-1', manifestIn(prev.manifestFile), prev.pagesDir);
    expect(plan.reuse.length + plan.render.size).toBe(idx.users.length);
    for (const name of plan.reuse) expect(keys[name]).toBe(pagesOf(plan)[name]);
    expect(plan.render.size).toBeGreaterThan(0);
    // Columns of other lengths: not a manifest.
    fs.writeFileSync(prev.manifestFile, JSON.stringify({ ...record, pages: record.pages.slice(1) }));
    expect(planPages(idx, 'code-1', manifestIn(prev.manifestFile), prev.pagesDir).reuse).toEqual([]);
  });

  test('gone names: those of the previous build missing now, whatever the order', () => {
    expect(goneNames(['a', 'b', 'c', 'd'], ['a', 'c', 'e'])).toEqual(['b', 'd']);
    expect(goneNames(['a', 'b'], [])).toEqual(['a', 'b']);
    expect(goneNames([], ['a'])).toEqual([]);
    // Out of order: the merge would call them all gone; the Set says which are.
    expect(goneNames(['d', 'c', 'b', 'a'], ['c', 'a'])).toEqual(['d', 'b']);
    expect(goneNames(['a', 'b', 'c'], ['c', 'b', 'a'])).toEqual([]);
  });

  test('the page key follows what the page shows, not the account age', () => {
    const user = index().users[0]!;
    const key = profilePageKey(user, 'a.png');
    expect(profilePageKey({ ...user, accountAgeDays: user.accountAgeDays + 1 }, 'a.png')).toBe(key);
    expect(profilePageKey({ ...user, views: user.views + 1 }, 'a.png')).not.toBe(key);
    expect(profilePageKey(user, 'b.png')).not.toBe(key);
    // The avatar by name and bytes: another image under the same name is another page.
    expect(profilePageKey(user, avatarKey('a.png', () => 'digest-1'))).not.toBe(profilePageKey(user, avatarKey('a.png', () => 'digest-2')));
  });

  test('a reused page is the same file, linked, not a copy', () => {
    const prev = previousBuild({ alice: rowKey('k'), bob: rowKey('k') }, 'code-1');
    const to = path.join(tempDir('incremental-next-'), 'p');
    expect(linkPages(['alice', 'bob'], prev.pagesDir, to)).toBe(2);
    expect(fs.readFileSync(path.join(to, 'alice.html'), 'utf8')).toBe('<h1>alice</h1>');
    expect(fs.statSync(path.join(to, 'alice.html')).ino).toBe(fs.statSync(path.join(prev.pagesDir, 'alice.html')).ino);
  });
});

describe('the user API files of a rebuild', () => {
  const usersOf = (dir: string) => path.join(dir, 'client', 'api', 'v1', 'users');
  const site = () => buildSiteIndex(loadContent(FIXTURE).content, ctx);

  test('overwrite those of a retired release in place: exact bytes, no stale file, the served build untouched', async () => {
    const target = path.join(tempDir('incremental-users-'), 'dist');
    const s = site();
    const names = s.users.map((e) => e.username);
    // The build before last: a longer file for alice (cut to length), a profile since removed.
    fs.mkdirSync(usersOf(`${target}.prev`), { recursive: true });
    fs.writeFileSync(path.join(usersOf(`${target}.prev`), names[0]!), 'x'.repeat(50_000));
    fs.writeFileSync(path.join(usersOf(`${target}.prev`), 'removed-since'), '{}');
    const recycledInode = fs.statSync(path.join(usersOf(`${target}.prev`), names[0]!)).ino;
    // The build being served: must not change.
    fs.mkdirSync(usersOf(target), { recursive: true });
    fs.writeFileSync(path.join(usersOf(target), names[0]!), 'served');

    const staging = `${target}.users`;
    expect(recycleUserFiles(`${target}.prev`, staging, true)).toBe(true);
    expect(fs.existsSync(usersOf(`${target}.prev`))).toBe(false);
    expect(await writeUserFiles(staging, s, new AnswerTimes(s.builtAt))).toBe(names.length);
    expect(fs.readdirSync(staging).sort()).toEqual([...names].sort());
    for (const e of s.users) expect(fs.readFileSync(path.join(staging, e.username)).equals(prerenderedUserBody(s.builtAt, userData(e)) as Buffer), e.username).toBe(true);
    expect(fs.statSync(path.join(staging, names[0]!)).ino).toBe(recycledInode);
    expect(fs.readFileSync(path.join(usersOf(target), names[0]!), 'utf8')).toBe('served');
  });

  test('a recycled file linked from a kept release (a layered release brought it forward) is replaced, never written into', async () => {
    const target = path.join(tempDir('incremental-users-'), 'dist');
    const s = site();
    const name = s.users[0]!.username;
    fs.mkdirSync(usersOf(`${target}.prev`), { recursive: true });
    fs.mkdirSync(usersOf(`${target}.kept`), { recursive: true });
    fs.writeFileSync(path.join(usersOf(`${target}.kept`), name), 'kept release');
    fs.linkSync(path.join(usersOf(`${target}.kept`), name), path.join(usersOf(`${target}.prev`), name));
    const staging = `${target}.users`;
    expect(recycleUserFiles(`${target}.prev`, staging, true)).toBe(true);
    await writeUserFiles(staging, s, new AnswerTimes(s.builtAt));
    expect(fs.readFileSync(path.join(staging, name)).equals(prerenderedUserBody(s.builtAt, userData(s.users[0]!)) as Buffer)).toBe(true);
    expect(fs.readFileSync(path.join(usersOf(`${target}.kept`), name), 'utf8')).toBe('kept release');
  });

  // A few users are written in the build's own thread, more in a thread of their own: the same function, the same files.
  test('written in the build\'s own thread (a few users) or in a thread of their own, the same bytes, codings included', async () => {
    const s = site();
    const written = async (users: Iterable<PublicUser>) => {
      const staging = path.join(tempDir('incremental-users-'), 'users');
      const compressed = { stats: emptyStats(), layout: 'packed' as const };
      expect(await writeUserFiles(staging, s, new AnswerTimes(s.builtAt), users, compressed)).toBe(s.users.length);
      return { files: new Map(fs.readdirSync(staging).sort().map((f) => [f, fs.readFileSync(path.join(staging, f))])), compressed: compressed.stats.files };
    };
    // An array of a few users: this thread; any other iterable: the worker thread.
    const [here, there] = [await written(s.users), await written(s.users.values())];
    expect([...here.files.keys()]).toEqual(s.users.map((u) => u.username).sort());
    expect([...there.files.keys()]).toEqual([...here.files.keys()]);
    for (const [name, bytes] of here.files) expect(there.files.get(name)!.equals(bytes), name).toBe(true);
    expect(here.compressed).toBeGreaterThan(0);
    expect(there.compressed).toBe(here.compressed);
  });

  test('a full build (or a first one) writes new files and leaves the retired release alone', async () => {
    const target = path.join(tempDir('incremental-users-'), 'dist');
    const s = site();
    fs.mkdirSync(usersOf(`${target}.prev`), { recursive: true });
    fs.writeFileSync(path.join(usersOf(`${target}.prev`), 'old'), '{}');
    const staging = `${target}.users`;
    fs.mkdirSync(staging);
    fs.writeFileSync(path.join(staging, 'left-by-a-crash'), '{}');
    expect(recycleUserFiles(`${target}.prev`, staging, false)).toBe(false);
    expect(fs.existsSync(path.join(usersOf(`${target}.prev`), 'old'))).toBe(true);
    expect(await writeUserFiles(staging, s, new AnswerTimes(s.builtAt))).toBe(s.users.length);
    expect(fs.readdirSync(staging)).toHaveLength(s.users.length);
    expect(recycleUserFiles(undefined, staging, true)).toBe(false);
    expect(fs.existsSync(staging)).toBe(false);
  });
});
