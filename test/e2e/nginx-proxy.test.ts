// nginx as a caching proxy in front of the server, with the deploy recipe scripts/deploy/nginx.conf
// as written (its `# ADJUST` lines pointed at the shared build's server, a free port and temp
// paths): what nginx refuses itself, never asking the server, is still the server's kind of answer
// (JSON, CORS, request errors never stored); what the server answers passes unchanged. The cache's
// behaviour over time is `npm run check:edge`'s.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NGINX_MISSING, findNginx, startNginx, type RunningNginx } from '../../scripts/support/nginx.ts';
import { METHOD_NOT_ALLOWED_HEADERS, REQUEST_ERROR_HEADERS } from '../../src/http/headers.ts';
import { ErrorBodySchema } from '../../src/schemas/api.ts';
import { sharedBuild, workDir } from '../support/built-server.ts';
import { rawExchange, rawRequest, type RawResponse } from '../support/raw-http.ts';

const nginxBin = findNginx();
if (!nginxBin) console.warn(`nginx-proxy.test.ts: skipped: ${NGINX_MISSING}.`);

let nginx: RunningNginx | undefined;
beforeAll(async () => {
  if (!nginxBin) return;
  const work = workDir('nginx-proxy');
  const upstream = new URL(sharedBuild().base).host;
  nginx = await startNginx(nginxBin, 'nginx.conf', { dir: path.join(work, 'nginx'), adjust: { proxy_cache_path: (current) => current.replace(/^\S+/, `${work}/nginx/cache`), server: upstream } });
}, 60_000);
afterAll(async () => { await nginx?.stop(); });

/** The body an API client reads, and the headers of the policy it needs (names lowercase). */
function expectServerKind(r: RawResponse, status: number, code: string, policy: Readonly<Record<string, string>>, what: string) {
  expect(r.status, what).toBe(status);
  const body = JSON.parse(r.text) as { error: { code: string; message: string }; meta: { timestamp: string } };
  expect(ErrorBodySchema.safeParse(body).success, `${what}: ${r.text}`).toBe(true);
  expect(body.error.code, what).toBe(code);
  // nginx keeps the connection or not as it sees fit; the rest is the server's policy.
  const { connection: _, ...rest } = policy;
  expect(Object.fromEntries(Object.keys(rest).map((k) => [k, r.header(k)])), what).toEqual(rest);
  return body;
}

describe.skipIf(!nginxBin)('nginx in front of the server (scripts/deploy/nginx.conf)', () => {
  test('a request nginx cannot parse or hold is the server\'s JSON request error, with CORS, never stored', async () => {
    const base = nginx!.base;
    for (const [what, target, headers, status] of [
      ['broken percent-escape', '/api/v1/users/%zz', {}, 400],
      ['broken percent-escape on a page', '/p/%zz', {}, 400],
      ['a target past nginx\'s buffers', `/api/v1/users/${'a'.repeat(17_000)}`, {}, 414],
      ['a header line past nginx\'s buffers', '/api/v1/users/alice', { cookie: 'c'.repeat(17_000) }, 431],
    ] as const) {
      expectServerKind(await rawRequest(base, target, { headers }), status, 'BAD_REQUEST', REQUEST_ERROR_HEADERS, what);
    }
    // A method nginx cannot parse (lowercase) is a request it refuses: the same answer.
    const lower = await rawExchange(base, Buffer.from('get /api/v1/users/alice HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'));
    expectServerKind(lower, 400, 'BAD_REQUEST', REQUEST_ERROR_HEADERS, 'lowercase method');
  });

  test('what the server\'s limits allow reaches the server: its answers, not nginx\'s', async () => {
    const base = nginx!.base;
    // Within 8 KiB of target: the server's own 400 for the name, as without nginx.
    const long = await rawRequest(base, `/api/v1/users/${'a'.repeat(8_170)}`);
    expect([long.status, JSON.parse(long.text).error.code]).toEqual([400, 'INVALID_USERNAME']);
    // Past 8 KiB but within nginx's buffers: the server's 414, in its words.
    const direct = await rawRequest(sharedBuild().base, `/api/v1/users/${'a'.repeat(9_000)}`);
    const proxied = await rawRequest(base, `/api/v1/users/${'a'.repeat(9_000)}`);
    expect([proxied.status, JSON.parse(proxied.text).error]).toEqual([414, JSON.parse(direct.text).error]);
    // A 15 KB cookie is within the server's 16 KiB of headers: the profile.
    const cookie = await rawRequest(base, '/api/v1/users/alice', { headers: { cookie: 'c'.repeat(15_000) } });
    expect([cookie.status, JSON.parse(cookie.text).data.username]).toEqual([200, 'alice']);
  });

  test('TRACE, which nginx refuses itself, is the 405 the server gives, naming the method', async () => {
    const r = await rawRequest(nginx!.base, '/api/v1/users/alice', { method: 'TRACE' });
    const server = await rawRequest(sharedBuild().base, '/api/v1/users/alice', { method: 'TRACE' });
    const body = expectServerKind(r, 405, 'METHOD_NOT_ALLOWED', { ...METHOD_NOT_ALLOWED_HEADERS, 'cache-control': server.header('cache-control')! }, 'TRACE');
    expect(body.error.message).toBe(JSON.parse(server.text).error.message);
    expect(r.header('allow')).toBe(server.header('allow'));
  });
});
