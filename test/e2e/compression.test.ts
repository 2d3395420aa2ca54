// Compression on the real server and in the real build: the siblings the build writes (where they
// should be, nowhere else, each decoding to its file, after a rebuild too) and what the server
// sends from them over HTTP (each coding decodes to the identity bytes, an ETag per coding, a 304
// per coding, Vary on every answer of a compressible file). Raw `node:http` requests: `fetch`
// would decode the bodies and hide Content-Encoding's effect.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, onTestFinished, test } from 'vitest';
import { listFiles, locator, releaseFiles } from '../../src/release/layers.ts';
import { listReleases, readReleaseInfo, releasePath, releasesDir, servedRelease } from '../../src/release/releases.ts';
import { MIN_COMPRESSED_BYTES, codingLayoutOf } from '../../src/build/files/compress.ts';
import { DEPLOY_TARGETS, precompressFromEnv } from '../../src/config.ts';
import { ENCODINGS, compressedBaseOf, isCompressible } from '../../src/http/headers.ts';
import { buildFixture, ownBuild, sharedBuild, workDir } from '../support/built-server.ts';
import { serve } from '../../scripts/support/serve-build.ts';
import { FIXTURE, unpackedEntries } from '../support/helpers.ts';
import { isPacked } from '../../src/release/coded-file.ts';

const { base, dist: DIST } = sharedBuild();

interface Got { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

function get(origin: string, target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.request(origin + target, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.once('error', reject);
    req.end();
  });
}

const decoded = (r: Got) =>
  (r.headers['content-encoding'] === 'br' ? zlib.brotliDecompressSync(r.body) : r.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(r.body) : r.body);

/**
 * Every file of a release as the server reads it (a layered release reads some from others), by
 * path, with the codings a `node` release keeps inside a file as siblings of it
 * (src/release/coded-file.ts); and that no coding is a file of its own there.
 */
function servedReleaseFiles(dist: string): Map<string, Buffer> {
  const id = servedRelease(dist)!;
  const info = readReleaseInfo(dist, id)!;
  const client = path.join(releasesDir(dist), id, 'client');
  const at = locator(releasesDir(dist), client, info.layers);
  const stored = releaseFiles(releasesDir(dist), client, info.layers);
  expect(stored.filter((f) => compressedBaseOf(f) !== undefined)).toEqual([]);
  return new Map(stored.flatMap((f) => unpackedEntries(f, fs.readFileSync(path.join(at(f)!, f)))));
}

/**
 * The rules of the siblings: only beside a compressible file, each decoding to it; beside every
 * compressible text file of a few KB (where both codings always pay).
 */
function checkSiblings(dist: string): number {
  const files = servedReleaseFiles(dist);
  let checked = 0;
  for (const [file, bytes] of files) {
    const own = compressedBaseOf(file);
    if (own !== undefined) {
      expect(isCompressible(own), file).toBe(true);
      expect(files.has(own), `${file} without its file`).toBe(true);
      const plain = file.endsWith('.br') ? zlib.brotliDecompressSync(bytes) : zlib.gunzipSync(bytes);
      expect(plain.equals(files.get(own)!), file).toBe(true);
      expect(bytes.length, file).toBeLessThanOrEqual(plain.length * 0.9);
      checked++;
      continue;
    }
    const size = bytes.length;
    if (isCompressible(file) && size >= 2048) for (const e of ENCODINGS) expect(files.has(file + e.suffix), `${file}${e.suffix}`).toBe(true);
    if (!isCompressible(file) || size < MIN_COMPRESSED_BYTES) for (const e of ENCODINGS) expect(files.has(file + e.suffix), `${file}${e.suffix}`).toBe(false);
  }
  return checked;
}

