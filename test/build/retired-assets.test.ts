// The stylesheet a cached page links outlives the deploy that replaced it (src/build/files/retired-assets.ts):
// a release keeps the assets of the one before for a day, as made, then drops them.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, describe, expect, test } from 'vitest';
import { ASSETS_DIR, RETIRED_ASSET_SECONDS, isRetiredAsset, keepRetiredAssets } from '../../src/build/files/retired-assets.ts';
import { identityOf, isPacked, packCodings, partOf } from '../../src/release/coded-file.ts';
import { readReleaseInfo, releasePath, servedRelease } from '../../src/release/releases.ts';
import { BROTLI, IMMUTABLE_CACHE_CONTROL } from '../../src/http/headers.ts';
import { BUILD_EPOCH, buildFixture, ownBuild, type OwnBuild } from '../support/built-server.ts';
import { rawRequest } from '../support/raw-http.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const temp = tempDirs();
const iso = (epoch: number) => new Date(epoch * 1000).toISOString();
const DAY = RETIRED_ASSET_SECONDS;

function client(files: Record<string, string | Uint8Array>): string {
  const dir = temp('retired-assets-');
  for (const [file, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), bytes);
  }
  return dir;
}

describe('keepRetiredAssets', () => {
  const css = 'body{color:#123}'.repeat(40);
  const packed = packCodings(Buffer.from(css), new Map([['br', zlib.brotliCompressSync(css)]]));

  test('the served release\'s assets this one does not make, as made, retired from this build; never a sibling on its own', () => {
    const served = client({ '_astro/Old.1.css': packed, '_astro/Same.2.css': 'a', '_astro/Plain.3.js': 'x()', '_astro/Plain.3.js.gz': zlib.gzipSync('x()') });
    const fresh = client({ '_astro/Same.2.css': 'a', '_astro/New.4.css': 'b' });
    const at = iso(BUILD_EPOCH);
    expect(keepRetiredAssets(served, undefined, fresh, at)).toEqual({ '_astro/Old.1.css': at, '_astro/Plain.3.js': at });
    expect(fs.readFileSync(path.join(fresh, '_astro/Old.1.css'), 'utf8')).toBe(css);
    expect(fs.readFileSync(path.join(fresh, '_astro/Plain.3.js'), 'utf8')).toBe('x()');
    expect(fs.readdirSync(path.join(fresh, ASSETS_DIR)).sort()).toEqual(['New.4.css', 'Old.1.css', 'Plain.3.js', 'Same.2.css']);
  });

  test('kept from the time it was first retired, for a day', () => {
    const served = client({ '_astro/Old.1.css': 'old', '_astro/Older.0.css': 'older' });
    const since = { '_astro/Old.1.css': iso(BUILD_EPOCH), '_astro/Older.0.css': iso(BUILD_EPOCH - DAY) };
    const fresh = client({ '_astro/New.4.css': 'b' });
    expect(keepRetiredAssets(served, since, fresh, iso(BUILD_EPOCH + DAY - 1))).toEqual({ '_astro/Old.1.css': iso(BUILD_EPOCH) });
    expect(fs.existsSync(path.join(fresh, '_astro/Older.0.css'))).toBe(false);
    const later = client({ '_astro/New.4.css': 'b' });
    expect(keepRetiredAssets(served, since, later, iso(BUILD_EPOCH + DAY))).toEqual({});
    expect(fs.readdirSync(path.join(later, ASSETS_DIR))).toEqual(['New.4.css']);
  });

  test('a first release, or a served one without assets, keeps nothing', () => {
    const fresh = client({ '_astro/New.4.css': 'b' });
    expect(keepRetiredAssets(undefined, undefined, fresh, iso(BUILD_EPOCH))).toEqual({});
    expect(keepRetiredAssets(client({ 'index.html': 'x' }), undefined, fresh, iso(BUILD_EPOCH))).toEqual({});
  });

  test('a retired asset is told with its compressed siblings', () => {
    const retired = { '_astro/Old.1.css': iso(BUILD_EPOCH) };
    for (const file of ['_astro/Old.1.css', '_astro/Old.1.css.br', '_astro/Old.1.css.gz']) expect(isRetiredAsset(retired, file), file).toBe(true);
    for (const file of ['_astro/New.4.css', 'p/alice.html', '_astro/Old.1.cs']) expect(isRetiredAsset(retired, file), file).toBe(false);
    expect(isRetiredAsset(undefined, '_astro/Old.1.css')).toBe(false);
  });
});

