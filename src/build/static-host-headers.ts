// The `_headers` file for static hosts (Netlify, Cloudflare Pages) that serve dist/client without
// our server: the same headers src/server/static-files.ts `staticHeaders()` gives each file.
//
// Both hosts apply every rule whose path matches a request and join the values of a header set by
// two matching rules with a comma. So no header is ever set by two rules that can match the same
// path: `Cache-Control` gets one rule per top-level entry (`/_astro/*` differs), and the headers
// that depend on the kind of file get a rule per folder only where that folder has no subfolders,
// else one rule per file. The rules are made from the build's own files, so a page or file added
// later is covered without editing this module.
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_CONTROL, COMMON_HEADERS, HTML_CSP, IMMUTABLE_CACHE_CONTROL, JSON_TYPE, SVG_CSP } from '../http/response.ts';

export const HEADERS_FILE = '_headers';

/** Files a static host uses itself rather than serving at their own address. */
const NOT_SERVED = new Set([HEADERS_FILE, '_redirects', '404.html', '500.html']);

type Headers = Record<string, string>;

/** The headers that depend on the kind of file. Content types with an extension are the host's. */
function kindHeaders(file: string): Headers {
  const ext = path.posix.extname(file);
  if (ext === '.html') return { 'content-security-policy': HTML_CSP, 'x-frame-options': 'DENY' };
  if (ext === '.svg') return { 'content-security-policy': SVG_CSP };
  // Pre-rendered API answers have no extension (`/api/v1/users/alice`), so no host can guess them.
  if (ext === '' && (file.startsWith('api/') || file.startsWith('service-api/'))) return { 'content-type': JSON_TYPE };
  return {};
}

/** The address a host serves a file at: `p/alice.html` at `/p/alice`, `index.html` at `/`. */
function addressOf(file: string): string {
  if (file === 'index.html') return '/';
  if (file.endsWith('/index.html')) return `/${file.slice(0, -'/index.html'.length)}`;
  return `/${file.replace(/\.html$/, '')}`;
}

/**
 * The `_headers` text for a build whose dist/client holds `files` (paths relative to it, with `/`).
 */
export function staticHostHeaders(files: readonly string[]): string {
  const served = files.filter((f) => !NOT_SERVED.has(f)).sort();
  const rules = new Map<string, Headers>();
  const add = (pattern: string, headers: Headers) => {
    if (Object.keys(headers).length) rules.set(pattern, { ...rules.get(pattern), ...headers });
  };

  const { 'cache-control': _perEntry, ...everywhere } = COMMON_HEADERS;
  add('/*', everywhere);

  const topLevel = new Set(served.map((f) => f.split('/')[0]!));
  for (const entry of [...topLevel].sort()) {
    const cache = { 'cache-control': entry === '_astro' ? IMMUTABLE_CACHE_CONTROL : CACHE_CONTROL };
    if (!served.some((f) => f.startsWith(`${entry}/`))) { add(addressOf(entry), cache); continue; }
    add(`/${entry}/*`, cache);
    // `guide/index.html` is served at `/guide`, which `/guide/*` does not match.
    if (served.includes(`${entry}/index.html`)) add(addressOf(`${entry}/index.html`), cache);
  }

  const folders = new Map<string, string[]>();
  for (const f of served) {
    const dir = path.posix.dirname(f);
    const inDir = folders.get(dir);
    // Push, never copy: a folder holds one file per profile.
    if (inDir) inDir.push(f);
    else folders.set(dir, [f]);
  }
  const hasSubfolder = (dir: string) => [...folders.keys()].some((d) => d !== dir && (dir === '.' || d.startsWith(`${dir}/`)));
  for (const [dir, inDir] of folders) {
    const kinds = inDir.map((f) => JSON.stringify(kindHeaders(f)));
    const oneRule = dir !== '.' && !hasSubfolder(dir) && !inDir.includes(`${dir}/index.html`) && kinds.every((k) => k === kinds[0]);
    if (oneRule) add(`/${dir}/*`, kindHeaders(inDir[0]!));
    else for (const f of inDir) add(addressOf(f), kindHeaders(f));
  }

  const blocks = [...rules].map(([pattern, headers]) => `${pattern}\n${Object.entries(headers).map(([k, v]) => `  ${titleCase(k)}: ${v}`).join('\n')}`);
  return [
    '# Headers for static hosts (Netlify, Cloudflare Pages) serving this folder without the Node server:',
    '# the same headers the server sends. Written by the build (src/build/static-host-headers.ts); do not edit.',
    '# No header is set by two rules that match the same path, because hosts join such values with a comma.',
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n');
}

/** Writes `<clientDir>/_headers` for the files in it. */
export function writeStaticHostHeaders(clientDir: string): void {
  const files = fs.readdirSync(clientDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(clientDir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  fs.writeFileSync(path.join(clientDir, HEADERS_FILE), staticHostHeaders(files));
}

const titleCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