describe('the build writes compressed siblings', () => {
  test('beside every compressible file worth it, nowhere else, each decoding to its file', () => {
    const files = servedReleaseFiles(DIST);
    expect(checkSiblings(DIST)).toBeGreaterThan(30);
    for (const f of ['p/alice.html', 'api/v1/users/alice', 'index.html', 'docs.html', 'openapi.json', 'sitemap.xml', 'service-api/v1/creators']) {
      for (const e of ENCODINGS) expect(files.has(f + e.suffix), f + e.suffix).toBe(true);
    }
    // Never the handler's own tables, never images.
    expect([...files.keys()].filter((f) => (f.startsWith('_lookup/') || f.startsWith('media/')) && compressedBaseOf(f) !== undefined)).toEqual([]);
  });

  test('after a rebuild that changed a profile (a layered release): the same rules, the new bytes', async () => {
    const own = await ownBuild('compression-rebuild');
    onTestFinished(() => own.stop());
    const edited = own.fixtureWith('edited', { 'profiles/bob.yaml': 'displayName: Robert\ncreatedAt: 2024-11-02T00:00:00Z\n' });
    const switched = own.server.nextOutput(/Now serving the build of/);
    const b = own.rebuild(edited);
    expect(b.status, String(b.stderr)).toBe(0);
    await switched;
    expect(readReleaseInfo(own.dist, servedRelease(own.dist)!)!.layers).toBeDefined();
    expect(checkSiblings(own.dist)).toBeGreaterThan(30);
    const page = await get(own.base, '/p/bob', { 'accept-encoding': 'br' });
    expect(page.headers['content-encoding']).toBe('br');
    expect(decoded(page).toString()).toContain('Robert');
  }, 60_000);
});

describe('each target keeps its own codings', () => {
  // Pages are linked from the served release when their key is the same, and a whole build
  // overwrites the answers of a release it prunes: neither may carry a Node release's packed
  // files into a static one, which a static host would send as they are.
  test('a static build after Node builds in the same folder holds no file packed for the Node server', () => {
    const work = workDir('codings-across-targets');
    onTestFinished(() => fs.rmSync(work, { recursive: true, force: true }));
    const dist = path.join(work, 'dist');
    // Three whole Node releases (none reads from another): the fourth build prunes the first and takes its answers' files.
    for (let k = 0; k < 3; k++) {
      const b = buildFixture(FIXTURE, dist, { SOURCE_DATE_EPOCH: String(1768482000 + k * 60), RELEASE_LAYERS: '0' });
      expect(b.status, String(b.stderr)).toBe(0);
    }
    // The first (whole) release's page, written by the Node target with its codings inside.
    expect(isPacked(fs.readFileSync(path.join(releasePath(dist, listReleases(dist)[0]!), 'client', 'p', 'alice.html')))).toBe(true);
    const b = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'static', SOURCE_DATE_EPOCH: String(1768482000 + 180) });
    expect(b.status, String(b.stderr)).toBe(0);
    const client = path.join(releasesDir(dist), servedRelease(dist)!, 'client');
    const files = fs.readdirSync(client, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
    expect(files.filter((f) => isPacked(fs.readFileSync(f))).map((f) => path.relative(client, f))).toEqual([]);
    for (const f of ['p/alice.html.br', 'p/alice.html.gz']) expect(fs.existsSync(path.join(client, f)), f).toBe(true);
    // Every answer as the static release serves it: JSON, not a head and compressed bytes.
    for (const f of fs.readdirSync(path.join(client, 'api', 'v1', 'users')).filter((n) => compressedBaseOf(n) === undefined)) {
      expect(() => JSON.parse(fs.readFileSync(path.join(client, 'api', 'v1', 'users', f), 'utf8')), f).not.toThrow();
    }
  }, 90_000);
});