describe('through builds and the server', () => {
  let own: OwnBuild | undefined;
  afterEach(async () => { await own?.stop(); own = undefined; });

  test('a page cached before a deploy finds its stylesheet for a day, through whole and edit builds', async () => {
    own = await ownBuild('retired-assets');
    const { dist } = own;
    // The served release as a build of other code left it: a stylesheet this code does not make.
    const old = `${ASSETS_DIR}/Base.OlderCode.css`;
    const css = `.profile{color:#234}${'/* older code */'.repeat(30)}`;
    fs.writeFileSync(path.join(releasePath(dist, servedRelease(dist)!), 'client', old), css);
    const content = own.fixtureWith('content', {});
    const build = (epoch: number, env: Record<string, string> = {}) => {
      const r = buildFixture(content, dist, { SOURCE_DATE_EPOCH: String(epoch), BUILD_SETTLE_MS: '0', ...env });
      expect(r.status, r.stderr).toBe(0);
      const id = servedRelease(dist)!;
      // Attached before the event loop runs again: the server's line cannot have been read yet.
      const switched = own!.server.nextOutput(new RegExp(`Now serving the build of .*${id}`));
      return { stdout: r.stdout, id, switched, client: path.join(releasePath(dist, id), 'client') };
    };
    const served = async () => {
      const r = await rawRequest(own!.base, `/${old}`, { headers: { 'accept-encoding': 'br' } });
      return { status: r.status, cache: r.header('cache-control'), body: r.status === 200 ? zlib.brotliDecompressSync(r.body).toString() : '' };
    };

    const first = build(BUILD_EPOCH + 60);
    expect(readReleaseInfo(dist, first.id)!.retiredAssets).toEqual({ [old]: iso(BUILD_EPOCH + 60) });
    // Made as this release makes its files: packed with its codings for the Node server.
    const bytes = fs.readFileSync(path.join(first.client, old));
    expect(isPacked(bytes)).toBe(true);
    expect(identityOf(bytes).toString()).toBe(css);
    expect(partOf(bytes, BROTLI)).toBeDefined();
    await first.switched;
    expect(await served()).toEqual({ status: 200, cache: IMMUTABLE_CACHE_CONTROL, body: css });

    // An edit build links the served release's other files: this one it keeps by its age, from the same time.
    fs.appendFileSync(path.join(content, 'profiles/bob.yaml'), 'bio: "Edited."\n');
    const edit = build(BUILD_EPOCH + 120, { CHANGED_FILES: 'profiles/bob.yaml', CHANGED_SINCE: first.id });
    expect(edit.stdout).toMatch(/Finding the changed profiles/);
    expect(readReleaseInfo(dist, edit.id)!.retiredAssets).toEqual({ [old]: iso(BUILD_EPOCH + 60) });
    expect(identityOf(fs.readFileSync(path.join(edit.client, old))).toString()).toBe(css);

    // A day after it was retired, gone: the server's 404, and nothing of it in the release.
    const later = build(BUILD_EPOCH + 60 + DAY, { PROFILES_INCREMENTAL: '0' });
    expect(readReleaseInfo(dist, later.id)!.retiredAssets).toBeUndefined();
    expect(fs.existsSync(path.join(later.client, old))).toBe(false);
    await later.switched;
    expect((await served()).status).toBe(404);
  }, 60_000);
});
