// Hostile input. Property-based first: arbitrary Unicode, percent-encoding valid and broken, very
// long names and queries, repeated and array-style parameters, against `answer` (fast, many runs)
// and against the real server over raw sockets (fewer runs, nothing between the bytes and our
// code). Then the fixed cases: path traversal, prototype names, cache deception, forwarded
// headers, and the headers a browser relies on.
//
// The expectations are computed from the README's rules, written out here (ASCII lowercasing,
// the username pattern, trim and one `@`), never by calling the code under test.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { answer } from '../../src/api/handler.ts';
import { lookupFile } from '../../src/api/release-files.ts';
import type { ApiResponse } from '../../src/http/response.ts';
import { MAX_TARGET_BYTES } from '../../src/http/request.ts';
import { CreatorsBodySchema, ErrorBodySchema, UserBodySchema } from '../../src/schemas/api.ts';
import { TEST_SITE_URL, ownBuild, type OwnBuild } from '../support/built-server.ts';
import { PRIVATE_MARKERS, ROOT, bodyJson, bodyText, fixtureSite, request } from '../support/helpers.ts';
import { rawExchange, rawRequest, type RawResponse } from '../support/raw-http.ts';

const { files, index } = fixtureSite();
const USERNAMES = new Set(index.users.map((u) => u.username));
const DECORATION_FILES = new Set(index.decorationFiles);
const API_JSON = 'application/json; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

// Run counts: enough to find a crash in well under the suite's time budget. FC_RUNS=10 multiplies
// them for a long local hunt; failures print a seed and path to replay.
const SCALE = Number(process.env.FC_RUNS ?? 1);
const DISPATCH_RUNS = 400 * SCALE;
const SERVER_RUNS = 120 * SCALE;
const PROPERTY_TIMEOUT = 30_000 * SCALE;

// ---------------------------------------------------------------------------------------------
// The oracle: the README's rules, restated.

/** ASCII letters only: `K` (Kelvin) and `İ` stay as they are. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
const USERNAME_RULE = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** Status of a lookup of an already-decoded name: 400 empty or outside the rule, 404 unknown, 200 found. */
function lookupStatus(folded: string): 200 | 400 | 404 {
  if (folded === '' || !USERNAME_RULE.test(folded)) return 400;
  return USERNAMES.has(folded) ? 200 : 404;
}
/** docs/api.md: a query `username` or `u` over 200 characters, spaces included, is a 400. */
const MAX_QUERY_VALUE = 200;
/** The query form: at most 200 characters (code points, as the OpenAPI's maxLength counts) before trimming; trim, strip one leading `@`, fold ASCII case. */
function queryLookupStatus(value: string): 200 | 400 | 404 {
  if ([...value].length > MAX_QUERY_VALUE) return 400;
  const t = value.trim();
  return lookupStatus(asciiLower(t.startsWith('@') ? t.slice(1) : t));
}
/** The path form: no trimming, and `@` is a 400. */
const pathLookupStatus = (value: string) => (value.includes('@') ? 400 : lookupStatus(asciiLower(value)));

// ---------------------------------------------------------------------------------------------
// Generators.

