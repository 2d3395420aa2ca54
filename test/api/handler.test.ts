// The on-demand API, called as the server calls it: lookup and case folding, errors, headers,
// methods, conditional GET, avatars and decorations.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { LOOKUP_INPUT, LOOKUP_PROBLEM, answer } from '../../src/api/handler.ts';
import type { ReleaseFiles } from '../../src/api/release-files.ts';
import { CACHE_CONTROL, HTML_CSP } from '../../src/http/headers.ts';
import { CreatorsBodySchema, ErrorBodySchema, UserBodySchema } from '../../src/schemas/api.ts';
import { MAX_QUERY_USERNAME_LENGTH } from '../../src/schemas/queries.ts';
import { FIXTURE, PRIVATE_MARKERS, bodyJson, bodyText, fixtureSite, request } from '../support/helpers.ts';

const { files, index } = fixtureSite();
const get = (target: string, init?: Parameters<typeof request>[1]) => answer(request(target, init), files);
const dataOf = (name: string) => index.users.find((u) => u.username === name);

async function ok(target: string) {
  const r = await get(target);
  expect(r.status, target).toBe(200);
  return UserBodySchema.parse(bodyJson(r));
}
async function fails(target: string, status: number, code: string) {
  const r = await get(target);
  expect(r.status, target).toBe(status);
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = ErrorBodySchema.parse(bodyJson(r));
  expect(body.error.code, target).toBe(code);
  return body;
}

describe('lookup by path', () => {
  test('any ASCII casing finds the profile, with the data of the build', async () => {
    for (const p of ['/api/v1/users/alice', '/api/v1/users/ALICE', '/api/v1/users/aLiCe', '/api/v1/users/%41lice']) {
      expect((await ok(p)).data).toEqual(dataOf('alice'));
    }
    expect((await ok('/api/v1/users/ERIN_99')).data.username).toBe('erin_99');
  });

  test('a suspended profile is 200 with banInfo', async () => {
    const { data } = await ok('/api/v1/users/carol');
    expect(data.status).toBe('suspended');
    expect(data.banInfo.isBanned).toBe(true);
  });

  test('an unknown username is a JSON 404', async () => {
    const body = await fails('/api/v1/users/nobody', 404, 'USER_NOT_FOUND');
    expect(body.error.message).toBe('No user is called `nobody`.');
    expect(body.meta.version).toBe('v1');
  });

  test('case folding is ASCII only: the Kelvin sign does not find kate', async () => {
    expect((await ok('/api/v1/users/kate')).data.username).toBe('kate');
    await fails('/api/v1/users/%E2%84%AAate', 400, 'INVALID_USERNAME');
    await fails('/api/v1/users?username=%E2%84%AAate', 400, 'INVALID_USERNAME');
    // Other Unicode that lowercases to ASCII, e.g. the dotted capital I (U+0130).
    await fails('/api/v1/users/al%C4%B0ce', 400, 'INVALID_USERNAME');
  });

  test('@ is not accepted in the path', async () => {
    const body = await fails('/api/v1/users/@alice', 400, 'INVALID_USERNAME');
    expect(body.error.message).toMatchInlineSnapshot(`"\`@\` is not part of a username: use /api/v1/users/alice, or the query form /api/v1/users?username=@alice."`);
    await fails('/api/v1/users/%40alice', 400, 'INVALID_USERNAME');
  });

  test('malformed, empty and overlong names are 400s', async () => {
    await fails('/api/v1/users/', 400, 'MISSING_USERNAME');
    await fails('/api/v1/users/%E0%A4%A', 400, 'INVALID_USERNAME');
    await fails('/api/v1/users/bob.json', 400, 'INVALID_USERNAME');
    await fails(`/api/v1/users/${'a'.repeat(33)}`, 400, 'INVALID_USERNAME');
    await fails('/api/v1/users/%00alice', 400, 'INVALID_USERNAME');
    await fails('/api/v1/users/..%2F..%2Fpackage.json', 400, 'INVALID_USERNAME');
  });

  test('extra path segments are not a profile (no cache deception)', async () => {
    await fails('/api/v1/users/alice/x.css', 404, 'NOT_FOUND');
    await fails('/api/v1/users/alice/', 404, 'NOT_FOUND');
  });

  test('__proto__ and constructor are ordinary unknown users', async () => {
    await fails('/api/v1/users/constructor', 404, 'USER_NOT_FOUND');
    await fails('/api/v1/users?username=constructor', 404, 'USER_NOT_FOUND');
    await fails('/api/v1/users/__proto__', 400, 'INVALID_USERNAME');
  });
});

