import fs from 'node:fs';
import zlib from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadContent } from '../../src/content/load.ts';
import { splitTarget, type ApiRequest } from '../../src/http/request.ts';
import { IndexFiles } from '../../src/api/index-files.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'content');

/** A copy of the fixture content at `<parent>/content` in a new temp folder; the caller removes `parent`. */
export function copyFixture(prefix: string): { parent: string; content: string } {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const content = path.join(parent, 'content');
  fs.cpSync(FIXTURE, content, { recursive: true });
  return { parent, content };
}
export const SITE_URL = 'https://profiles.example.net';
/** A fixed build time, so ages are exact: 2026-01-15T12:00:00Z. */
export const BUILT_AT = new Date('2026-01-15T12:00:00Z');
/** Values under `private:` in the fixture: none may appear in any answer or file. */
export const PRIVATE_MARKERS = ['alice-private@example.com', '3f1c2b8e-9d4a-4e6f-a1b2-c3d4e5f60718', 'alice-private-extra-91ab', 'frank-private-note-7c1e'];

export function fixtureSite(dir = FIXTURE) {
  const { content, problems } = loadContent(dir);
  if (problems.length) throw new Error(`fixture has problems: ${JSON.stringify(problems)}`);
  const index = buildSiteIndex(content, { siteUrl: SITE_URL, builtAt: BUILT_AT });
  return { content, index, files: new IndexFiles(index, { avatars: path.join(dir, 'avatars'), decorations: path.join(dir, 'decorations') }) };
}

/** An ApiRequest as our server makes it from a request line and headers. */
export function request(target: string, init: { method?: string; headers?: Record<string, string>; startedAt?: number } = {}): ApiRequest {
  const headers = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return splitTarget(init.method ?? 'GET', target, (name) => headers[name], init.startedAt ?? performance.now());
}

export const bodyText = (body: string | Uint8Array | null) => (body === null ? '' : typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
export const bodyJson = (r: { body: string | Uint8Array | null }) => JSON.parse(bodyText(r.body));

/** A build file's bytes, a compressed sibling's (src/build/files/compress.ts) decoded: what a client gets from it. */
export function readDecoded(file: string): Buffer {
  const bytes = fs.readFileSync(file);
  if (file.endsWith('.br')) return zlib.brotliDecompressSync(bytes);
  if (file.endsWith('.gz')) return zlib.gunzipSync(bytes);
  return bytes;
}