describe('PRECOMPRESS=0: no codings, for a host that compresses by itself', () => {
  /** Every file of the served release, by path, with its bytes. */
  const served = (dist: string) => {
    const client = path.join(releasesDir(dist), servedRelease(dist)!, 'client');
    return new Map(listFiles(client).sort().map((f) => [f, fs.readFileSync(path.join(client, f))]));
  };

  test('PRECOMPRESS is 1 (the default) or 0, anything else is refused with the two it takes; 0 means no codings on every target', () => {
    for (const raw of [undefined, '', '1']) expect(precompressFromEnv({ PRECOMPRESS: raw }), String(raw)).toBe(true);
    expect(precompressFromEnv({ PRECOMPRESS: '0' })).toBe(false);
    for (const raw of ['no', 'false', ' 0', '2']) expect(() => precompressFromEnv({ PRECOMPRESS: raw }), raw).toThrow(/PRECOMPRESS must be 1 .* or 0 /);
    for (const target of DEPLOY_TARGETS) expect(codingLayoutOf(target, false), target).toBeUndefined();
    expect([codingLayoutOf('node'), codingLayoutOf('static'), codingLayoutOf('cloudflare')]).toEqual(['packed', 'siblings', undefined]);
  });

  test('a static build writes none, also over the answers of a static build that had them, the bytes a fresh one writes', () => {
    const work = workDir('precompress-off');
    onTestFinished(() => fs.rmSync(work, { recursive: true, force: true }));
    const dist = path.join(work, 'dist');
    const at = (k: number) => ({ DEPLOY_TARGET: 'static', SOURCE_DATE_EPOCH: String(1768482000 + k * 60) });
    // Three whole static releases with siblings: the fourth build prunes the first and takes its answers' files.
    for (let k = 0; k < 3; k++) {
      const b = buildFixture(FIXTURE, dist, { ...at(k), RELEASE_LAYERS: '0' });
      expect(b.status, String(b.stderr)).toBe(0);
    }
    expect(fs.existsSync(path.join(releasePath(dist, listReleases(dist)[0]!), 'client', 'api', 'v1', 'users', 'alice.gz'))).toBe(true);
    const off = buildFixture(FIXTURE, dist, { ...at(3), PRECOMPRESS: '0' });
    expect(off.status, String(off.stderr)).toBe(0);
    expect(off.stdout).not.toMatch(/Compressing/);
    const files = served(dist);
    expect([...files.keys()].filter((f) => compressedBaseOf(f) !== undefined || isPacked(files.get(f)!))).toEqual([]);
    // What builds with no codings all along write, file for file (the answers keep the first build's time).
    const fresh = path.join(work, 'fresh', 'dist');
    for (const k of [0, 3]) {
      const b = buildFixture(FIXTURE, fresh, { ...at(k), PRECOMPRESS: '0' });
      expect(b.status, String(b.stderr)).toBe(0);
    }
    const theirs = served(fresh);
    expect([...files.keys()]).toEqual([...theirs.keys()]);
    for (const [f, bytes] of theirs) expect(files.get(f)!.equals(bytes), f).toBe(true);
  }, 90_000);

  test('a Node build with codings over the answers of Node builds without packs each one, the bytes a fresh one writes', () => {
    const work = workDir('precompress-back-on');
    onTestFinished(() => fs.rmSync(work, { recursive: true, force: true }));
    const dist = path.join(work, 'dist');
    const at = (k: number) => ({ SOURCE_DATE_EPOCH: String(1768482000 + k * 60), RELEASE_LAYERS: '0' });
    // Three whole Node releases without codings: the fourth build prunes the first and takes its answers' files.
    for (let k = 0; k < 3; k++) {
      const b = buildFixture(FIXTURE, dist, { ...at(k), PRECOMPRESS: '0' });
      expect(b.status, String(b.stderr)).toBe(0);
    }
    const on = buildFixture(FIXTURE, dist, at(3));
    expect(on.status, String(on.stderr)).toBe(0);
    const files = served(dist);
    const answers = [...files.keys()].filter((f) => f.startsWith('api/v1/users/'));
    expect(answers.length).toBeGreaterThan(5);
    // Packed by the answers' writer, which the compress step no longer reads after (write.ts).
    expect(answers.filter((f) => !isPacked(files.get(f)!))).toEqual([]);
    const fresh = path.join(work, 'fresh', 'dist');
    for (const k of [0, 3]) {
      const b = buildFixture(FIXTURE, fresh, at(k));
      expect(b.status, String(b.stderr)).toBe(0);
    }
    const theirs = served(fresh);
    expect([...files.keys()]).toEqual([...theirs.keys()]);
    for (const [f, bytes] of theirs) expect(files.get(f)!.equals(bytes), f).toBe(true);
  }, 90_000);

  test('the Node server then sends each page and answer as it is, with Vary, to a client that takes br and gzip', async () => {
    const work = workDir('precompress-off-node');
    onTestFinished(() => fs.rmSync(work, { recursive: true, force: true }));
    const dist = path.join(work, 'dist');
    const b = buildFixture(FIXTURE, dist, { PRECOMPRESS: '0' });
    expect(b.status, String(b.stderr)).toBe(0);
    const files = served(dist);
    expect([...files.keys()].filter((f) => compressedBaseOf(f) !== undefined || isPacked(files.get(f)!))).toEqual([]);
    const server = await serve({ env: { DIST_DIR: dist } });
    onTestFinished(() => server.stop());
    for (const [target, file] of [['/p/alice', 'p/alice.html'], ['/api/v1/users/alice', 'api/v1/users/alice']] as const) {
      const r = await get(server.base, target, { 'accept-encoding': 'br, gzip' });
      expect(r.status, target).toBe(200);
      expect(r.headers['content-encoding'], target).toBeUndefined();
      expect(r.headers.vary, target).toMatch(/Accept-Encoding/i);
      expect(r.body.equals(files.get(file)!), target).toBe(true);
    }
  }, 90_000);
});

