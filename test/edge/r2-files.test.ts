// The R2 reader prototype (src/edge/r2-files.ts, docs/scale.md "Past one host's file limit"): with
// profile pages and user answers only in an R2 bucket (Miniflare's, no account) and named by the
// object tables, the handler gives the answers it gives when every file is a static asset.
import fs from 'node:fs';
import path from 'node:path';
import { Miniflare, convertV4MiniflareOptions } from 'miniflare';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { handle } from '../../src/api/handler.ts';
import { objectKey, objectSlot, tableCount, tableFile } from '../../src/api/object-tables.ts';
import { assetFiles, type AssetsBinding } from '../../src/edge/asset-files.ts';
import { r2Files, type ObjectBucket } from '../../src/edge/r2-files.ts';
import { objectTables, type ObjectTables } from '../../src/build/hosts/object-tables.ts';
import { sharedBuild } from '../support/built-server.ts';
import { readServedFile } from '../support/helpers.ts';

/**
 * The asset server as the `ASSETS` binding answers the handler (wrangler.jsonc: `auto-trailing-slash`):
 * `/p/alice` is `p/alice.html`, `/` is `index.html`; `extra` files added, `hidden` ones left out
 * (as `.assetsignore` would).
 */
function assetsOf(clientDir: string, extra = new Map<string, string>(), hidden: (file: string) => boolean = () => false): AssetsBinding {
  const fileAt = (file: string): Uint8Array<ArrayBuffer> | undefined => {
    if (hidden(file)) return undefined;
    if (extra.has(file)) return new TextEncoder().encode(extra.get(file));
    const full = path.join(clientDir, file);
    return fs.statSync(full, { throwIfNoEntry: false })?.isFile() ? new Uint8Array(readServedFile(full)) : undefined;
  };
  return {
    async fetch(request) {
      const address = decodeURIComponent(new URL(request.url).pathname).slice(1);
      const candidates = address === '' || address.endsWith('/') ? [`${address}index.html`] : [address, `${address}.html`];
      for (const file of candidates) {
        const bytes = fileAt(file);
        if (bytes) return new Response(bytes, { status: 200 });
      }
      return new Response(null, { status: 404 });
    },
  };
}

let mf: Miniflare;
let bucket: ObjectBucket & { delete(key: string): Promise<void> };
let client = '';
let built: ObjectTables;
let names: string[] = [];

beforeAll(async () => {
  client = path.join(sharedBuild().dist, 'client');
  built = objectTables(client);
  names = fs.readdirSync(path.join(client, 'api/v1/users')).filter((f) => objectSlot(`api/v1/users/${f}`));
  // Miniflare 5 takes its documented (v4) options through this conversion.
  mf = new Miniflare(convertV4MiniflareOptions({
    modules: true, compatibilityDate: '2026-10-12', r2Buckets: ['BUCKET'],
    script: 'export default { fetch() { return new Response(null, { status: 204 }); } }',
  }));
  bucket = await mf.getR2Bucket('BUCKET') as unknown as typeof bucket;
  for (const [digest, file] of built.objects) await (bucket as unknown as { put(k: string, v: Uint8Array): Promise<unknown> }).put(objectKey(digest), readServedFile(file));
}, 120_000);
afterAll(async () => { await mf?.dispose(); });

const hiddenObjects = (file: string) => objectSlot(file) !== undefined;
const r2 = () => r2Files(assetsOf(client, built.tables, hiddenObjects), bucket);

/** Status, the headers that describe the body, and the body; the clock's fields of a JSON answer left out. */
async function seen(response: Response) {
  const body = new Uint8Array(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  let text: unknown = Buffer.from(body).toString('base64');
  // Answers made per request (the query form, errors) carry the clock; the ETag still names the bytes of the others.
  if (type.startsWith('application/json')) {
    const json = JSON.parse(new TextDecoder().decode(body)) as { meta?: Record<string, unknown> };
    delete json.meta?.timestamp;
    delete json.meta?.executionTimeMs;
    text = json;
  }
  return { status: response.status, type, etag: response.headers.get('etag'), location: response.headers.get('location'), text };
}

describe('profiles from R2', () => {
  test('about 250 names a table: 16 tables for a few, 4,096 for 1,000,000', () => {
    expect([tableCount(6), tableCount(4_000), tableCount(8_001), tableCount(1_000_000)]).toEqual([16, 16, 64, 4_096]);
  });

  test('the tables name every page and answer by the digest of its bytes', () => {
    expect(names.length).toBeGreaterThan(5);
    const count = tableCount(names.length);
    expect(JSON.parse(built.tables.get('_lookup/objects/head.json')!)).toEqual({ buckets: count });
    for (const name of names) {
      const row = JSON.parse(built.tables.get(tableFile(name, count))!)[name] as string[];
      expect(row).toHaveLength(2);
      expect(row.every((d) => typeof d === 'string' && built.objects.has(d))).toBe(true);
    }
  });

  test('the static assets hold no page or answer: the reader must take them from the bucket', async () => {
    const assets = assetsOf(client, built.tables, hiddenObjects);
    expect((await assets.fetch(new Request(`https://assets.invalid/p/${names[0]}`))).status).toBe(404);
    expect((await assets.fetch(new Request(`https://assets.invalid/api/v1/users/${names[0]}`))).status).toBe(404);
  });

  test('every page, answer and query lookup, and the 404s, as from the static assets', async () => {
    const fromAssets = assetFiles(assetsOf(client));
    const fromR2 = r2();
    const paths = [
      ...names.flatMap((n) => [`/p/${n}`, `/api/v1/users/${n}`, `/api/v1/users?username=${n}`, `/p/${n.toUpperCase()}`]),
      '/p/nobody-at-all', '/api/v1/users/nobody-at-all', '/api/v1/users?username=nobody-at-all', '/', '/docs', '/p/bad..name',
    ];
    for (const p of paths) {
      const request = () => new Request(`https://profiles.example.net${p}`, { headers: { 'accept-encoding': 'identity' } });
      expect({ p, ...await seen(await handle(request(), fromR2)) }).toEqual({ p, ...await seen(await handle(request(), fromAssets)) });
    }
  });

  test('an object the tables name but the bucket lacks is an error, not a 404', async () => {
    const name = names[0]!;
    const digest = (JSON.parse(built.tables.get(tableFile(name, tableCount(names.length)))!)[name] as string[])[0]!;
    const bytes = readServedFile(built.objects.get(digest)!);
    await bucket.delete(objectKey(digest));
    try {
      await expect(r2().read(`p/${name}.html`)).rejects.toThrow(`no object ${objectKey(digest)}`);
    } finally {
      await (bucket as unknown as { put(k: string, v: Uint8Array): Promise<unknown> }).put(objectKey(digest), bytes);
    }
    expect(await r2().read(`p/${name}.html`)).toEqual(new Uint8Array(bytes));
  });
});