const existing = fc.constantFrom(...USERNAMES);
/** Strings near real names: other casings, spaces, `@`, suffixes, look-alike letters. */
const nearName = fc.oneof(
  fc.mixedCase(existing),
  fc.tuple(
    fc.constantFrom('', ' ', '  ', '@', ' @', '@@', '@ ', '\t', '\n', '\u00a0', '\u3000', '\ufeff', '.', '/'),
    fc.mixedCase(existing),
    fc.constantFrom('', ' ', '@', '.', '/', '.css', ';x.css', '\u0000', '%', '\u017f', '\u0130', '#', '?', '&', '='),
  ).map(([a, b, c]) => a + b + c),
  existing.map((n) => n.replace(/k/g, '\u212a').replace(/s/g, '\u017f')),
  fc.constantFrom('__proto__', 'constructor', 'hasOwnProperty', 'toString', 'prototype', 'valueOf', 'CONSTRUCTOR'),
);
/** One Unicode scalar value: any code point but a lone surrogate, which UTF-8 cannot carry. */
const scalar = fc.integer({ min: 0, max: 0x10ffff }).filter((c) => c < 0xd800 || c > 0xdfff).map((c) => String.fromCodePoint(c));
/** Any Unicode text. */
const anyText = fc.oneof(
  fc.string({ unit: scalar, maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
);
/** 10k to 100k characters: a short piece repeated, after nothing or a real name. */
const longText = fc.tuple(fc.constantFrom('', 'alice', '@bob'), fc.string({ unit: scalar, minLength: 1, maxLength: 6 }), fc.integer({ min: 10_000, max: 100_000 }))
  .map(([head, piece, n]) => head + piece.repeat(Math.ceil(n / piece.length))); // no slicing: it could split a surrogate pair

const nameArb = (long: boolean) => (long
  ? fc.oneof({ weight: 4, arbitrary: nearName }, { weight: 4, arbitrary: anyText }, { weight: 1, arbitrary: longText })
  : fc.oneof(nearName, anyText));

/** Ways to percent-encode a string as UTF-8; each decodes back to the same string. */
type Encoder = (s: string) => string;
/** Byte by byte: `keep` lists the ASCII characters left as they are; every other byte is `%XX`. */
const utf8Escapes = (s: string, keep: RegExp, upper: boolean) => {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(b);
    out += b < 0x80 && keep.test(ch) ? ch : `%${(upper ? b.toString(16).toUpperCase() : b.toString(16)).padStart(2, '0')}`;
  }
  return out;
};
const ENCODERS: Record<string, Encoder> = {
  standard: encodeURIComponent,
  everyByteUpper: (s) => utf8Escapes(s, /^$/, true),
  everyByteLower: (s) => utf8Escapes(s, /^$/, false),
  // Only what the request line forces: letters, digits and most punctuation stay raw.
  minimal: (s) => utf8Escapes(s, /^[A-Za-z0-9\-._~!$'()*,;:@]$/, true),
};
/** Query values may also write a space as `+`. */
const QUERY_ENCODERS: Record<string, Encoder> = { ...ENCODERS, plus: (s) => encodeURIComponent(s).replace(/%20/g, '+') };

/**
 * Broken percent-encoding, each ending in `~` so it cannot join with what follows into a valid
 * escape: a bare `%`, bad hex, a truncated or overlong UTF-8 sequence, a UTF-16 surrogate, IIS's `%u`.
 */
const BROKEN = ['%~', '%Z~', '%zz~', '%4~', '%E0%A4~', '%C0%AF~', '%ED%A0%80~', '%FF~', '%u0041~', '%%~'];

/** A name as it travels: encoded with one encoder, maybe with a broken escape spliced in. */
interface Encoded { name: string; wire: string; broken: boolean }
const encodedArb = (encoders: Record<string, Encoder>, long: boolean) => fc.tuple(
  nameArb(long), fc.constantFrom(...Object.keys(encoders)), fc.option(fc.tuple(fc.constantFrom(...BROKEN), fc.nat()), { freq: 5 }),
).map(([name, enc, broken]): Encoded => {
  const encode = encoders[enc]!;
  if (!broken) return { name, wire: encode(name), broken: false };
  const chars = [...name];
  const at = broken[1] % (chars.length + 1);
  return { name, wire: encode(chars.slice(0, at).join('')) + broken[0] + encode(chars.slice(at).join('')), broken: true };
});

/** Other parameters beside the one under test: none of these keys is `username`, `u` or `f`. */
const extraParam = fc.tuple(
  fc.constantFrom('utm_source', 'username[]', 'username[0]', 'USERNAME', 'user', 'x', '__proto__', 'constructor', 'toString', 'callback', 'format', 'username.x'),
  anyText,
).map(([k, v]) => `${encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encodeURIComponent(v)}`);

/** A query string with `key` given `values.length` times (`key[]` when array-style), shuffled among extras. */
const queryArb = (key: string, long: boolean) => fc.record({
  values: fc.oneof(
    { weight: 1, arbitrary: fc.constant<Encoded[]>([]) },
    { weight: 8, arbitrary: fc.array(encodedArb(QUERY_ENCODERS, long), { minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.array(encodedArb(QUERY_ENCODERS, long), { minLength: 2, maxLength: 3 }) },
  ),
  arrayStyle: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  extras: fc.array(extraParam, { maxLength: 3 }),
  seed: fc.nat(),
}).map(({ values, arrayStyle, extras, seed }) => {
  const own = values.map((v) => `${arrayStyle ? `${key}[]` : key}=${v.wire}`);
  const parts = [...own, ...extras];
  // A deterministic shuffle from the seed, so a failure replays.
  for (let i = parts.length - 1, s = seed; i > 0; i--, s = (s * 1103515245 + 12345) >>> 0) {
    const j = s % (i + 1);
    [parts[i], parts[j]] = [parts[j]!, parts[i]!];
  }
  return { query: parts.join('&'), given: arrayStyle ? [] : values };
});

/**
 * The status the README promises for a `?key=` lookup: 400 when missing or given twice. A broken
 * escape never decodes to a name (it leaves `%`, `~` or U+FFFD behind): `brokenStatus`.
 */
function expectedForQuery(given: Encoded[], lookup: (value: string) => number, brokenStatus = 400): number {
  if (given.length !== 1) return 400;
  return given[0]!.broken ? brokenStatus : lookup(given[0]!.name);
}
const decorationStatus = (value: string) => (value === '' ? 400 : DECORATION_FILES.has(value) ? 200 : 404);

// ---------------------------------------------------------------------------------------------
// Checks shared by both levels.

function expectCommonHeaders(headers: (name: string) => string | undefined, what: string) {
  expect(headers('access-control-allow-origin'), what).toBe('*');
  expect(headers('x-content-type-options'), what).toBe('nosniff');
  expect(headers('access-control-allow-credentials'), what).toBeUndefined();
  expect(headers('set-cookie'), what).toBeUndefined();
}

/** An API answer: deliberate status, JSON unless a 200 image, the envelope's shape. */
function expectApiAnswer(status: number, headers: (name: string) => string | undefined, body: string, what: string, expectedStatus?: number) {
  expect(status, what).toBeLessThan(500);
  if (expectedStatus !== undefined) expect(status, what).toBe(expectedStatus);
  expectCommonHeaders(headers, what);
  const type = headers('content-type') ?? '';
  if (status === 200 && type.startsWith('image/')) return;
  expect(type, what).toBe(API_JSON);
  const json = JSON.parse(body);
  if (status >= 400) ErrorBodySchema.parse(json);
  else expect(json.success, what).toBe(true);
}

const viaDispatch = (target: string, method = 'GET') => answer(request(target, { method }), files);
const answerHeaders = (r: ApiResponse) => (name: string) => r.headers[name];

// ---------------------------------------------------------------------------------------------

describe('hostile requests, at the handler level', () => {
  test('any name in the path: 200 exactly when its ASCII lowercase is a username', { timeout: PROPERTY_TIMEOUT }, async () => {
    await fc.assert(fc.asyncProperty(encodedArb(ENCODERS, true), async (e) => {
      const target = `/api/v1/users/${e.wire}`;
      const r = await viaDispatch(target);
      const expected = e.broken ? 400 : pathLookupStatus(e.name);
      expectApiAnswer(r.status, answerHeaders(r), bodyText(r.body), target.slice(0, 200), expected);
      if (r.status === 200) expect(UserBodySchema.parse(JSON.parse(bodyText(r.body))).data.username).toBe(asciiLower(e.name));
    }), { numRuns: DISPATCH_RUNS });
  });

  test('any ?username=: trimmed, one @ stripped, ASCII-folded; given twice or as username[] is a 400', { timeout: PROPERTY_TIMEOUT }, async () => {
    await fc.assert(fc.asyncProperty(queryArb('username', true), async ({ query, given }) => {
      const target = `/api/v1/users?${query}`;
      const r = await viaDispatch(target);
      expectApiAnswer(r.status, answerHeaders(r), bodyText(r.body), target.slice(0, 200), expectedForQuery(given, queryLookupStatus));
    }), { numRuns: DISPATCH_RUNS });
  });

  test('any ?u= on the avatar: an image exactly when the user exists, else JSON', { timeout: PROPERTY_TIMEOUT }, async () => {
    await fc.assert(fc.asyncProperty(queryArb('u', false), async ({ query, given }) => {
      const target = `/api/avatar?${query}`;
      const r = await viaDispatch(target);
      expectApiAnswer(r.status, answerHeaders(r), bodyText(r.body), target, expectedForQuery(given, queryLookupStatus));
      if (r.status === 200) expect(r.headers['content-type'], target).toMatch(/^image\//);
    }), { numRuns: DISPATCH_RUNS / 2 });
  });

  test('any ?f= on decorations: a 200 only for a declared file name, exactly as declared', { timeout: PROPERTY_TIMEOUT }, async () => {
    await fc.assert(fc.asyncProperty(queryArb('f', false), async ({ query, given }) => {
      const target = `/api/decoration?${query}`;
      const r = await viaDispatch(target);
      expectApiAnswer(r.status, answerHeaders(r), bodyText(r.body), target, expectedForQuery(given, decorationStatus, 404));
    }), { numRuns: DISPATCH_RUNS / 2 });
  });

  test('any creators query is a 200 list or a 400 naming the parameter, cursors included', { timeout: PROPERTY_TIMEOUT }, async () => {
    const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v));
    const cursor = fc.oneof(
      anyText,
      json.map((s) => Buffer.from(s).toString('base64url')),
      fc.record({ s: fc.constantFrom('featured', 'views', 'newest', 'name', '__proto__'), a: fc.jsonValue({ maxDepth: 1 }) }).map((o) => Buffer.from(JSON.stringify(o)).toString('base64url')),
      fc.constantFrom('null', 'true', '[]', '{}', '"x"', '{"s":"featured","a":null}', '{"s":"featured","a":{"f":true,"v":1,"c":1,"n":"x","u":"__proto__"}}')
        .map((s) => Buffer.from(s).toString('base64url')),
    );
    const value = (k: string) => {
      const known: Record<string, fc.Arbitrary<string>> = {
        limit: fc.oneof(fc.integer({ min: -5, max: 205 }).map(String), anyText, fc.constantFrom('1e1', '0x10', '050', ' 5', '5 ')),
        sort: fc.oneof(fc.constantFrom('featured', 'views', 'newest', 'name', 'FEATURED', '__proto__', 'constructor', 'toString'), anyText),
        featured: fc.oneof(fc.constantFrom('true', 'false', 'TRUE', '1', ''), anyText),
        category: fc.oneof(fc.constantFrom('art', 'ART', '__proto__', '', ' '), anyText, longText),
        cursor,
      };
      return known[k] ?? anyText;
    };
    const param = fc.constantFrom('limit', 'sort', 'featured', 'category', 'cursor', 'x').chain((k) => value(k).map((v) => `${k}=${encodeURIComponent(v)}`));
    await fc.assert(fc.asyncProperty(fc.array(param, { maxLength: 5 }), async (params) => {
      const target = `/service-api/v1/creators?${params.join('&')}`;
      const r = await viaDispatch(target);
      expectApiAnswer(r.status, answerHeaders(r), bodyText(r.body), target.slice(0, 300));
      expect([200, 400], target.slice(0, 300)).toContain(r.status);
      if (r.status === 200) CreatorsBodySchema.parse(JSON.parse(bodyText(r.body)));
    }), { numRuns: DISPATCH_RUNS });
  });

  test('any raw path under /api/ or /service-api/, any method: never a 5xx, always JSON', { timeout: PROPERTY_TIMEOUT }, async () => {
    const method = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GET', 'HEAD') }, { weight: 1, arbitrary: fc.constantFrom('OPTIONS', 'POST', 'PUT', 'DELETE', 'TRACE', 'CONNECT', 'PROPFIND', 'get') });
    const rawPath = fc.tuple(fc.constantFrom('/api/', '/service-api/', '/api/v1/users/', '/api/v1/users', '/api/avatar', '/service-api/v1/creators'), fc.oneof(anyText, longText))
      .map(([p, rest]) => p + rest);
    await fc.assert(fc.asyncProperty(rawPath, method, async (target, m) => {
      const r = await viaDispatch(target, m);
      const what = `${m} ${target.slice(0, 200)}`;
      const upper = m.toUpperCase();
      expect(r.status, what).toBeLessThan(500);
      if (upper === 'OPTIONS') expect(r.status, what).toBe(204);
      else if (upper !== 'GET' && upper !== 'HEAD') expect(r.status, what).toBe(405);
      if (upper === 'HEAD' || upper === 'OPTIONS') expect(r.body, what).toBeNull();
      else expectApiAnswer(r.status, answerHeaders(r), bodyText(r.body), what);
    }), { numRuns: DISPATCH_RUNS });
  });
});

describe('escapes of unreserved characters, at the handler level', () => {
  // RFC 3986 §6.2.2.2: `%61` is `a`, as a CDN that normalises URLs and a static host that decodes
  // paths take it. On main at 7e37ac4 the handler routed the raw path: `/%73ervice-api/v1/creators
  // ?limit=0` was the creators file (200, 50 items) a CDN could keep for that query, and
  // `/%61pi/v1/users/x` the HTML 404 page.
  const TARGETS = [
    '/api/v1/users/alice', '/api/v1/users/ALICE', '/api/v1/users/nobody', '/api/v1/users/no_body-1.x~', '/api/v1/users?username=alice',
    '/api/v1/users?username=', '/service-api/v1/creators', '/service-api/v1/creators?limit=1', '/service-api/v1/creators?limit=0',
    '/service-api/v1/creators?sort=bogus', '/api/avatar?u=alice', '/api/decoration?f=x', '/api/nothing', '/p/alice', '/p/ALICE', '/p/alice/',
    '/docs', '/openapi.json', '/lookup?u=alice', '/no-such-page', '/',
  ];
  const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
  /** The target with each unreserved character of its path escaped where `picks` says, in upper or lower hex. */
  const escaped = (target: string, picks: boolean[], upper: boolean) => {
    const q = target.indexOf('?');
    const [path, query] = q < 0 ? [target, ''] : [target.slice(0, q), target.slice(q)];
    const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(2, '0');
    return [...path].map((c, i) => (UNRESERVED.test(c) && picks[i % picks.length] ? `%${upper ? hex(c).toUpperCase() : hex(c)}` : c)).join('') + query;
  };
  /** What an answer says, but the time it was made (an on-demand answer's `meta`, and so its length). */
  const said = (r: ApiResponse) => {
    const text = bodyText(r.body);
    if (!(r.headers['content-type'] ?? '').startsWith('application/json')) return { status: r.status, headers: r.headers, body: text };
    const { 'content-length': _length, ...headers } = r.headers;
    return { status: r.status, headers, body: JSON.parse(text, (k, v) => (k === 'timestamp' || k === 'executionTimeMs' ? undefined : v)) };
  };

  test('any of them written as %XX, anywhere in the path: the answer of the plain address', { timeout: PROPERTY_TIMEOUT }, async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom(...TARGETS), fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }), fc.boolean(), async (target, picks, upper) => {
      const wire = escaped(target, picks, upper);
      expect(said(await viaDispatch(wire)), wire).toEqual(said(await viaDispatch(target)));
    }), { numRuns: DISPATCH_RUNS });
  });

  test('the creators list with a query, an unknown user and an unknown API address, each fully escaped', async () => {
    const every = (t: string) => escaped(t, [true], true);
    const invalid = await viaDispatch(every('/service-api/v1/creators') + '?limit=0');
    expect(invalid.status).toBe(400);
    expect(ErrorBodySchema.parse(bodyJson(invalid)).error.code).toBe('INVALID_PARAMETER');
    const one = await viaDispatch(every('/service-api/v1/creators') + '?limit=1');
    expect(CreatorsBodySchema.parse(bodyJson(one)).data).toHaveLength(1);
    const unknown = await viaDispatch(every('/api/v1/users/nobody'));
    expect(unknown.headers['content-type']).toBe(API_JSON);
    expect(ErrorBodySchema.parse(bodyJson(unknown)).error.code).toBe('USER_NOT_FOUND');
    expect(ErrorBodySchema.parse(bodyJson(await viaDispatch(every('/api/nothing')))).error.code).toBe('NOT_FOUND');
  });
});

