// Compression: which coding a request gets (Accept-Encoding with q-values, `*`, q=0), the headers
// of each answer (Content-Encoding, Vary, an ETag per encoding, 304 per encoding, HEAD), which
// files have compressed siblings and that no sibling is served at an address of its own; and the
// answers of a runtime that compresses itself (Workers).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { answer } from '../../src/api/handler.ts';
import type { ReleaseFiles } from '../../src/api/release-files.ts';
import { BROTLI_QUALITY, brotliWindowBits, compressedSiblings, compressRelease, MIN_COMPRESSED_BYTES } from '../../src/build/files/compress.ts';
import { packCodings } from '../../src/release/coded-file.ts';
import {
  BROTLI, GZIP, acceptedEncodings, compressedBaseOf, encodedEtag, filesAt, isCompressible, isServedFile, staticHostRuleHeaders,
} from '../../src/http/headers.ts';
import { runtimeEncoded } from '../../src/http/response.ts';
import { request, unpackedEntries } from '../support/helpers.ts';
import { sharedBuild } from '../support/built-server.ts';

const names = (header: string | undefined) => acceptedEncodings(header).map((e) => e.name);

describe('Accept-Encoding', () => {
  test('brotli first when both are accepted alike, in any order or case', () => {
    expect(names('gzip, deflate, br')).toEqual(['br', 'gzip']);
    expect(names('br, gzip')).toEqual(['br', 'gzip']);
    expect(names('GZIP, BR')).toEqual(['br', 'gzip']);
    expect(names('gzip, br, zstd')).toEqual(['br', 'gzip']);
  });

  test('q-values order them; q=0 refuses one', () => {
    expect(names('gzip;q=1, br;q=0.5')).toEqual(['gzip', 'br']);
    expect(names('gzip; q=0.2, br ; q=0.9')).toEqual(['br', 'gzip']);
    expect(names('br;q=0, gzip')).toEqual(['gzip']);
    expect(names('br;q=0.000, gzip;q=0')).toEqual([]);
    expect(names('x-gzip')).toEqual(['gzip']);
  });

  test('`*` covers the codings not named, and not those refused', () => {
    expect(names('*')).toEqual(['br', 'gzip']);
    expect(names('gzip;q=0.5, *;q=0.1')).toEqual(['gzip', 'br']);
    expect(names('*, br;q=0')).toEqual(['gzip']);
    expect(names('*;q=0')).toEqual([]);
  });

  test('nothing asked, identity only, or nonsense: no coding', () => {
    expect(names(undefined)).toEqual([]);
    expect(names('')).toEqual([]);
    expect(names('identity')).toEqual([]);
    expect(names('deflate, zstd')).toEqual([]);
    // A malformed weight drops its member only.
    expect(names('br;q=2, gzip;q=abc, gzip;q=0.3')).toEqual(['gzip']);
    expect(names(',,;q=1, br')).toEqual(['br']);
  });

  test('`identity;q=0` still gets identity when no coding fits (RFC 9110 §12.5.3 allows it; a 415 helps no GET)', () => {
    expect(names('identity;q=0')).toEqual([]);
    expect(names('identity;q=0, gzip')).toEqual(['gzip']);
  });
});

