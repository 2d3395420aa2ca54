// The `_headers` file for static hosts (Netlify, Cloudflare Pages) that serve dist/client without
// our server: the same headers the policy (src/http/headers.ts) gives each file.
//
// Both hosts apply every rule whose path matches a request and join the values of a header set by
// two matching rules with a comma. So no header is ever set by two rules that can match the same
// path: `Cache-Control` gets one rule per top-level entry (`/_astro/*` differs), and the headers
// that depend on the kind of file get a rule per folder only where that folder has no subfolders,
// else one rule per file. The rules are made from the build's own files, so a page or file added
// later is covered without editing this module.
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_CONTROL, COMMON_HEADERS, IMMUTABLE_CACHE_CONTROL, addressOf, isServedFile, staticHostRuleHeaders } from '../http/headers.ts';

export const HEADERS_FILE = '_headers';

type Headers = Record<string, string>;

/**
 * The `_headers` text for a build whose dist/client holds `files` (paths relative to it, with `/`),
 * and `byAddress` headers that depend on a file's content rather than its kind (`answerOnlyHeaders`).
 */
export function staticHostHeaders(files: readonly string[], byAddress: Readonly<Record<string, Headers>> = {}): string {
  const served = files.filter(isServedFile).sort();
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
  // The headers of a file below the top level depend only on its folder's first segment and its
  // extension (staticFileHeaders), unless it is an `index.html`: one computation per folder and
  // extension, not one per file (1.1 s for the 200,000 files of a rebuild at 100,000 profiles).
  const kindOf = new Map<string, string>();
  const ruleKind = (dir: string, f: string) => {
    if (dir === '.' || f.endsWith('/index.html')) return JSON.stringify(staticHostRuleHeaders(f));
    const dot = f.lastIndexOf('.');
    const ext = dot > dir.length ? f.slice(dot) : '';
    let kind = kindOf.get(ext);
    if (kind === undefined) kindOf.set(ext, kind = JSON.stringify(staticHostRuleHeaders(f)));
    return kind;
  };
  for (const [dir, inDir] of folders) {
    kindOf.clear();
    const kinds = inDir.map((f) => ruleKind(dir, f));
    const oneRule = dir !== '.' && !hasSubfolder(dir) && !inDir.includes(`${dir}/index.html`) && kinds.every((k) => k === kinds[0]);
    if (oneRule) add(`/${dir}/*`, staticHostRuleHeaders(inDir[0]!));
    else for (const f of inDir) add(addressOf(f), staticHostRuleHeaders(f));
  }
  // An exact address: no rule of a folder sets these headers, so nothing is joined with a comma.
  for (const [address, headers] of Object.entries(byAddress)) add(address, headers);

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

/** Writes `<clientDir>/_headers` for `files` (default: the files in it) and `byAddress`, as `staticHostHeaders`. */
export function writeStaticHostHeaders(clientDir: string, byAddress: Readonly<Record<string, Headers>> = {}, files?: readonly string[]): void {
  files ??= fs.readdirSync(clientDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(clientDir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  fs.writeFileSync(path.join(clientDir, HEADERS_FILE), staticHostHeaders(files, byAddress));
}

const titleCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