// ---------------------------------------------------------------------------------------------
// The real server.

let service: OwnBuild;
let base = '';
/** Files planted beside the build that must never be served, whatever the path. */
const CANARY = `canary-${process.pid}-never-served`;
let clientFiles: Buffer[] = [];

let starting: Promise<void> | undefined;
/**
 * Starts a server on a copy of the run's build once, for the first group that needs it (the
 * handler tests run without): the canaries are planted in the copy, never in the shared build.
 */
function startServer(): Promise<void> {
  starting ??= (async () => {
    service = await ownBuild('hostile');
    base = service.base;
    fs.writeFileSync(path.join(service.dist, 'canary.txt'), CANARY);
    fs.writeFileSync(path.join(service.dist, 'server', 'canary.txt'), CANARY);
    fs.writeFileSync(path.join(service.work, 'canary.txt'), CANARY);
    const client = path.join(service.dist, 'client');
    clientFiles = fs.readdirSync(client, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => fs.readFileSync(path.join(e.parentPath, e.name)));
  })();
  return starting;
}
/** Each group over HTTP starts with this. */
const withServer = () => beforeAll(startServer, 120_000);

afterAll(() => service?.stop());

const raw = (target: string, init?: Parameters<typeof rawRequest>[2]) => rawRequest(base, target, init);
/** Node's default limit on the request line plus headers (--max-http-header-size). */
const NODE_HEADER_LIMIT = 16 * 1024;
const isApi = (target: string) => target.startsWith('/api/') || target.startsWith('/service-api/');