describe('which files have siblings', () => {
  test('text and the API files do; images, fonts and files no one is served do not', () => {
    for (const f of ['index.html', 'p/alice.html', 'docs.html', '_astro/Base.x.css', 'openapi.json', 'sitemap.xml', 'sitemap-2.xml', 'favicon.svg', 'api/v1/users/alice', 'service-api/v1/creators', 'schemas/profile.schema.json']) {
      expect(isCompressible(f), f).toBe(true);
    }
    for (const f of ['media/avatars/a.png', 'media/og/x.png', 'font.woff2', 'media/avatars/a.webp', '_headers', '404.html', '_lookup/avatars/00.json', 'p/alice.html.br', 'api/v1/users/alice.gz', 'README']) {
      expect(isCompressible(f), f).toBe(false);
    }
  });

  test('a sibling belongs to its file and is never served at its own address', () => {
    expect(compressedBaseOf('p/alice.html.br')).toBe('p/alice.html');
    expect(compressedBaseOf('api/v1/users/alice.gz')).toBe('api/v1/users/alice');
    expect(compressedBaseOf('p/alice.html')).toBeUndefined();
    expect(isServedFile('p/alice.html.br')).toBe(false);
    expect(isServedFile('sitemap.xml.gz')).toBe(false);
    expect(filesAt('/p/alice.html.br')).not.toContain('p/alice.html.br');
    expect(filesAt('/api/v1/users/alice.br')).toEqual([]);
    expect(filesAt('/sitemap.xml.gz')).not.toContain('sitemap.xml.gz');
    // A static host's rules never name Vary or Content-Encoding: the host compresses by its own rules.
    expect(Object.keys(staticHostRuleHeaders('p/alice.html'))).not.toContain('vary');
  });

  test('a sibling is written only where it saves 10% and the file is not tiny; it decodes to the file', () => {
    const text = Buffer.from(JSON.stringify({ success: true, data: Array.from({ length: 40 }, (_, i) => ({ name: `user${i}`, bio: 'Illustrator and tea person.' })) }));
    const siblings = compressedSiblings(text);
    expect([...siblings.keys()]).toEqual(['.br', '.gz']);
    expect(zlib.brotliDecompressSync(siblings.get('.br')!).equals(text)).toBe(true);
    expect(zlib.gunzipSync(siblings.get('.gz')!).equals(text)).toBe(true);
    expect(compressedSiblings(text.subarray(0, MIN_COMPRESSED_BYTES - 1)).size).toBe(0);
    // Random bytes do not compress: no sibling.
    expect(compressedSiblings(randomBytes(4096)).size).toBe(0);
  });

  test('brotli\'s window fits the file: it decodes at every size around a window\'s edge, and compresses as well as the widest', () => {
    expect([100, 1_008, 1_009, 5_000, 1 << 20, 1 << 30].map(brotliWindowBits)).toEqual([10, 10, 11, 13, 21, 24]);
    // Text that repeats from far back: a window too small for the file would lose the repeats (and
    // be about twice the size). Hex digits from a seeded generator: the same text every run.
    let seed = 12345;
    const hex = (n: number) => Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) % 16).map((d) => d.toString(16)).join('');
    const far = (n: number) => { const head = hex(Math.floor(n / 2)); return Buffer.from((head + head).slice(0, n)); };
    for (const edge of [1 << 10, 1 << 12, 1 << 16]) {
      for (const n of [edge - 17, edge - 16, edge - 15]) {
        const text = far(n);
        const br = compressedSiblings(text).get('.br')!;
        expect(zlib.brotliDecompressSync(br).equals(text), `${n} bytes`).toBe(true);
        const widest = zlib.brotliCompressSync(text, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: n } });
        expect(br.byteLength, `${n} bytes`).toBeLessThanOrEqual(widest.byteLength * 1.03);
      }
    }
  });

  test('the same bytes give the same siblings (builds compare byte for byte)', () => {
    const text = Buffer.from('<!doctype html>'.repeat(100));
    const [a, b] = [compressedSiblings(text), compressedSiblings(text)];
    for (const suffix of ['.br', '.gz']) expect(a.get(suffix)!.equals(b.get(suffix)!)).toBe(true);
  });

  // A batch's worth of files is compressed in the build's own thread, more in worker threads: the same function, the same files.
  test('the compress step packs the same files in its threads as in the build\'s own (a batch\'s worth or fewer), and leaves the linked ones', async () => {
    const texts = (n: number) => new Map(Array.from({ length: n }, (_, i) => [`${i % 2 ? 'a' : 'b'}/${i}.json`, Buffer.from(JSON.stringify({ i, text: `entry ${i} `.repeat(20 + (i % 50)) }))]));
    for (const n of [10, 300]) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compress-step-'));
      try {
        for (const [file, bytes] of texts(n)) {
          fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
          fs.writeFileSync(path.join(dir, file), bytes);
        }
        // Files linked from a release that compressed them (an edit build's) are not read: left as they are.
        const linked = new Set([...texts(n).keys()].filter((_, i) => i % 3 === 0));
        const stats = await compressRelease(dir, 'packed', [], linked);
        expect(stats.files, `${n} files`).toBe(n - linked.size);
        for (const [file, bytes] of texts(n)) {
          const expected = linked.has(file) ? bytes : packCodings(bytes, compressedSiblings(bytes));
          expect(fs.readFileSync(path.join(dir, file)).equals(expected), `${n} files: ${file}`).toBe(true);
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  // Whoever wrote them (the render threads, the user files' thread, the compress step, which skips
  // the folders those compress themselves): every file of a build has exactly the siblings it should.
  test('every file of a build has the siblings its bytes call for, and each is those bytes compressed', () => {
    const client = path.join(sharedBuild().dist, 'client');
    const stored = fs.readdirSync(client, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
      .map((e) => path.relative(client, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
    // A `node` build keeps the codings inside each file (src/release/coded-file.ts): none is a file of its own.
    expect(stored.filter((f) => compressedBaseOf(f) !== undefined)).toEqual([]);
    const bytesOf = new Map(stored.flatMap((f) => unpackedEntries(f, fs.readFileSync(path.join(client, f)))));
    const files = [...bytesOf.keys()];
    const present = new Set(files);
    let checked = 0;
    for (const file of files.filter((f) => compressedBaseOf(f) === undefined)) {
      const expected = isCompressible(file) ? compressedSiblings(bytesOf.get(file)!) : new Map<string, Buffer>();
      for (const suffix of ['.br', '.gz']) {
        expect(present.has(file + suffix), file + suffix).toBe(expected.has(suffix));
        if (expected.has(suffix)) expect(bytesOf.get(file + suffix)!.equals(expected.get(suffix)!), file + suffix).toBe(true);
      }
      if (expected.size) checked++;
    }
    // The render threads', the user files' thread's and the compress step's (the home page, the API description).
    for (const dir of ['p/', 'api/v1/users/']) expect(files.some((f) => f.startsWith(dir) && f.endsWith('.br')), dir).toBe(true);
    for (const file of ['index.html.br', 'openapi.json.br']) expect(present.has(file), file).toBe(true);
    expect(checked).toBeGreaterThan(15);
  });
});

/** A release in memory: a page and a user file with both siblings, one with gzip only, one with none. */
function releaseFiles(): { files: ReleaseFiles; page: Buffer; reads: string[] } {
  const page = Buffer.from(`<!doctype html><title>Alice</title>${'<p>Alice draws characters.</p>'.repeat(50)}`);
  const user = Buffer.from(JSON.stringify({ success: true, data: { username: 'alice', bio: 'x'.repeat(600) }, meta: { version: '1' } }));
  const map = new Map<string, Uint8Array>([
    ['p/alice.html', page], ['p/alice.html.br', zlib.brotliCompressSync(page)], ['p/alice.html.gz', zlib.gzipSync(page)],
    ['p/bob.html', page], ['p/bob.html.gz', zlib.gzipSync(page)],
    ['p/carol.html', page],
    ['api/v1/users/alice', user], ['api/v1/users/alice.br', zlib.brotliCompressSync(user)],
    ['media/avatars/alice.png', Buffer.from('\x89PNG')],
  ]);
  const reads: string[] = [];
  return { files: { read: (f) => { reads.push(f); return map.get(f); } }, page, reads };
}

const decode = (encoding: string | undefined, body: Uint8Array) =>
  (encoding === 'br' ? zlib.brotliDecompressSync(body) : encoding === 'gzip' ? zlib.gunzipSync(body) : Buffer.from(body));

describe('the handler answers from the siblings', () => {
  test('each coding: its sibling, Content-Encoding, its ETag and length, Vary; identity too', async () => {
    const { files, page } = releaseFiles();
    const plain = await answer(request('/p/alice'), files);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    const etag = plain.headers.etag!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const seen = new Set([etag]);
    for (const [accept, coding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip'], ['br;q=0.1, gzip', 'gzip']] as const) {
      const r = await answer(request('/p/alice', { headers: { 'accept-encoding': accept } }), files);
      expect(r.status, accept).toBe(200);
      expect(r.headers['content-encoding'], accept).toBe(coding);
      expect(r.headers.vary).toBe('Accept-Encoding');
      expect(r.headers.etag).toBe(encodedEtag(etag, coding === 'br' ? BROTLI : GZIP));
      expect(r.headers['content-length']).toBe(String((r.body as Uint8Array).byteLength));
      expect(decode(coding, r.body as Uint8Array).equals(page)).toBe(true);
      seen.add(r.headers.etag!);
    }
    expect(seen.size).toBe(3);
  });

  test('a coding without a sibling falls to the next one, then identity; each miss is looked for once per body', async () => {
    const { files, page, reads } = releaseFiles();
    const bob = await answer(request('/p/bob', { headers: { 'accept-encoding': 'br, gzip' } }), files);
    expect(bob.headers['content-encoding']).toBe('gzip');
    expect(decode('gzip', bob.body as Uint8Array).equals(page)).toBe(true);
    const carol = await answer(request('/p/carol', { headers: { 'accept-encoding': 'br, gzip' } }), files);
    expect(carol.headers['content-encoding']).toBeUndefined();
    expect(carol.headers.vary).toBe('Accept-Encoding');
    expect(Buffer.from(carol.body as Uint8Array).equals(page)).toBe(true);
    reads.length = 0;
    await answer(request('/p/carol', { headers: { 'accept-encoding': 'br, gzip' } }), files);
    expect(reads).toEqual(['p/carol.html']);
  });

  test('If-None-Match: a 304 for the ETag of the coding sent, a 200 for another coding\'s', async () => {
    const { files } = releaseFiles();
    const br = await answer(request('/p/alice', { headers: { 'accept-encoding': 'br' } }), files);
    const notModified = await answer(request('/p/alice', { headers: { 'accept-encoding': 'br', 'if-none-match': br.headers.etag! } }), files);
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBeNull();
    expect(notModified.headers.etag).toBe(br.headers.etag);
    expect(notModified.headers.vary).toBe('Accept-Encoding');
    const gz = await answer(request('/p/alice', { headers: { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag! } }), files);
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    const gz304 = await answer(request('/p/alice', { headers: { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag! } }), files);
    expect(gz304.status).toBe(304);
    const identity = await answer(request('/p/alice'), files);
    expect((await answer(request('/p/alice', { headers: { 'if-none-match': identity.headers.etag! } }), files)).status).toBe(304);
    expect((await answer(request('/p/alice', { headers: { 'if-none-match': br.headers.etag! } }), files)).status).toBe(200);
  });

  test('HEAD has the headers of GET, length of the coding sent included', async () => {
    const { files } = releaseFiles();
    for (const accept of ['br', 'gzip', '']) {
      const get = await answer(request('/p/alice', { headers: { 'accept-encoding': accept } }), files);
      const head = await answer(request('/p/alice', { method: 'HEAD', headers: { 'accept-encoding': accept } }), files);
      expect(head.body).toBeNull();
      expect(head.headers, accept).toEqual(get.headers);
    }
  });

  test('the API file by its address is negotiated; answers made in memory and images are not', async () => {
    const { files } = releaseFiles();
    const exact = await answer(request('/api/v1/users/alice', { headers: { 'accept-encoding': 'gzip, br' } }), files);
    expect(exact.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decode('br', exact.body as Uint8Array).toString()).data.username).toBe('alice');
    const other = await answer(request('/api/v1/users/ALICE', { headers: { 'accept-encoding': 'gzip, br' } }), files);
    expect(other.headers['content-encoding']).toBeUndefined();
    expect(other.headers.vary).toBeUndefined();
    const missing = await answer(request('/api/v1/users/nobody', { headers: { 'accept-encoding': 'gzip, br' } }), files);
    expect(missing.status).toBe(404);
    expect(missing.headers['content-encoding']).toBeUndefined();
    expect(missing.headers.vary).toBeUndefined();
  });

  test('a sibling\'s own address is a 404 (or a bad name: 400), never its bytes', async () => {
    const { files } = releaseFiles();
    for (const [target, status] of [['/p/alice.html.br', 404], ['/p/alice.html.gz', 404], ['/api/v1/users/alice.br', 400]] as const) {
      const r = await answer(request(target, { headers: { 'accept-encoding': 'br, gzip' } }), files);
      expect(r.status, target).toBe(status);
      expect(r.headers['content-encoding']).toBeUndefined();
    }
  });
});

describe('a runtime that compresses itself (Workers)', () => {
  const json = { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', etag: '"abc"', 'content-length': '10' }, body: '{"a":1234}' };

  test('names the coding wanted most, one weak ETag for every coding, leaves the length to the runtime, and always says Vary', () => {
    const br = runtimeEncoded(request('/x', { headers: { 'accept-encoding': 'gzip, br' } }), json);
    expect(br.headers).toMatchObject({ 'content-encoding': 'br', etag: 'W/"abc"', vary: 'Accept-Encoding' });
    expect(br.headers['content-length']).toBeUndefined();
    expect(br.body).toBe(json.body);
    const weak = runtimeEncoded(request('/x', { headers: { 'accept-encoding': 'gzip' } }), { ...json, headers: { ...json.headers, etag: 'W/"abc"' } });
    expect(weak.headers.etag).toBe('W/"abc"');
    const identity = runtimeEncoded(request('/x'), json);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers).toMatchObject({ etag: 'W/"abc"', vary: 'Accept-Encoding', 'content-length': '10' });
    // Only codings the client names: the edge sends identity bytes for `*` or `x-gzip` alone.
    for (const [accept, coding] of [['*', undefined], ['x-gzip', undefined], ['gzip;q=0.5, *', 'gzip'], ['*;q=0.9, br;q=0.1', 'br'], ['br;q=0, *', undefined]] as const) {
      const r = runtimeEncoded(request('/x', { headers: { 'accept-encoding': accept } }), json);
      expect(r.headers['content-encoding'], accept).toBe(coding);
      expect(r.headers.etag, accept).toBe('W/"abc"');
    }
  });

  test('images are left as they are; bodiless answers, which the edge may encode, say Vary', () => {
    const png = { status: 200, headers: { 'content-type': 'image/png' }, body: new Uint8Array(4) };
    expect(runtimeEncoded(request('/x', { headers: { 'accept-encoding': 'br' } }), png)).toBe(png);
    const redirect = { status: 308, headers: { location: '/p/a' }, body: null };
    expect(runtimeEncoded(request('/x', { headers: { 'accept-encoding': 'br' } }), redirect)).toEqual({ ...redirect, headers: { location: '/p/a', vary: 'Accept-Encoding' } });
  });

  test('through the handler: one weak ETag in every coding, and its 304 keeps the type (the edge encodes what has none)', async () => {
    const { files } = releaseFiles();
    const edge: ReleaseFiles = { read: files.read, runtimeEncodes: true };
    const r = await answer(request('/api/v1/users/ALICE', { headers: { 'accept-encoding': 'br, gzip' } }), edge);
    expect(r.headers).toMatchObject({ 'content-encoding': 'br', vary: 'Accept-Encoding' });
    expect(r.headers.etag).toMatch(/^W\/"[^"]+"$/);
    expect(r.headers.etag).not.toMatch(/-(br|gz)"$/);
    for (const coding of ['br', 'gzip', 'identity']) {
      const again = await answer(request('/api/v1/users/ALICE', { headers: { 'accept-encoding': coding, 'if-none-match': r.headers.etag! } }), edge);
      expect(again.status, coding).toBe(304);
      expect(again.headers['content-type'], coding).toBe('application/json; charset=utf-8');
    }
    // The Node server's 304 has no type, as RFC 9110 §15.4.5 suggests.
    const node = await answer(request('/api/v1/users/ALICE', { headers: { 'if-none-match': (await answer(request('/api/v1/users/ALICE'), files)).headers.etag! } }), files);
    expect(node.status).toBe(304);
    expect(node.headers['content-type']).toBeUndefined();
    const head = await answer(request('/api/v1/users/ALICE', { method: 'HEAD', headers: { 'accept-encoding': 'br' } }), edge);
    expect(head.headers['content-length']).toBeUndefined();
    expect(head.headers['content-encoding']).toBe('br');
  });
});