describe('lookup by query', () => {
  test('trims spaces, strips one leading @, folds case', async () => {
    for (const q of ['alice', 'ALICE', '@alice', '%20%40Alice%20', '+@alice+']) {
      expect((await ok(`/api/v1/users?username=${q}`)).data).toEqual(dataOf('alice'));
    }
  });

  test('missing, empty and malformed usernames are 400s with a message', async () => {
    expect((await fails('/api/v1/users', 400, 'MISSING_USERNAME')).error.message).toMatchInlineSnapshot(`"The \`username\` query parameter is required, e.g. ?username=alice."`);
    await fails('/api/v1/users?username=', 400, 'MISSING_USERNAME');
    expect((await fails('/api/v1/users/?username=alice', 400, 'MISSING_USERNAME')).error.message).toMatchInlineSnapshot(`"A username is required. Put it in the path (\`/api/v1/users/alice\`) or the query with no \`/\` before \`?\` (\`/api/v1/users?username=alice\`)."`);
    await fails('/api/v1/users?username=%20%40%20', 400, 'MISSING_USERNAME');
    await fails('/api/v1/users?username=@@alice', 400, 'INVALID_USERNAME');
    await fails('/api/v1/users?username=al%20ice', 400, 'INVALID_USERNAME');
    await fails('/api/v1/users?username=%ZZ', 400, 'INVALID_USERNAME');
    expect((await fails('/api/v1/users?username=alice&username=bob', 400, 'INVALID_PARAMETER')).error.message).toMatchInlineSnapshot(`"Give \`username\` once; it was given 2 times."`);
    // The bound the OpenAPI gives (UsernameQuerySchema), counted before trimming: at it a name, past it a 400.
    expect((await ok(`/api/v1/users?username=${'%20'.repeat(MAX_QUERY_USERNAME_LENGTH - 5)}alice`)).data.username).toBe('alice');
    for (const target of [`/api/v1/users?username=${'%20'.repeat(MAX_QUERY_USERNAME_LENGTH - 4)}alice`, `/api/avatar?u=${'a'.repeat(MAX_QUERY_USERNAME_LENGTH + 1)}`]) {
      expect((await fails(target, 400, 'INVALID_PARAMETER')).error.message).toMatch(new RegExp(`is longer than ${MAX_QUERY_USERNAME_LENGTH} characters`));
    }
    // Characters as JSON Schema's maxLength counts them, code points: 101 emoji are 101, not the
    // 202 UTF-16 units of JavaScript's length, so no name, but not too long either.
    const fox = encodeURIComponent('\u{1F98A}');
    await fails(`/api/v1/users?username=${fox.repeat(101)}`, 400, 'INVALID_USERNAME');
    await fails(`/api/v1/users?username=${fox.repeat(MAX_QUERY_USERNAME_LENGTH + 1)}`, 400, 'INVALID_PARAMETER');
  });

  test('unknown is 404, other parameters are ignored', async () => {
    await fails('/api/v1/users?username=nobody', 404, 'USER_NOT_FOUND');
    expect((await ok('/api/v1/users?username=bob&utm_source=x')).data.username).toBe('bob');
  });

  test('meta is fresh on each on-demand answer', async () => {
    // A clock the test moves (Date only): no waiting on the wall clock.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-03-01T10:00:00.000Z') });
    try {
      const before = Date.now();
      const { meta } = await ok('/api/v1/users?username=bob');
      expect(Date.parse(meta.timestamp)).toBeGreaterThanOrEqual(before - 1);
      expect(meta.executionTimeMs).toBeGreaterThanOrEqual(0);
      // Made once per millisecond (nowIso), but never stale: a later answer has a later time.
      vi.advanceTimersByTime(5);
      const later = (await ok('/api/v1/users?username=bob')).meta.timestamp;
      expect(Date.parse(later)).toBeGreaterThan(Date.parse(meta.timestamp));
      expect(Date.parse(later)).toBeLessThanOrEqual(Date.now());
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the lookup box (GET /lookup?u=)', () => {
  // The pages a build writes, beside the index's files: one profile page, the 404 and lookup pages.
  const LOOKUP = `<h1>Find a profile</h1>${LOOKUP_PROBLEM}<form><input ${LOOKUP_INPUT} name="u"></form>`;
  const pages: Record<string, string> = { 'p/alice.html': '<h1>alice</h1>', '404.html': '<h1>Not found</h1>', 'lookup.html': LOOKUP };
  /** The lookup page as the handler fills it in. */
  const filled = (typed: string, message: string) => `<h1>Find a profile</h1><p class="lookup-problem" role="alert">${message}</p><form><input ${LOOKUP_INPUT} value="${typed}" name="u"></form>`;
  const withPages: ReleaseFiles = { read: (file) => (file in pages ? Buffer.from(pages[file]!) : files.read(file)) };
  const look = (target: string) => answer(request(target), withPages);

  test('a name as typed (spaces, one @, any casing) is a 302 to its page, cached briefly', async () => {
    for (const q of ['alice', 'ALICE', '%20@Alice%20', '@alice']) {
      const r = await look(`/lookup?u=${q}`);
      expect({ status: r.status, location: r.headers.location, body: r.body }, q).toEqual({ status: 302, location: '/p/alice', body: null });
      expect(r.headers['cache-control']).toBe(CACHE_CONTROL);
    }
  });

  test('a valid name with no profile is the lookup page with a 404 that names it, the name back in the box', async () => {
    const r = await look('/lookup?u=%20Nobody');
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(bodyText(r.body)).toBe(filled('Nobody', 'There is no profile called “nobody”.'));
  });

  test('no, an empty, a twice-given or an invalid name in a query is the lookup page with a 400 that says so, what was typed in the box', async () => {
    for (const [target, typed, message] of [
      ['/lookup?v=alice', '', 'Type a username to find its profile.'], ['/lookup?u=', '', 'Type a username to find its profile.'],
      ['/lookup?u=%20%20', '', 'Type a username to find its profile.'], ['/lookup?u=alice&u=bob', '', 'Type a username to find its profile.'],
      ['/lookup?u=@', '@', '“@” is not a username.'], ['/lookup?u=al%20ice', 'al ice', '“al ice” is not a username.'],
      // What was typed is text, never markup; and shown at most 64 characters long.
      ['/lookup?u=%3Cb%3E%22x', '&lt;b&gt;&quot;x', '“&lt;b&gt;&quot;x” is not a username.'],
      [`/lookup?u=${'a'.repeat(100)}`, `${'a'.repeat(64)}…`, `“${'a'.repeat(64)}…” is not a username.`],
    ]) {
      const r = await look(target!);
      expect(r.status, target).toBe(400);
      expect(r.headers['content-type'], target).toBe('text/html; charset=utf-8');
      expect(r.headers['content-security-policy'], target).toBe(HTML_CSP);
      expect(bodyText(r.body), target).toBe(filled(typed!, message!));
    }
  });

  test('with no query, /lookup is the lookup page itself (200), as a static host serves it', async () => {
    const r = await look('/lookup');
    expect(r.status).toBe(200);
    expect(bodyText(r.body)).toBe(LOOKUP);
  });

  test('HEAD is answered as GET, without a body', async () => {
    const r = await answer(request('/lookup?u=alice', { method: 'HEAD' }), withPages);
    expect({ status: r.status, location: r.headers.location }).toEqual({ status: 302, location: '/p/alice' });
  });
});

describe('headers, methods and caching', () => {
  const targets = ['/api/v1/users/ALICE', '/api/v1/users?username=bob', '/api/v1/users/nobody', '/api/v1/users?username=', '/service-api/v1/creators', '/api/avatar?u=bob', '/api/decoration?f=sakura.png', '/api/nope'];

  test('every answer has open CORS, edge caching and nosniff', async () => {
    for (const t of targets) {
      const { headers } = await get(t);
      expect(headers['access-control-allow-origin'], t).toBe('*');
      expect(headers['cache-control'], t).toBe('public, max-age=30, s-maxage=30, stale-while-revalidate=60');
      expect(headers['x-content-type-options'], t).toBe('nosniff');
      expect(headers['access-control-allow-credentials'], t).toBeUndefined();
      expect(headers['set-cookie'], t).toBeUndefined();
      // Only a file's answer varies, by Accept-Encoding (its compressed siblings); answers made in memory never do.
      expect(headers.vary, t).toBe(t === '/service-api/v1/creators' ? 'Accept-Encoding' : undefined);
    }
  });

  test('ETag and If-None-Match give 304 without a body', async () => {
    for (const t of ['/api/v1/users?username=alice', '/api/v1/users/ALICE', '/service-api/v1/creators', '/api/avatar?u=alice']) {
      const first = await get(t);
      const etag = first.headers.etag!;
      expect(etag, t).toMatch(/^(W\/)?"[\w-]+"$/);
      const again = await get(t, { headers: { 'if-none-match': etag } });
      expect(again.status, t).toBe(304);
      expect(again.body).toBeNull();
      expect((await get(t, { headers: { 'if-none-match': '"other", ' + etag.replace(/^W\//, '') } })).status).toBe(304);
      expect((await get(t, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    }
  });

  // The handler keeps what it works out of a file (ETags, headers) on the bytes object a caching
  // reader returns again; bytes that take no property are remembered beside them instead.
  test('a file\'s answer is the same from bytes kept, read anew, or that take no property', async () => {
    const kept = new Map<string, Uint8Array>();
    const readers: Record<string, ReleaseFiles> = {
      kept: { read: async (file) => { const bytes = await files.read(file); if (bytes && !kept.has(file)) kept.set(file, bytes); return bytes && kept.get(file); } },
      anew: { read: async (file) => { const bytes = await files.read(file); return bytes && Buffer.from(bytes); } },
      sealed: { read: async (file) => { const bytes = await files.read(file); return bytes && Object.preventExtensions(Buffer.from(bytes)); } },
    };
    for (const t of ['/api/v1/users/alice', '/api/v1/users?username=alice', '/service-api/v1/creators']) {
      for (const encoding of [undefined, 'br', 'gzip']) {
        const init = encoding ? { headers: { 'accept-encoding': encoding } } : undefined;
        const expected = await answer(request(t, init), readers.anew!);
        for (const [name, reader] of Object.entries(readers)) {
          for (let k = 0; k < 2; k++) {
            const r = await answer(request(t, init), reader);
            const label = `${t} ${encoding ?? 'identity'} ${name} #${k}`;
            expect(r.status, label).toBe(200);
            expect(r.headers.etag, label).toBe(expected.headers.etag);
            expect(r.headers['content-encoding'], label).toBe(expected.headers['content-encoding']);
            // The query form is made on demand (its meta has the time): the file's answers are its bytes.
            if (t.includes('?')) continue;
            expect(r.headers['content-length'], label).toBe(expected.headers['content-length']);
            expect(Buffer.from(r.body as Uint8Array).equals(Buffer.from(expected.body as Uint8Array)), label).toBe(true);
          }
        }
      }
    }
    // Nothing of the memo shows in the bytes' own keys.
    expect(kept.size).toBeGreaterThan(0);
    for (const bytes of kept.values()) expect(Object.keys(bytes).length).toBe(bytes.length);
  });

  test('the same data keeps the same ETag across requests', async () => {
    const a = await get('/api/v1/users?username=alice');
    const b = await get('/api/v1/users/Alice');
    expect(a.headers.etag).toBe(b.headers.etag);
  });

  test('HEAD answers like GET without a body', async () => {
    // Arrived "later" than now: executionTimeMs is 0 in both, so the two answers have one length
    // (otherwise 0.012 and 0.1 ms differ by a digit and the test flickers).
    const atZeroMs = (method: string) => answer(request('/api/v1/users?username=alice', { method, startedAt: Infinity }), files);
    const head = await atZeroMs('HEAD');
    const full = await atZeroMs('GET');
    expect(bodyJson(full).meta.executionTimeMs).toBe(0);
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(bodyText(full.body)));
    expect((await get('/api/v1/users/nobody', { method: 'HEAD' })).status).toBe(404);
  });

  test('OPTIONS preflight is 204 and names Authorization', async () => {
    const r = await get('/api/v1/users/alice', { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-headers': 'authorization' } });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect(r.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
    expect(r.headers['access-control-allow-headers']).toBe('Authorization, *');
    expect(r.headers['access-control-allow-origin']).toBe('*');
  });

  test('other methods are a JSON 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'TRACE', 'FOO']) {
      const r = await get('/api/v1/users/alice', { method });
      expect(r.status, method).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD, OPTIONS');
      expect(ErrorBodySchema.parse(bodyJson(r)).error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  test('Authorization, API-key and cookie headers change nothing', async () => {
    const headers = { authorization: 'Bearer x', 'x-api-key': 'k', cookie: 'session=1' };
    for (const t of ['/api/v1/users?username=alice', '/api/v1/users/nobody']) {
      const plain = await get(t);
      const authed = await get(t, { headers });
      expect(authed.status).toBe(plain.status);
      expect(bodyJson(authed).data).toEqual(bodyJson(plain).data);
      expect(authed.headers.etag).toBe(plain.headers.etag);
    }
  });

  test('unknown API routes are JSON 404s', async () => {
    for (const t of ['/api/nope', '/api/v2/users/alice', '/service-api/v1/nope', '/api', '/api/v1/users/alice/extra']) {
      await fails(t, 404, 'NOT_FOUND');
    }
  });
});

describe('creators', () => {
  test('the list with meta.total', async () => {
    const r = await get('/service-api/v1/creators');
    const body = CreatorsBodySchema.parse(bodyJson(r));
    expect(body.data).toEqual(index.creators);
    expect(body.data.map((c) => c.username)).not.toContain('carol');
    expect(body.meta.total).toBe(4);
  });
});

describe('avatars and decorations', () => {
  test('an avatar is the file with its type, in any casing', async () => {
    for (const t of ['/api/avatar?u=alice', '/api/avatar?u=ALICE', '/api/avatar?u=@alice']) {
      const r = await get(t);
      expect(r.status, t).toBe(200);
      expect(r.headers['content-type']).toBe('image/png');
      expect(Buffer.compare(Buffer.from(r.body as Uint8Array), fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png')))).toBe(0);
    }
  });

  test('a profile without avatar gets a generated image that cannot run script', async () => {
    const r = await get('/api/avatar?u=bob');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(r.headers['content-security-policy']).toContain("default-src 'none'");
    expect(bodyText(r.body)).toMatch(/^<svg [^>]*>.*>B<\/text><\/svg>$/);
    expect(bodyText((await get('/api/avatar?u=erin_99')).body)).toContain('>Ｅ</text>');
  });

  test('an unknown user or a bad name is JSON', async () => {
    await fails('/api/avatar?u=nobody', 404, 'USER_NOT_FOUND');
    await fails('/api/avatar', 400, 'MISSING_USERNAME');
    await fails('/api/avatar?u=../../package.json', 400, 'INVALID_USERNAME');
  });

  test('only declared decoration files are served; nothing outside the folder', async () => {
    const r = await get('/api/decoration?f=sakura.png');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('image/png');
    expect(Buffer.compare(Buffer.from(r.body as Uint8Array), fs.readFileSync(path.join(FIXTURE, 'decorations', 'sakura.png')))).toBe(0);
    for (const f of ['nope.png', 'sakura.yaml', '..%2F..%2Fpackage.json', '%2Fetc%2Fpasswd', 'SAKURA.PNG', 'sakura.png%00', '..%5Cpackage.json']) {
      await fails(`/api/decoration?f=${f}`, 404, 'DECORATION_NOT_FOUND');
    }
    // No name says it is required; two say so, not that one is missing.
    for (const target of ['/api/decoration', '/api/decoration?f=', '/api/decoration?x=sakura.png']) {
      expect((await fails(target, 400, 'INVALID_PARAMETER')).error.message, target).toBe('The `f` query parameter is required: a decoration file name, e.g. ?f=sakura.png.');
    }
    expect((await fails('/api/decoration?f=sakura.png&f=sakura.png', 400, 'INVALID_PARAMETER')).error.message).toBe('Give `f` once; it was given 2 times.');
  });
});

test('no private data in any answer', async () => {
  const targets = ['/api/v1/users/alice', '/api/v1/users?username=alice', '/api/v1/users/frank', '/service-api/v1/creators', '/api/avatar?u=frank'];
  for (const t of targets) {
    const text = bodyText((await get(t)).body);
    for (const m of PRIVATE_MARKERS) expect(text).not.toContain(m);
  }
});