function expectServerAnswer(r: RawResponse, target: string, expectedStatus?: number) {
  const what = target.slice(0, 200);
  const size = Buffer.byteLength(target);
  if (size > MAX_TARGET_BYTES) {
    // Too long a target is a 414 that no cache may keep, whether Node's limit or ours caught it.
    expect(r.status, what).toBe(414);
    expect(r.header('cache-control'), what).toBe('no-store');
    expect(ErrorBodySchema.parse(JSON.parse(r.text)).error.code).toBe('BAD_REQUEST');
    return;
  }
  if (isApi(target)) return expectApiAnswer(r.status, r.header, r.text, what, expectedStatus);
  expect(r.status, what).toBeLessThan(500);
  if (expectedStatus !== undefined) expect(r.status, what).toBe(expectedStatus);
  expectCommonHeaders(r.header, what);
}

describe('hostile requests, against the real server over raw sockets', () => {
  withServer();

  test('any name in the path or the query: the same rules as the handler, never a 5xx', { timeout: PROPERTY_TIMEOUT }, async () => {
    const form = fc.oneof(
      encodedArb(ENCODERS, true).map((e) => ({ target: `/api/v1/users/${e.wire}`, expected: e.broken ? 400 : pathLookupStatus(e.name) })),
      queryArb('username', true).map(({ query, given }) => ({ target: `/api/v1/users?${query}`, expected: expectedForQuery(given, queryLookupStatus) })),
      queryArb('u', false).map(({ query, given }) => ({ target: `/api/avatar?${query}`, expected: expectedForQuery(given, queryLookupStatus) })),
    );
    await fc.assert(fc.asyncProperty(form, async ({ target, expected }) => {
      expectServerAnswer(await raw(target), target, expected);
    }), { numRuns: SERVER_RUNS });
  });

  test('any name as a page: 200 for a username, a 308 to it for another casing, else the 404 page', { timeout: PROPERTY_TIMEOUT }, async () => {
    await fc.assert(fc.asyncProperty(encodedArb(ENCODERS, false), async (e) => {
      const target = `/p/${e.wire}`;
      const r = await raw(target);
      const folded = asciiLower(e.name.replace(/\/+$/, ''));
      const expected = e.broken ? 404 : USERNAMES.has(e.name) ? 200 : USERNAMES.has(folded) ? 308 : 404;
      expectServerAnswer(r, target, expected);
      if (r.status === 308) expect(r.header('location')).toBe(`/p/${folded}`);
      if (r.status !== 308) expect(r.header('content-type'), target).toBe(HTML);
    }), { numRuns: SERVER_RUNS });
  });

  test('bytes Node refuses in a request line (raw Unicode, controls, spaces) are a JSON 400', async () => {
    for (const bad of ['/api/v1/users/é', '/api/v1/users/a\u0001b', '/api/v1/users?username=al ice x', '/p/\u00e9', '/api/v1/users/\u212aate']) {
      const r = await rawExchange(base, Buffer.from(`GET ${bad} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 'utf8'));
      expect(r.status, bad).toBe(400);
      expectCommonHeaders(r.header, bad);
      expect(ErrorBodySchema.parse(JSON.parse(r.text)).error.code).toBe('BAD_REQUEST');
    }
  });

  test('a 100k-character name or query string is a JSON 414, in the path and in the query', async () => {
    for (const target of [`/api/v1/users/${'a'.repeat(100_000)}`, `/api/v1/users?username=alice&pad=${'%41'.repeat(33_000)}`, `/p/${'b'.repeat(100_000)}`, `/api/v1/users/${'c'.repeat(MAX_TARGET_BYTES)}`]) {
      expectServerAnswer(await raw(target), target, 414);
    }
  });

  test('errors about the request itself are never stored by a cache, and a normal request still works after them', async () => {
    const requestErrors: [string, number, string][] = [
      ['oversized headers', 431, `GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nX-Pad: ${'b'.repeat(NODE_HEADER_LIMIT)}\r\nConnection: close\r\n\r\n`],
      ['an oversized target', 414, `GET /api/v1/users/${'a'.repeat(NODE_HEADER_LIMIT)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`],
      ['no Host in HTTP/1.1', 400, 'GET /api/v1/users/alice HTTP/1.1\r\nConnection: close\r\n\r\n'],
      ['a broken header line', 400, 'GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'],
    ];
    for (const [what, status, bytes] of requestErrors) {
      const r = await rawExchange(base, Buffer.from(bytes));
      expect(r.status, what).toBe(status);
      expect(r.header('cache-control'), what).toBe('no-store');
      expectCommonHeaders(r.header, what);
      expect(ErrorBodySchema.parse(JSON.parse(r.text)).error.code, what).toBe('BAD_REQUEST');
    }
    const after = await raw('/api/v1/users/alice');
    expect(after.status).toBe(200);
    expect(after.header('cache-control')).toBe('public, max-age=30, s-maxage=30, stale-while-revalidate=60');
  });

  test('request forms a server must accept are the same request: absolute-form, HTTP/1.0 without Host', async () => {
    const plain = await raw('/api/v1/users/alice');
    for (const bytes of [
      'GET http://elsewhere.example/api/v1/users/alice HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      'GET HTTPS://elsewhere.example:8443/api/v1/users/alice HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      'GET /api/v1/users/alice HTTP/1.0\r\n\r\n',
    ]) {
      const r = await rawExchange(base, Buffer.from(bytes));
      expect(r.status, bytes).toBe(200);
      expect(r.text, bytes).toBe(plain.text);
      expect(r.header('etag'), bytes).toBe(plain.header('etag'));
    }
    const page = await rawExchange(base, Buffer.from('GET http://x/p/alice?utm=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    expect(page.status).toBe(200);
    expect(page.header('content-type')).toBe(HTML);
  });
});

describe('path traversal', () => {
  withServer();

  // Every spelling of "up one folder" and of "/" we know of, in every route that reads a file.
  const DOTS = ['..', '%2e%2e', '%2E%2E', '.%2e', '%2e.', '%252e%252e', '%c0%ae%c0%ae', '..%00', '..%c0%af', '...', '....'];
  const SEPARATORS = ['/', '%2f', '%2F', '%5c', '%5C', '\\', '%252f', '%c0%af', '//', '/./'];
  const TARGETS = ['server/site-index.json', 'server/entry.mjs', 'server/canary.txt', 'canary.txt', 'package.json', 'astro.config.mjs', 'content/profiles/alice.yaml', 'test/fixtures/content/profiles/alice.yaml', 'src/api/handler.ts', 'etc/passwd'];
  const ROUTES = ['/', '/p/', '/p/alice/', '/api/v1/users/', '/media/avatars/', '/media/decorations/', '/_astro/', '/api/', '/service-api/v1/', '/favicon.svg/'];
  // The served client/ is nine folders below / (<the run's folder>/<test>/dist.releases/<release>/client,
  // scratch.ts): 12 reaches / wherever the run writes.
  const payloads = (depths = [1, 2, 3, 6, 8, 12]) => DOTS.flatMap((dot) => SEPARATORS.flatMap((sep) => depths.map((d) => (sep + dot).repeat(d).slice(sep.length) + sep)));

  /** What must never come back: files outside dist/client, content YAML, source, system files. */
  const SECRETS = [CANARY, ...PRIVATE_MARKERS, '"dependencies"', '"decorationFiles"', 'defineConfig', 'displayName:', 'export async function answer', 'root:x:0:0', 'i18nNoLocaleFoundInPath', '"builtAt"'];

  function expectNothingRead(r: RawResponse, target: string) {
    expect(r.status, target).toBeLessThan(500);
    for (const s of SECRETS) expect(r.text.includes(s), `${target} served ${s}`).toBe(false);
    // A 200 is only ever a file of dist/client, byte for byte, or a generated answer (JSON, SVG).
    if (r.status === 200 && !/json|svg/.test(r.header('content-type') ?? '')) {
      expect(clientFiles.some((f) => f.equals(r.body)), `${target} served a file that is not in dist/client`).toBe(true);
    }
    if (r.status >= 300 && r.status < 400) expect(r.header('location'), target).toMatch(/^\/p\/[a-z0-9][a-z0-9_-]*$/);
  }

  test('static files and pages: no spelling of .. or / reaches outside dist/client', { timeout: 60_000 }, async () => {
    const all = ROUTES.flatMap((route) => payloads().flatMap((p) => TARGETS.map((t) => route + p + t)));
    // Thousands of combinations: a fixed sample of them keeps this quick; every route and dot form is in it.
    const sample = all.filter((_, i) => i % 23 === 0);
    const results = await inBatches(sample, 16, (t) => raw(t));
    for (const [i, r] of results.entries()) {
      expectNothingRead(r, sample[i]!);
      expect(r.status, sample[i]).not.toBe(200);
    }
  });

  test('absolute paths, NUL bytes, backslashes and absolute-form targets', async () => {
    const targets = [
      '/etc/passwd', '//etc/passwd', '/%2fetc%2fpasswd', `/${ROOT.slice(1)}/package.json`, `//${ROOT.slice(1)}/package.json`, `/p/${encodeURIComponent(path.join(ROOT, 'package.json'))}`,
      '/C:%5cWindows%5cwin.ini', '/p/..\\..\\package.json', '/\\..\\..\\package.json', '/%5c%2e%2e%5cpackage.json',
      '/p/alice%00', '/p/alice%00.html', '/favicon.svg%00', '/favicon.svg%00.html', '/index.html%00', '/api/v1/users/alice%00', '/%00/../package.json',
      '/p/alice.html', '/index.html', '/404.html', '/p/', '/media/', '/_astro', '/server/entry.mjs', '/server/site-index.json', '/dist/server/site-index.json',
      'http://localhost/../package.json', 'file:///etc/passwd', '*', 'http://127.0.0.1:1/etc/passwd',
    ];
    for (const t of targets) {
      const r = await raw(t);
      expectNothingRead(r, t);
      expect(r.status, t).not.toBe(200);
    }
  });

  test('/api/avatar?u= and /api/decoration?f= read only what the build declared', async () => {
    const names = [...payloads([1, 3, 8]).filter((_, i) => i % 5 === 0).flatMap((p) => TARGETS.map((t) => p + t)),
      '/etc/passwd', '%2fetc%2fpasswd', path.join(ROOT, 'package.json'), 'sakura.png%00', 'sakura.png%00.txt', '..%5csakura.png', 'SAKURA.PNG', './sakura.png',
      '%252e%252e%252fpackage.json', 'sakura.png/', 'sakura.png%2f..', '../decorations/sakura.png', '../avatars/alice.png', 'alice.png', 'sakura.yaml', '.', '..', '%2e'];
    const targets = names.flatMap((n) => [`/api/decoration?f=${n}`, `/api/avatar?u=${n}`]);
    const results = await inBatches(targets, 16, (t) => raw(t));
    for (const [i, r] of results.entries()) {
      const t = targets[i]!;
      expectNothingRead(r, t);
      expect([400, 404], t).toContain(r.status);
      expect(r.header('content-type'), t).toBe(API_JSON);
    }
  });
});

describe('prototype names are ordinary unknown users', () => {
  const NAMES = ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf', 'prototype', 'isPrototypeOf', '__defineGetter__', 'toLocaleString', 'propertyIsEnumerable'];
  const targets = NAMES.flatMap((n) => [
    `/api/v1/users/${n}`, `/api/v1/users?username=${n}`, `/api/v1/users?username=@${n}`, `/api/avatar?u=${n}`, `/api/decoration?f=${n}`,
    `/service-api/v1/creators?category=${n}`, `/service-api/v1/creators?sort=${n}`,
  ]);

  test('at the handler level: 404 or 400, never 200 or 5xx', async () => {
    for (const t of targets) {
      const r = await viaDispatch(t);
      if (t.includes('category=')) {
        expect(r.status, t).toBe(200);
        expect(CreatorsBodySchema.parse(JSON.parse(bodyText(r.body))).data, t).toEqual([]);
        continue;
      }
      expectApiAnswer(r.status, answerHeaders(r), bodyText(r.body), t);
      expect([400, 404], t).toContain(r.status);
    }
  });

  test('over HTTP, pages included; as parameter names they change nothing', { timeout: 120_000 }, async () => {
    await startServer();
    for (const t of [...targets.filter((x) => !x.includes('category=')), ...NAMES.map((n) => `/p/${n}`)]) {
      const r = await raw(t);
      expect([400, 404], t).toContain(r.status);
    }
    for (const n of NAMES) {
      const r = await raw(`/api/v1/users?${n}=x&username=alice&${n}[]=y`);
      expect(r.status, n).toBe(200);
      expect(UserBodySchema.parse(JSON.parse(r.text)).data.username).toBe('alice');
    }
  });
});

describe('no cache deception', () => {
  withServer();

  // An edge that caches by extension would keep a profile as `.css` or `.js` for everyone: none of
  // these may be a 200.
  const TARGETS = [
    '/api/v1/users/alice/x.css', '/api/v1/users/alice.css', '/api/v1/users/alice;x.css', '/api/v1/users/alice%2Fx.css', '/api/v1/users/alice%3Bx.css',
    '/api/v1/users/alice/.css', '/api/v1/users/ALICE/x.js', '/api/v1/users/alice%00.css', '/api/v1/users/alice/',
    '/p/alice/foo.js', '/p/alice.css', '/p/alice;x.css', '/p/alice%3Bx.css', '/p/alice%2Ffoo.js', '/p/ALICE/foo.js', '/p/alice.html', '/p/alice/.css', '/p/alice%00.css',
    '/api/avatar/x.css?u=alice', '/api/avatar.css?u=alice', '/api/avatar;x.css?u=alice', '/service-api/v1/creators/x.css', '/service-api/v1/creators.css', '/service-api/v1/creators;x.css',
    '/favicon.svg/x.css', '/index.css', '/openapi.json/x.css', '/docs/x.css', '/docs.css',
  ];

  // On main at 2f116ae an escaped slash was decoded before the file lookup: `/p%2Falice` was
  // alice's page, `/api/v1/users%2Falice` her answer (nginx's config refuses both).
  test('an escaped slash is no file\'s address: a JSON 404 under /api/, the 404 page elsewhere', async () => {
    for (const t of ['/api/v1/users%2Falice', '/api/v1/users%2falice', '/api%2Fv1%2Fusers%2Falice', '/p%2Falice', '/p%2falice', '/browse%2F1', '/docs%2F', '/media%2Favatars%2Falice.png', '/service-api%2Fv1%2Fcreators']) {
      const r = await viaDispatch(t);
      expect(r.status, t).toBe(404);
      if (isApi(t)) expect(ErrorBodySchema.parse(bodyJson(r)).error.code, t).toBe('NOT_FOUND');
      else expect(r.headers['content-type'], t).toBe(HTML);
    }
  });

  test('extra segments, extensions and ;params on any address are 404s or 400s', async () => {
    for (const t of TARGETS) {
      const r = await raw(t);
      expect([400, 404], t).toContain(r.status);
      if (isApi(t)) expect(r.header('content-type'), t).toBe(API_JSON);
    }
  });
});

describe('forwarded headers never reach an answer', () => {
  withServer();

  const HOSTILE = {
    host: 'evil-host.example',
    'x-forwarded-host': 'evil-xfh.example',
    'x-forwarded-proto': 'gopher',
    'x-forwarded-port': '6666',
    'x-forwarded-prefix': '/evil-prefix',
    forwarded: 'for=203.0.113.9;host=evil-fwd.example;proto=gopher',
    'x-host': 'evil-xhost.example',
    'x-original-url': '/api/v1/users/bob',
    'x-rewrite-url': '/api/v1/users/bob',
  };
  const MARKERS = ['evil', 'gopher', '6666', '203.0.113.9', 'x-original', '"bob"'];
  const ROUTES = [
    '/api/v1/users/alice', '/api/v1/users/ALICE', '/api/v1/users?username=@Alice', '/api/v1/users/nobody', '/api/v1/users?username=',
    '/service-api/v1/creators', '/service-api/v1/creators?limit=1', '/service-api/v1/creators?limit=1&sort=name',
    '/api/avatar?u=alice', '/api/avatar?u=bob', '/api/decoration?f=sakura.png', '/api/nope',
    '/', '/p/alice', '/p/ALICE', '/p/alice/', '/p/nobody', '/docs', '/openapi.json', '/nowhere', '/./api/v1/users/alice', '/x/../p/alice',
  ];
  /** An answer with the parts that legitimately change between two requests taken out. */
  const stable = (text: string) => text.replace(/"timestamp":"[^"]+"/g, '').replace(/"executionTimeMs":[\d.]+/g, '');

  test('Host, X-Forwarded-*, Forwarded and X-Original-URL change no body, link, Location or ETag', async () => {
    for (const route of ROUTES) {
      const plain = await raw(route);
      for (const method of ['GET', 'HEAD']) {
        const hostile = await raw(route, { method, headers: HOSTILE });
        expect(hostile.status, route).toBe(plain.status);
        expect(hostile.header('etag'), route).toBe(plain.header('etag'));
        expect(hostile.header('location'), route).toBe(plain.header('location'));
        const headerText = Object.entries(hostile.headers).map(([k, v]) => `${k}: ${v.join(', ')}`).join('\n');
        for (const m of MARKERS) expect(headerText.includes(m), `${method} ${route} header: ${m}`).toBe(false);
        if (method === 'GET') {
          expect(stable(hostile.text), route).toBe(stable(plain.text));
          for (const m of MARKERS.slice(0, 5)) expect(hostile.text.includes(m), `${route} body: ${m}`).toBe(false);
        }
      }
    }
  });

  test('every absolute address in an answer starts with SITE_URL or is the profile owner\'s own link', async () => {
    const own = new Set<string>();
    for (const u of index.users) {
      if (u.customDomain) own.add(`https://${u.customDomain}`);
      for (const s of u.socials) own.add(s.url);
    }
    for (const route of ROUTES) {
      const r = await raw(route, { headers: HOSTILE });
      const text = r.text.replace(/&quot;/g, '"').replace(/&#0?39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
      const urls = [...text.matchAll(/https?:\/\/[^\s"'<>\\)]+/g)].map((m) => m[0]);
      for (const url of urls) {
        const known = url.startsWith(`${TEST_SITE_URL}/`) || url === TEST_SITE_URL || own.has(url)
          || [...own].some((o) => url.startsWith(`${o}/`)) || /^https?:\/\/(www\.)?(w3\.org|schema\.org|json-schema\.org|spec\.openapis\.org)\b/.test(url);
        expect(known, `${route} links to ${url}`).toBe(true);
      }
      const location = r.header('location');
      if (location) expect(location.startsWith('/') && !location.startsWith('//') || location.startsWith(`${TEST_SITE_URL}/`), `${route} → ${location}`).toBe(true);
    }
  });
});

describe("the browser's rules", () => {
  withServer();

  // One address of every kind the server answers, with the kind of answer it is.
  const ROUTES = [
    '/', '/p/alice', '/p/carol', '/p/nobody', '/docs', '/nowhere', '/p/ALICE', '/openapi.json', '/favicon.svg',
    '/api/v1/users/alice', '/api/v1/users/ALICE', '/api/v1/users?username=bob', '/api/v1/users/nobody', '/api/nope', '/api/v1/users/%E0%A4%A',
    '/service-api/v1/creators', '/service-api/v1/creators?limit=1', '/api/avatar?u=alice', '/api/avatar?u=bob', '/api/decoration?f=sakura.png', '/./api/v1/users/alice',
  ];
  const cspDirectives = (csp: string) => new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([k, ...v]) => [k!.toLowerCase(), v]));

  test('nosniff everywhere; never credentials with CORS; never a cookie', async () => {
    const answers: [string, RawResponse][] = [];
    for (const route of ROUTES) {
      for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST']) answers.push([`${method} ${route}`, await raw(route, { method, headers: { origin: 'https://elsewhere.example', cookie: 'session=1', authorization: 'Bearer x' } })]);
    }
    answers.push(['unparseable', await rawExchange(base, Buffer.from('GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'))]);
    for (const [what, r] of answers) {
      expect(r.status, what).toBeLessThan(500);
      expectCommonHeaders(r.header, what);
    }
  });

  test('HTML: a CSP with scripts from the site only, frame-ancestors none, a Referrer-Policy; no script or handlers in the markup', async () => {
    let pages = 0;
    for (const route of ROUTES) {
      const r = await raw(route);
      if (!(r.header('content-type') ?? '').startsWith('text/html')) continue;
      pages++;
      const csp = cspDirectives(r.header('content-security-policy') ?? '');
      // The lookup box's script on static builds is a file of the site (public/lookup.js); nothing inline runs.
      expect(csp.get('script-src'), route).toEqual(["'self'"]);
      expect(csp.get('frame-ancestors'), route).toEqual(["'none'"]);
      expect(csp.get('base-uri') ?? csp.get('default-src'), route).toEqual(["'none'"]);
      expect(csp.get('object-src') ?? csp.get('default-src'), route).toEqual(["'none'"]);
      expect(r.header('x-frame-options'), route).toBe('DENY');
      expect(['no-referrer', 'same-origin', 'strict-origin', 'strict-origin-when-cross-origin'], route).toContain(r.header('referrer-policy'));
      // Only data blocks (JSON-LD) are <script> elements; a browser never runs them.
      for (const m of r.text.matchAll(/<script\b[^>]*>/gi)) expect(m[0], route).toMatch(/type="application\/ld\+json"/);
      expect(r.text, route).not.toMatch(/<[^>]*\son[a-z]+\s*=/i);
      expect(r.text, route).not.toMatch(/(href|src|action)\s*=\s*["']?\s*javascript:/i);
    }
    expect(pages).toBeGreaterThanOrEqual(6);
  });

  test('SVG, generated or static, is served with a CSP that forbids script, sandboxed', async () => {
    for (const route of ['/api/avatar?u=bob', '/api/avatar?u=erin_99', '/favicon.svg']) {
      const r = await raw(route);
      expect(r.status, route).toBe(200);
      expect(r.header('content-type'), route).toMatch(/^image\/svg\+xml/);
      const csp = cspDirectives(r.header('content-security-policy') ?? '');
      expect(csp.get('script-src') ?? csp.get('default-src'), route).toEqual(["'none'"]);
      expect(csp.has('sandbox'), route).toBe(true);
      expect(r.text, route).not.toMatch(/<script|<[^>]*\son[a-z]+\s*=|javascript:/i);
    }
  });
});

describe('failures', () => {
  test('an unexpected failure is a JSON 500 that no edge may keep', async () => {
    // A release whose lookup table is corrupt: the one way left to make the server fail. A server
    // of its own, on a copy of the build, that nothing has asked for the file yet: it is not in the
    // server's memory cache, whatever other tests ran before.
    const own = await ownBuild('hostile-failure');
    onTestFinished(() => own.stop());
    const file = path.join(own.dist, 'client', ...lookupFile('avatars', 'alice').split('/'));
    const bytes = fs.readFileSync(file);
    fs.writeFileSync(file, '{"alice": ');
    const r = await rawRequest(own.base, '/api/avatar?u=alice');
    expect(r.status).toBe(500);
    expect(r.header('cache-control')).toBe('no-store');
    expectCommonHeaders(r.header, 'the 500');
    ErrorBodySchema.parse(JSON.parse(r.text));
    fs.writeFileSync(file, bytes);
    // The failure stays with that request: the server goes on answering.
    expect((await rawRequest(own.base, '/api/avatar?u=bob')).status).toBe(200);
  });
});

/** Runs `fn` over `items` with at most `width` at once, keeping the order. */
async function inBatches<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  }));
  return out;
}
