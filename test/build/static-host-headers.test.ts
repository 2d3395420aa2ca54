// The `_headers` file for static hosts: a host applying it (every matching rule, values of a header
// set twice joined with a comma, as Netlify and Cloudflare Pages do) sends the headers our server
// sends. A real static build's file against our running server: test/build/netlify-rules.test.ts.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { staticHostHeaders } from '../../src/build/hosts/static-host-headers.ts';
import { addressOf, isServedFile, staticFileHeaders } from '../../src/http/headers.ts';

/** The address the server serves a file at, or undefined for files only a host reads. */
const urlPathOf = (file: string) => (isServedFile(file) ? addressOf(file) : undefined);

const FILES = [
  'index.html', '404.html', 'docs.html', 'favicon.svg', 'openapi.json', '_astro/Base.DUvZ2ETI.css', 'p/alice.html', 'p/bob.html',
  'api/v1/users/alice', 'api/v1/users/bob', 'service-api/v1/creators', 'media/avatars/alice.png', 'media/decorations/sakura.png',
  'schemas/profile.schema.json',
];

/** The rules of a `_headers` text, in order. */
function parseRules(text: string): { pattern: string; headers: [string, string][] }[] {
  const rules: { pattern: string; headers: [string, string][] }[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    if (!/^\s/.test(line)) rules.push({ pattern: line.trim(), headers: [] });
    else {
      const colon = line.indexOf(':');
      rules.at(-1)!.headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
    }
  }
  return rules;
}

/** What a static host sends for `urlPath`: the headers of every matching rule, repeats joined with `, `. */
function hostHeaders(text: string, urlPath: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { pattern, headers } of parseRules(text)) {
    const re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    if (!re.test(urlPath)) continue;
    for (const [k, v] of headers) out[k] = out[k] === undefined ? v : `${out[k]}, ${v}`;
  }
  return out;
}

describe('the _headers text', () => {
  const text = staticHostHeaders(FILES);

  test('has the rules: common headers everywhere, caching per top-level entry, the rest by kind of file', () => {
    expect(text).toMatchInlineSnapshot(`
      "# Headers for static hosts (Netlify, Cloudflare Pages) serving this folder without the Node server:
      # the same headers the server sends. Written by the build (src/build/hosts/static-host-headers.ts); do not edit.
      # No header is set by two rules that match the same path, because hosts join such values with a comma.

      /*
        Access-Control-Allow-Origin: *
        Access-Control-Expose-Headers: ETag, Link, Allow
        X-Content-Type-Options: nosniff
        Referrer-Policy: strict-origin-when-cross-origin

      /_astro/*
        Cache-Control: public, max-age=31536000, immutable

      /api/*
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60

      /docs
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60
        Content-Security-Policy: default-src 'none'; script-src 'self'; img-src 'self' data:; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'
        X-Frame-Options: DENY

      /docs.html
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60
        Content-Security-Policy: default-src 'none'; script-src 'self'; img-src 'self' data:; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'
        X-Frame-Options: DENY

      /favicon.svg
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60
        Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; sandbox

      /
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60
        Content-Security-Policy: default-src 'none'; script-src 'self'; img-src 'self' data:; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'
        X-Frame-Options: DENY

      /index.html
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60
        Content-Security-Policy: default-src 'none'; script-src 'self'; img-src 'self' data:; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'
        X-Frame-Options: DENY

      /media/*
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60

      /openapi.json
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60

      /p/*
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60
        Content-Security-Policy: default-src 'none'; script-src 'self'; img-src 'self' data:; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'
        X-Frame-Options: DENY

      /schemas/*
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60

      /service-api/*
        Cache-Control: public, max-age=30, s-maxage=30, stale-while-revalidate=60

      /api/v1/users/*
        Content-Type: application/json; charset=utf-8

      /service-api/v1/*
        Content-Type: application/json; charset=utf-8
      "
    `);
  });

  test('no header is set by two rules matching the same address (a host would join them into nonsense)', () => {
    const addresses = [...FILES.map((f) => urlPathOf(f)).filter((p) => p !== undefined), '/p/nobody', '/api/avatar', '/api/v1/users/x/y', '/whatever'];
    const rules = parseRules(text);
    for (const address of addresses) {
      const seen = new Map<string, string>();
      for (const { pattern, headers } of rules) {
        if (!new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`).test(address)) continue;
        for (const [k] of headers) {
          expect(seen.get(k), `${address}: ${k} from ${seen.get(k)} and ${pattern}`).toBeUndefined();
          seen.set(k, pattern);
        }
      }
    }
  });

  test('stays within Cloudflare Pages limits: 100 rules, 2,000 characters a line', () => {
    const many = staticHostHeaders([...FILES, ...Array.from({ length: 5000 }, (_, i) => `p/user-${i}.html`), ...Array.from({ length: 5000 }, (_, i) => `api/v1/users/user-${i}`)]);
    expect(parseRules(many).length).toBe(parseRules(text).length);
    expect(parseRules(text).length).toBeLessThan(100);
    expect(Math.max(...text.split('\n').map((l) => l.length))).toBeLessThan(2000);
  });

  // Unit-level: the headers our server gives each file (src/server/static-files.ts), for awkward layouts too.
  test.each([
    ['this build', FILES],
    ['a folder of pages, pictures and data', ['guide/index.html', 'guide/diagram.svg', 'guide/data.json', 'guide/part/one.html', 'index.html']],
    ['a folder with an index page only', ['help/index.html', 'robots.txt', '_astro/a.js', '_astro/nested/b.css']],
    ['extensionless API files beside others', ['api/v1/users/alice', 'api/v1/users/readme.txt', 'service-api/v1/creators', 'service-api/v1/creators.svg']],
  ])('%s: every file gets exactly the headers staticFileHeaders() gives it', (_, files) => {
    const text = staticHostHeaders(files);
    for (const file of files) {
      const address = urlPathOf(file);
      if (!address) continue; // 404.html: the host's own

      const ext = path.posix.extname(file);
      const expected = { ...staticFileHeaders(address, ext) };
      // A host picks the content type from the extension itself.
      if (ext !== '') delete expected['content-type'];
      expect(hostHeaders(text, address), file).toEqual(expected);
    }
  });
});

describe('headers that depend on a file\'s content', () => {
  test('the creators list\'s Link gets a rule of its exact address, and no other address gets it', () => {
    const link = '<https://profiles.example.net/service-api/v1/creators?limit=50&cursor=abc>; rel="next"';
    const text = staticHostHeaders(FILES, { '/service-api/v1/creators': { link } });
    expect(hostHeaders(text, '/service-api/v1/creators').link).toBe(link);
    for (const file of FILES.filter((f) => f !== 'service-api/v1/creators')) {
      const address = urlPathOf(file);
      if (address) expect(hostHeaders(text, address).link, address).toBeUndefined();
    }
  });

  test('an address with nothing of its own adds no rule', () => {
    expect(staticHostHeaders(FILES, { '/service-api/v1/creators': {} })).toBe(staticHostHeaders(FILES));
  });
});
