// The `_headers` file for static hosts (Netlify, Cloudflare Pages) that serve dist/client without
// our server: the same headers the policy (src/http/headers.ts) gives each file.
//
// Both hosts apply every rule whose path matches a request and join the values of a header set by
// two matching rules with a comma. So no header is ever set by two rules that can match the same
// path: `Cache-Control` gets one rule per top-level entry (`/_astro/*` differs), and the headers
// that depend on the kind of file get a rule per folder only where that folder has no subfolders,
// else one rule per file. The rules are made from the build's own files, so a page or file added
// later is covered without editing this module.
//
// A page's rules name both its address (`/docs`) and its file (`/docs.html`): Netlify matches rules
// against the address asked for, but `netlify dev` against the file it found for it after the
// address itself was not one (netlify-cli dist/utils/proxy.js, `alternativePathsFor`).
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_CONTROL, COMMON_HEADERS, IMMUTABLE_CACHE_CONTROL, addressOf, isServedFile, staticHostRuleHeaders } from '../../http/headers.ts';

export const HEADERS_FILE = '_headers';

type Headers = Record<string, string>;

/**
 * The `_headers` text for a build whose dist/client holds `files` (paths relative to it, with `/`),
 * and `byAddress` headers that depend on a file's content rather than its kind (`answerOnlyHeaders`).
 */
export function staticHostHeaders(files: readonly string[], byAddress: Readonly<Record<string, Headers>> = {}): string {
  // The served files by folder, in one pass: a rebuild at 100,000 profiles lists 200,000 files, and
  // sorting them all, or scanning them once per top-level entry, cost more than the rest of it.
  // Folders come in the order of their first file, files in order where a rule per file is made:
  // the rules of sorting the whole list, in the same order.
  const folders = new Map<string, { files: string[]; first: string }>();
  for (const f of files) {
    if (!isServedFile(f)) continue;
    const slash = f.lastIndexOf('/');
    const dir = slash < 0 ? '.' : f.slice(0, slash);
    const folder = folders.get(dir);
    // Push, never copy: a folder holds one file per profile.
    if (!folder) folders.set(dir, { files: [f], first: f });
    else {
      folder.files.push(f);
      if (f < folder.first) folder.first = f;
    }
  }
  const rules = new Map<string, Headers>();
  const add = (pattern: string, headers: Headers) => {
    if (Object.keys(headers).length) rules.set(pattern, { ...rules.get(pattern), ...headers });
  };
  /** The rule of one file, at its address and, for a page, at its file's own path too (see above). */
  const addFile = (file: string, headers: Headers) => {
    add(addressOf(file), headers);
    if (file.endsWith('.html') && addressOf(file) !== `/${file}`) add(`/${file}`, headers);
  };

  const { 'cache-control': _perEntry, ...everywhere } = COMMON_HEADERS;
  add('/*', everywhere);

  const topLevel = new Set<string>();
  for (const [dir, folder] of folders) {
    if (dir === '.') for (const f of folder.files) topLevel.add(f);
    else topLevel.add(dir.split('/')[0]!);
  }
  const isFolder = (entry: string) => [...folders.keys()].some((d) => d === entry || d.startsWith(`${entry}/`));
  for (const entry of [...topLevel].sort()) {
    const cache = { 'cache-control': entry === '_astro' ? IMMUTABLE_CACHE_CONTROL : CACHE_CONTROL };
    if (!isFolder(entry)) { addFile(entry, cache); continue; }
    add(`/${entry}/*`, cache);
    // `guide/index.html` is served at `/guide`, which `/guide/*` does not match.
    if (folders.get(entry)?.files.includes(`${entry}/index.html`)) add(addressOf(`${entry}/index.html`), cache);
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
  for (const [dir, { files: inDir, first }] of [...folders].sort(([, a], [, b]) => (a.first < b.first ? -1 : 1))) {
    kindOf.clear();
    let oneRule = dir !== '.' && !hasSubfolder(dir) && !inDir.includes(`${dir}/index.html`);
    if (oneRule) {
      const kind = ruleKind(dir, first);
      oneRule = inDir.every((f) => ruleKind(dir, f) === kind);
    }
    if (oneRule) add(`/${dir}/*`, staticHostRuleHeaders(first));
    else for (const f of inDir.sort()) addFile(f, staticHostRuleHeaders(f));
  }
  // An exact address: no rule of a folder sets these headers, so nothing is joined with a comma.
  for (const [address, headers] of Object.entries(byAddress)) add(address, headers);

  const blocks = [...rules].map(([pattern, headers]) => `${pattern}\n${Object.entries(headers).map(([k, v]) => `  ${titleCase(k)}: ${v}`).join('\n')}`);
  return [
    '# Headers for static hosts (Netlify, Cloudflare Pages) serving this folder without the Node server:',
    '# the same headers the server sends. Written by the build (src/build/hosts/static-host-headers.ts); do not edit.',
    '# No header is set by two rules that match the same path, because hosts join such values with a comma.',
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n');
}

/** Writes `<clientDir>/_headers` for the files in it and `byAddress`, as `staticHostHeaders`. */
export function writeStaticHostHeaders(clientDir: string, byAddress: Readonly<Record<string, Headers>> = {}): void {
  const files = fs.readdirSync(clientDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(clientDir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  fs.writeFileSync(path.join(clientDir, HEADERS_FILE), staticHostHeaders(files, byAddress));
}

const titleCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