describe('the Node server sends them', () => {
  const targets = ['/p/alice', '/api/v1/users/alice', '/', '/docs', '/openapi.json', '/sitemap.xml', '/service-api/v1/creators'];

  test('br and gzip bodies decode to the identity bytes; each coding its own ETag; Vary on all three', async () => {
    for (const target of targets) {
      const identity = await get(base, target);
      expect(identity.status, target).toBe(200);
      expect(identity.headers['content-encoding'], target).toBeUndefined();
      expect(identity.headers.vary, target).toBe('Accept-Encoding');
      const etags = new Set([identity.headers.etag]);
      for (const [accept, coding] of [['gzip, deflate, br, zstd', 'br'], ['gzip', 'gzip']] as const) {
        const r = await get(base, target, { 'accept-encoding': accept });
        expect(r.headers['content-encoding'], `${target} ${accept}`).toBe(coding);
        expect(r.headers.vary, target).toBe('Accept-Encoding');
        expect(Number(r.headers['content-length']), target).toBe(r.body.length);
        expect(r.body.length, target).toBeLessThan(identity.body.length);
        expect(decoded(r).equals(identity.body), `${target} ${coding}`).toBe(true);
        etags.add(r.headers.etag);
      }
      expect(etags.size, target).toBe(3);
    }
  });

  test('If-None-Match gives a 304 for each coding\'s own ETag, and a 200 with the body for another coding\'s', async () => {
    for (const target of targets) {
      for (const accept of ['br', 'gzip', 'identity']) {
        const first = await get(base, target, { 'accept-encoding': accept });
        const again = await get(base, target, { 'accept-encoding': accept, 'if-none-match': first.headers.etag! });
        expect(again.status, `${target} ${accept}`).toBe(304);
        expect(again.body.length).toBe(0);
        expect(again.headers.etag).toBe(first.headers.etag);
        expect(again.headers.vary).toBe('Accept-Encoding');
      }
      const br = await get(base, target, { 'accept-encoding': 'br' });
      const gz = await get(base, target, { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag! });
      expect(gz.status, target).toBe(200);
      expect(gz.headers['content-encoding']).toBe('gzip');
    }
  });

  test('HEAD has GET\'s headers for each coding', async () => {
    for (const accept of ['br', 'gzip', '']) {
      const g = await get(base, '/p/alice', { 'accept-encoding': accept });
      const h = await get(base, '/p/alice', { 'accept-encoding': accept }, 'HEAD');
      expect(h.body.length).toBe(0);
      for (const k of ['content-encoding', 'content-length', 'etag', 'vary', 'content-type']) expect(h.headers[k], `${accept} ${k}`).toBe(g.headers[k]);
    }
  });

  test('a sibling is not served at its own address; images and answers made in memory are sent as they are', async () => {
    expect((await get(base, '/p/alice.html.br', { 'accept-encoding': 'br' })).status).toBe(404);
    expect((await get(base, '/sitemap.xml.gz')).status).toBe(404);
    expect((await get(base, '/openapi.json.br')).status).toBe(404);
    for (const target of ['/api/v1/users?username=alice', '/api/v1/users/ALICE', '/api/avatar?u=alice', '/api/v1/users/nobody']) {
      const r = await get(base, target, { 'accept-encoding': 'br, gzip' });
      expect(r.headers['content-encoding'], target).toBeUndefined();
      expect(r.headers.vary, target).toBeUndefined();
    }
  });
});
