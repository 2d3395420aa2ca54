// A file with its codings inside (src/release/coded-file.ts), as the build writes it
// (compress.ts `codedFile`) and the Node server reads it (src/server/disk-files.ts): every part back
// as it went in, nothing taken for a packed file that is not one, and the reader answering a
// coding from inside the file, from a sibling file (a `static` build), or not at all.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { afterEach, describe, expect, test } from 'vitest';
import { CODED_HEAD_BYTES, identityOf, isPacked, packCodings, partOf } from '../../src/release/coded-file.ts';
import { BROTLI, GZIP } from '../../src/http/headers.ts';
import { codedFile, compressedSiblings, emptyStats } from '../../src/build/files/compress.ts';
import { DiskFiles } from '../../src/server/disk-files.ts';
import { answer } from '../../src/api/handler.ts';
import { request } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

const bytes = fc.uint8Array({ maxLength: 3000 });

describe('the packed format', () => {
  test('each part comes back as it went in, whichever codings there are', () => {
    fc.assert(fc.property(bytes, fc.option(bytes, { nil: undefined }), fc.option(bytes, { nil: undefined }), (identity, br, gz) => {
      const codings = new Map<string, Uint8Array>();
      if (br?.length) codings.set('.br', br);
      if (gz?.length) codings.set('.gz', gz);
      const stored = packCodings(identity, codings);
      if (!codings.size) {
        // Nothing to keep beside it: the file as it is.
        expect(stored).toBe(identity);
        return;
      }
      expect(isPacked(stored)).toBe(true);
      expect(stored.byteLength).toBe(CODED_HEAD_BYTES + identity.byteLength + (br?.length ?? 0) + (gz?.length ?? 0));
      expect(Buffer.from(identityOf(stored)).equals(Buffer.from(identity))).toBe(true);
      expect(partOf(stored, BROTLI) && Buffer.from(partOf(stored, BROTLI)!)).toEqual(br?.length ? Buffer.from(br) : undefined);
      expect(partOf(stored, GZIP) && Buffer.from(partOf(stored, GZIP)!)).toEqual(gz?.length ? Buffer.from(gz) : undefined);
    }));
  });

  test('text files, and bytes that only start like a packed file, are taken as they are', () => {
    // What the build writes beside packed files: HTML, JSON, XML never start with a NUL.
    for (const text of ['<!DOCTYPE html><html>', '{"success":true}', '<?xml version="1.0"?>', '']) {
      const b = Buffer.from(text);
      expect(isPacked(b), text).toBe(false);
      expect(identityOf(b)).toBe(b);
      expect(partOf(b, BROTLI), text).toBeUndefined();
    }
    fc.assert(fc.property(bytes, (tail) => {
      // The magic and a head whose lengths do not add up to the file's: not packed.
      const head = Buffer.from([0x00, 0x63, 0x7a, 0x31, ...new Uint8Array(12).fill(0xff)]);
      const b = Buffer.concat([head, tail]);
      expect(isPacked(b)).toBe(false);
      expect(identityOf(b)).toBe(b);
    }));
  });

  test('what the build packs decodes to its file in both codings, and a file too small is left as it is', () => {
    const page = Buffer.from(`<!DOCTYPE html><html lang="en"><body>${'<p>Tea at four.</p>'.repeat(200)}</body></html>`);
    const coded = codedFile('p/alice.html', page, 'packed', emptyStats());
    expect(coded.siblings.size).toBe(0);
    expect(isPacked(coded.body)).toBe(true);
    expect(zlib.brotliDecompressSync(partOf(coded.body, BROTLI)!).equals(page)).toBe(true);
    expect(zlib.gunzipSync(partOf(coded.body, GZIP)!).equals(page)).toBe(true);
    // The same bytes as the siblings a `static` build writes.
    const siblings = codedFile('p/alice.html', page, 'siblings', emptyStats());
    expect(siblings.body).toBe(page);
    expect([...siblings.siblings.keys()]).toEqual(['.br', '.gz']);
    expect(Buffer.from(partOf(coded.body, BROTLI)!).equals(compressedSiblings(page).get('.br')!)).toBe(true);
    const small = Buffer.from('{"ok":true}');
    expect(codedFile('api/v1/users/x', small, 'packed', emptyStats()).body).toBe(small);
  });
});

