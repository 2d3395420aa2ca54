import fs from 'node:fs';
import zlib from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadContent } from '../../src/content/load.ts';
import { splitTarget, type ApiRequest } from '../../src/http/request.ts';
import { IndexFiles } from '../../src/api/index-files.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { identityOf, isPacked, partOf } from '../../src/release/coded-file.ts';
import { ENCODINGS } from '../../src/http/headers.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'content');

/** A copy of the fixture content at `<parent>/content` in a new temp folder; the caller removes `parent`. */
export function copyFixture(prefix: string): { parent: string; content: string } {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const content = path.join(parent, 'content');
  fs.cpSync(FIXTURE, content, { recursive: true });
  return { parent, content };
}
/** Every file under `dir`, relative path → bytes. */
export function fileTree(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) files.set(path.relative(dir, path.join(e.parentPath, e.name)), fs.readFileSync(path.join(e.parentPath, e.name)));
  }
  return files;
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

/**
 * A build file's bytes, a compressed coding's (src/build/files/compress.ts) decoded, from a sibling
 * file or from inside its file (src/release/coded-file.ts): what a client gets from it.
 */
export function readDecoded(file: string): Buffer {
  const coding = ENCODINGS.find((e) => file.endsWith(e.suffix));
  if (!coding) return readServedFile(file);
  const base = file.slice(0, -coding.suffix.length);
  const bytes = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.from(partOf(fs.readFileSync(base), coding) ?? Buffer.alloc(0));
  return coding.name === 'br' ? zlib.brotliDecompressSync(bytes) : zlib.gunzipSync(bytes);
}

/** A release file's bytes as served without a coding: out of a `node` release's file that holds its codings too (src/release/coded-file.ts). */
export const servedBytes = (stored: Uint8Array): Buffer => Buffer.from(identityOf(stored));
export const servedText = (stored: Uint8Array): string => servedBytes(stored).toString('utf8');
/** `servedBytes` of the file at `file`. */
export const readServedFile = (file: string): Buffer => servedBytes(fs.readFileSync(file));

/**
 * A release file as the files it stands for: a `node` release's file holding its codings
 * (src/release/coded-file.ts) as the file and a `.br`/`.gz` sibling for each coding it holds, as a
 * `static` release writes them; any other file as it is.
 */
export function unpackedEntries(file: string, stored: Buffer): [string, Buffer][] {
  if (!isPacked(stored)) return [[file, stored]];
  const out: [string, Buffer][] = [[file, servedBytes(stored)]];
  for (const e of ENCODINGS) {
    const part = partOf(stored, e);
    if (part) out.push([file + e.suffix, Buffer.from(part)]);
  }
  return out;
}
