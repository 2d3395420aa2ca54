// A rebuild that changed a few profiles writes a release holding only what changed, and reads the
// rest from the release before (src/release/layers.ts). What it serves must be exactly what a whole
// release of the same content serves, file for file and byte for byte.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, onTestFinished, test } from 'vitest';
import { layerReleases, layeredFiles, locator, releaseFiles, type Layers } from '../../src/release/layers.ts';
import { KEEP_RELEASES, listReleases, readReleaseInfo, releasePath, releasesDir, releasesToPrune, servedRelease, switchRelease } from '../../src/release/releases.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { manifestPages } from '../../src/build/reuse/page-reuse.ts';
import { readRecord, rowKey, writeRecord } from '../../src/build/reuse/record.ts';
import { buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { serve } from '../../scripts/support/serve-build.ts';
import { FIXTURE, servedBytes, servedText } from '../support/helpers.ts';
import { isPacked } from '../../src/release/coded-file.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

/** A copy of the shared build as the only release of a new dist folder. */
function copyOfSharedBuild(name: string): string {
  const work = workDir(name);
  made.push(work);
  fs.rmSync(work, { recursive: true, force: true });
  const dist = path.join(work, 'dist');
  const shared = sharedBuild().dist;
  const id = servedRelease(shared)!;
  fs.cpSync(releasePath(shared, id), releasePath(dist, id), { recursive: true });
  switchRelease(dist, id);
  return dist;
}

function editedFixture(dist: string, name: string, edit: (dir: string) => void): string {
  const dir = path.join(path.dirname(dist), name);
  fs.cpSync(FIXTURE, dir, { recursive: true });
  edit(dir);
  return dir;
}

const served = (dist: string) => {
  const id = servedRelease(dist)!;
  return { id, dir: releasePath(dist, id), info: readReleaseInfo(dist, id)! };
};

/** Every file the served release has, with the bytes it serves. */
function servedFiles(dist: string): Map<string, Buffer> {
  const { dir, info } = served(dist);
  const client = buildLayout(dir).client;
  const at = locator(releasesDir(dist), client, info.layers);
  return new Map(releaseFiles(releasesDir(dist), client, info.layers).sort().map((f) => [f, fs.readFileSync(path.join(at(f)!, f))]));
}

const bobRenamed = (dir: string) => fs.writeFileSync(path.join(dir, 'profiles', 'bob.yaml'), 'displayName: Robert\ncreatedAt: 2024-11-02T00:00:00Z\n');
const zedAdded = (dir: string) => fs.writeFileSync(path.join(dir, 'profiles', 'zed.yaml'), 'displayName: Zed\ncreatedAt: 2025-05-05T00:00:00Z\n');
const erinRemoved = (dir: string) => fs.rmSync(path.join(dir, 'profiles', 'erin_99.yaml'));

describe('layered releases', () => {
  test('a rebuild holds only what changed and serves exactly what a whole release would', async () => {
    const layeredDist = copyOfSharedBuild('layered');
    const wholeDist = copyOfSharedBuild('whole');
    const first = served(layeredDist).id;
    const before = servedFiles(layeredDist);
    const content = editedFixture(layeredDist, 'edited', (dir) => { bobRenamed(dir); zedAdded(dir); erinRemoved(dir); });

    const layered = buildFixture(content, layeredDist, { SOURCE_DATE_EPOCH: '1768482000' });
    expect(layered.status, layered.stderr).toBe(0);
    // The reference: a whole release, its pages rendered by `astro build` itself.
    const whole = buildFixture(content, wholeDist, { SOURCE_DATE_EPOCH: '1768482000', RELEASE_LAYERS: '0', KEPT_RENDERER: '0' });
    expect(whole.status, whole.stderr).toBe(0);
    expect(served(wholeDist).info.layers).toBeUndefined();
    // The few pages were rendered with the code the shared build kept, not by a second `astro build`.
    expect(layered.stdout).toMatch(/with Astro's kept renderer/);
    expect(whole.stdout).not.toMatch(/kept renderer/);

    const { id, dir, info } = served(layeredDist);
    expect(info.layers).toEqual({
      base: first,
      from: {
        'p/bob.html': id, 'api/v1/users/bob': id, 'p/zed.html': id, 'api/v1/users/zed': id,
        'p/erin_99.html': null, 'api/v1/users/erin_99': null,
        // zed has no avatar: the preview made from the name.
        ...Object.fromEntries(Object.entries(info.layers!.from).filter(([f]) => f.startsWith('media/og/'))),
      },
    } satisfies Layers);
    // Its own folders hold only those files, each with its compressed codings inside (src/release/coded-file.ts).
    expect(fs.readdirSync(path.join(dir, 'client', 'p')).sort()).toEqual(['bob.html', 'zed.html']);
    expect(fs.readdirSync(path.join(dir, 'client', 'api', 'v1', 'users')).sort()).toEqual(['bob', 'zed']);
    for (const f of ['p/bob.html', 'p/zed.html', 'api/v1/users/bob', 'api/v1/users/zed']) expect(isPacked(fs.readFileSync(path.join(dir, 'client', f))), f).toBe(true);

    // The same files, byte for byte, as the whole release of the same content.
    const layeredFiles_ = servedFiles(layeredDist);
    const wholeFiles = servedFiles(wholeDist);
    expect([...layeredFiles_.keys()]).toEqual([...wholeFiles.keys()]);
    for (const [file, bytes] of wholeFiles) expect(layeredFiles_.get(file)!.equals(bytes), file).toBe(true);
    // Unchanged answers kept their bytes (and so their timestamp) from the first build.
    expect(layeredFiles_.get('api/v1/users/alice')!.equals(before.get('api/v1/users/alice')!)).toBe(true);
    expect(JSON.parse(servedText(layeredFiles_.get('api/v1/users/bob')!)).meta.timestamp).toBe('2026-01-15T13:00:00.000Z');

    // And the server reads it so.
    const server = await serve({ env: { DIST_DIR: layeredDist } });
    onTestFinished(() => server.stop());
    const get = (p: string) => fetch(`${server.base}${p}`);
    expect(Buffer.from(await (await get('/api/v1/users/alice')).arrayBuffer()).equals(servedBytes(wholeFiles.get('api/v1/users/alice')!))).toBe(true);
    expect(await (await get('/p/zed')).text()).toContain('Zed');
    const gone = await get('/api/v1/users/erin_99');
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.code).toBe('USER_NOT_FOUND');
    expect((await get('/p/erin_99')).status).toBe(404);
  }, 60_000);

  test('users whose files\' stamps and inputs are unchanged are taken from the served release, and it serves what a whole release would', () => {
    const work = workDir('stamps');
    made.push(work);
    fs.rmSync(work, { recursive: true, force: true });
    const content = path.join(work, 'content');
    fs.cpSync(FIXTURE, content, { recursive: true });
    const dist = path.join(work, 'dist');
    // Stamps trusted at once (BUILD_SETTLE_MS=0): these files were written a moment ago.
    const settled = { BUILD_SETTLE_MS: '0', SOURCE_DATE_EPOCH: '1768482000' };
    const first = buildFixture(content, dist, settled);
    expect(first.status, first.stderr).toBe(0);
    const recordFile = () => buildLayout(served(dist).dir).record;
    const raw = () => readRecord(recordFile()).manifest!;
    // username → page key, as the build wrote them.
    const manifestOf = () => Object.fromEntries(manifestPages(raw()));
    // Every user's input key is recorded: the stamps were trusted.
    expect(raw().inputs!.toArray().every((input) => typeof input === 'string')).toBe(true);
    // A key no hash gives, for carol: the next build keeps it only if it takes her unmade.
    const tampered = manifestOf();
    const read = readRecord(recordFile());
    // A read record is frozen: changed in a copy.
    const record = { ...read, manifest: { ...read.manifest!, pages: read.manifest!.pages.copy() } };
    record.manifest.pages.set(record.manifest.names.indexOf('carol'), rowKey('taken-unmade'));
    writeRecord(recordFile(), record);
    // bob's file edited; a view count changed for dave (stats/views.yaml): both made anew.
    bobRenamed(content);
    const views = path.join(content, 'stats', 'views.yaml');
    fs.writeFileSync(views, fs.readFileSync(views, 'utf8').replace(/^dave: \d+$/m, 'dave: 424242'));

    const second = buildFixture(content, dist, settled);
    expect(second.status, second.stderr).toBe(0);
    const next = manifestOf();
    expect(next.carol).toBe(rowKey('taken-unmade'));
    expect(next.bob).not.toBe(tampered.bob);
    expect(next.dave).not.toBe(tampered.dave);
    expect(served(dist).info.layers?.from).toMatchObject({ 'p/bob.html': served(dist).id, 'api/v1/users/dave': served(dist).id });

    const whole = path.join(work, 'whole', 'dist');
    const reference = buildFixture(content, whole, { SOURCE_DATE_EPOCH: '1768482000', PROFILES_INCREMENTAL: '0', KEPT_RENDERER: '0' });
    expect(reference.status, reference.stderr).toBe(0);
    // All three builds at the same time (SOURCE_DATE_EPOCH): the same bytes everywhere, user files' `meta` included.
    const [ours, theirs] = [servedFiles(dist), servedFiles(whole)];
    expect([...ours.keys()]).toEqual([...theirs.keys()]);
    for (const [file, bytes] of theirs) expect(ours.get(file)!.equals(bytes), file).toBe(true);
    expect(servedText(ours.get('api/v1/users/dave')!)).toContain('"views":424242');
  }, 120_000);

  test('layers over layers keep one base; the releases read from are never pruned', () => {
    const dist = copyOfSharedBuild('stacked');
    const base = served(dist).id;
    const edits = [bobRenamed, zedAdded, erinRemoved, (dir: string) => fs.writeFileSync(path.join(dir, 'profiles', 'dave.yaml'), fs.readFileSync(path.join(FIXTURE, 'profiles', 'dave.yaml'), 'utf8').replace(/^displayName: .*$/m, 'displayName: Dave Again'))];
    for (let k = 0; k < edits.length; k++) {
      const content = editedFixture(dist, `edit-${k}`, (dir) => { for (const e of edits.slice(0, k + 1)) e(dir); });
      const b = buildFixture(content, dist, { SOURCE_DATE_EPOCH: String(1768482000 + k * 60) });
      expect(b.status, b.stderr).toBe(0);
      expect(served(dist).info.layers?.base).toBe(base);
    }
    // Four builds after the base, three releases kept, and the base kept too: they read from it.
    expect(listReleases(dist)).toContain(base);
    const { info, id } = served(dist);
    // Each reads from its base, itself and the release before it, no older one: bob's page, made by
    // the first of the four, was brought forward as a link (layers.ts gatherLayers).
    expect(layerReleases(info.layers).sort()).toEqual([base, info.previous!, id].sort());
    expect(listReleases(dist).length).toBeLessThanOrEqual(KEEP_RELEASES + 2);
    expect(fs.existsSync(releasePath(dist, info.layers!.from['p/bob.html']!))).toBe(true);
    expect(layeredFiles(releasesDir(dist), buildLayout(served(dist).dir).client, info.layers, 'p/').sort())
      .toEqual(['alice', 'bob', 'carol', 'dave', 'frank', 'kate', 'zed'].map((n) => `p/${n}.html`));
  }, 90_000);

  test('pruning keeps whatever a kept release reads from', () => {
    const reads: Record<string, string[]> = { c: ['a'], d: ['a', 'b'] };
    expect(releasesToPrune(['a', 'b', 'c', 'd'], 'd', 'e', 3, (id) => reads[id] ?? [])).toEqual([]);
    expect(releasesToPrune(['a', 'b', 'c', 'd'], 'd', 'e', 3)).toEqual(['a', 'b']);
    expect(releasesToPrune(['a', 'b', 'c', 'd', 'x'], 'x', 'e', 3, (id) => reads[id] ?? [])).toEqual(['c']);
  });
});