describe('the Node server reads them', () => {
  const page = Buffer.from(`<!DOCTYPE html><html lang="en"><body>${'<p>Tea at four.</p>'.repeat(200)}</body></html>`);

  function release(write: (client: string) => void, budget?: number): DiskFiles {
    const client = fs.mkdtempSync(path.join(os.tmpdir(), 'coded-'));
    made.push(client);
    fs.mkdirSync(path.join(client, 'p'));
    write(client);
    return new DiskFiles(client, budget);
  }

  test('a page and each coding from the one file; the answers as from siblings beside it', async () => {
    const packed = release((c) => fs.writeFileSync(path.join(c, 'p', 'alice.html'), codedFile('p/alice.html', page, 'packed', emptyStats()).body));
    const beside = release((c) => {
      const coded = codedFile('p/alice.html', page, 'siblings', emptyStats());
      fs.writeFileSync(path.join(c, 'p', 'alice.html'), coded.body);
      for (const [suffix, body] of coded.siblings) fs.writeFileSync(path.join(c, 'p', `alice.html${suffix}`), body);
    });
    expect(fs.readdirSync(path.join(packed.root, 'p'))).toEqual(['alice.html']);
    expect(Buffer.from((await packed.read('p/alice.html'))!).equals(page)).toBe(true);
    for (const suffix of ['.br', '.gz']) {
      const a = Buffer.from((await packed.read(`p/alice.html${suffix}`))!);
      expect(a.equals(Buffer.from((await beside.read(`p/alice.html${suffix}`))!)), suffix).toBe(true);
      // Kept: the same bytes object the second time (the handler's memo of ETags rests on it).
      expect(await packed.read(`p/alice.html${suffix}`)).toBe(packed.kept(`p/alice.html${suffix}`));
    }
    for (const coding of ['br', 'gzip', 'identity']) {
      const [a, b] = [await answer(request('/p/alice', { headers: { 'accept-encoding': coding } }), packed), await answer(request('/p/alice', { headers: { 'accept-encoding': coding } }), beside)];
      expect(a.status, coding).toBe(200);
      expect({ ...a.headers, date: '' }, coding).toEqual({ ...b.headers, date: '' });
      expect(Buffer.from(a.body as Uint8Array).equals(Buffer.from(b.body as Uint8Array)), coding).toBe(true);
    }
  });

  test('one read of a packed file keeps all its codings: the next client\'s coding is read from memory', async () => {
    const files = release((c) => fs.writeFileSync(path.join(c, 'p', 'alice.html'), codedFile('p/alice.html', page, 'packed', emptyStats()).body));
    const br = Buffer.from((await files.read('p/alice.html.br'))!);
    expect(zlib.brotliDecompressSync(br).equals(page)).toBe(true);
    // Gone from disk: only what was kept can answer now.
    fs.rmSync(path.join(files.root, 'p', 'alice.html'));
    expect(Buffer.from(files.kept('p/alice.html')!).equals(page)).toBe(true);
    expect(zlib.gunzipSync(files.kept('p/alice.html.gz')!).equals(page)).toBe(true);
    expect(files.kept('p/alice.html.br')).toBe(await files.read('p/alice.html.br'));
    const r = await answer(request('/p/alice', { headers: { 'accept-encoding': 'gzip' } }), files);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(r.body as Uint8Array).equals(page)).toBe(true);
    // Each part counted once.
    expect(files.cachedBytes).toBe(page.length + br.length + files.kept('p/alice.html.gz')!.length);
  });

  test('the codings not asked for are kept only while the cache is less than half full', async () => {
    // Images (no codings) of 100 bytes fill 16 KB slabs with no room lost, so nothing is dropped before the cache is full.
    const budget = 16 * 16 * 1024;
    const files = release((c) => {
      fs.mkdirSync(path.join(c, 'img'));
      for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(c, 'img', `${i}.png`), Buffer.alloc(100, i % 256));
      for (const name of ['alice', 'bob']) fs.writeFileSync(path.join(c, 'p', `${name}.html`), codedFile(`p/${name}.html`, page, 'packed', emptyStats()).body);
    }, budget);
    await files.read('p/alice.html.br');
    expect(files.kept('p/alice.html')).toBeDefined();
    for (let i = 0; files.cachedBytes <= budget / 2; i++) await files.read(`img/${i}.png`);
    const before = files.cachedBytes;
    expect(before).toBeLessThan(budget);
    const br = (await files.read('p/bob.html.br'))!;
    expect(zlib.brotliDecompressSync(br).equals(page)).toBe(true);
    expect(files.kept('p/bob.html.br')).toBe(br);
    expect(files.kept('p/bob.html')).toBeUndefined();
    expect(files.kept('p/bob.html.gz')).toBeUndefined();
    expect(files.cachedBytes).toBe(before + br.length);
  });

  // One entry a file, its parts in one slab (disk-files.ts `Cached`): a part read later joins them.
  test('past half the budget, a coding asked for later is kept beside the part kept before', async () => {
    const budget = 16 * 16 * 1024;
    const files = release((c) => {
      fs.mkdirSync(path.join(c, 'img'));
      for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(c, 'img', `${i}.png`), Buffer.alloc(100, i % 256));
      fs.writeFileSync(path.join(c, 'p', 'bob.html'), codedFile('p/bob.html', page, 'packed', emptyStats()).body);
    }, budget);
    for (let i = 0; files.cachedBytes <= budget / 2; i++) await files.read(`img/${i}.png`);
    const identity = Buffer.from((await files.read('p/bob.html'))!);
    expect(identity.equals(page)).toBe(true);
    expect(files.kept('p/bob.html.br')).toBeUndefined();
    const before = files.cachedBytes;
    const br = (await files.read('p/bob.html.br'))!;
    // Both kept now, each counted once; the file itself is the same bytes, moved beside its coding.
    expect(files.kept('p/bob.html.br')).toBe(br);
    expect(Buffer.from(files.kept('p/bob.html')!).equals(page)).toBe(true);
    expect(files.cachedBytes).toBe(before + br.length);
    fs.rmSync(path.join(files.root, 'p', 'bob.html'));
    expect(zlib.brotliDecompressSync((await files.read('p/bob.html.br'))!).equals(page)).toBe(true);
  });

  // Second chance: a file used since its slab came round is moved to the newest slab, parts and all.
  test('a file in use keeps its parts, intact, through the eviction of the slabs it was in', async () => {
    // Slabs of 4 KB: a few files each, and 400 files are many times the budget.
    const budget = 16 * 4 * 1024;
    const files = release((c) => {
      for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(c, 'p', `u${i}.html`), codedFile(`p/u${i}.html`, Buffer.from(`${page}<!-- ${i} -->`), 'packed', emptyStats()).body);
    }, budget);
    const first = (await files.read('p/u0.html.br'))!;
    for (let i = 1; i < 400; i++) {
      await files.read(`p/u${i}.html.gz`);
      // u0 in use all along; u1 never again.
      expect(files.kept('p/u0.html.br'), `after u${i}`).toBeDefined();
      expect(files.cachedBytes).toBeLessThanOrEqual(budget);
    }
    expect(files.kept('p/u1.html.gz')).toBeUndefined();
    const expected = Buffer.from(`${page}<!-- 0 -->`);
    expect(zlib.brotliDecompressSync(files.kept('p/u0.html.br')!).equals(expected)).toBe(true);
    expect(zlib.brotliDecompressSync(first).equals(expected)).toBe(true);
    const identity = files.kept('p/u0.html');
    if (identity) expect(Buffer.from(identity).equals(expected)).toBe(true);
  });

  test('codings too large to keep beside their file leave the part asked for kept alone', async () => {
    // A slab of 1 KB (a budget of 16 KB): the page's codings fit, the page and its codings together do not.
    const big = Buffer.from(`<!DOCTYPE html>${Array.from({ length: 300 }, (_, i) => `<p>${i * 7919 % 1000}</p>`).join('')}`);
    const coded = codedFile('p/big.html', big, 'packed', emptyStats()).body;
    const files = release((c) => fs.writeFileSync(path.join(c, 'p', 'big.html'), coded), 16 * 1024);
    const br = (await files.read('p/big.html.br'))!;
    expect(big.length).toBeGreaterThan(1024);
    expect(br.length).toBeLessThan(1024);
    expect(files.kept('p/big.html.br')).toBe(br);
    expect(files.kept('p/big.html')).toBeUndefined();
    expect(files.cachedBytes).toBe(br.length);
  });

  test('a file too small for codings has none, and its address is not a sibling file', async () => {
    const small = '<!DOCTYPE html><p>hi</p>';
    const files = release((c) => {
      fs.writeFileSync(path.join(c, 'p', 'bob.html'), codedFile('p/bob.html', Buffer.from(small), 'packed', emptyStats()).body);
      // A stray file named like a sibling of a packed file is never read in its place.
      fs.writeFileSync(path.join(c, 'p', 'alice.html'), codedFile('p/alice.html', page, 'packed', emptyStats()).body);
      fs.writeFileSync(path.join(c, 'p', 'alice.html.br'), 'not brotli');
    });
    expect(Buffer.from((await files.read('p/bob.html'))!).toString()).toBe(small);
    // Not packed: a sibling file would be looked for, and there is none.
    expect(await files.read('p/bob.html.br')).toBeUndefined();
    expect(zlib.brotliDecompressSync((await files.read('p/alice.html.br'))!).equals(page)).toBe(true);
    const r = await answer(request('/p/bob', { headers: { 'accept-encoding': 'br' } }), files);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(Buffer.from(r.body as Uint8Array).toString()).toBe(small);
  });
});
