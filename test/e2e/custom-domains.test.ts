// Custom domains: a request whose Host is a profile's `customDomain` gets that profile's page at `/`;
// every other address on that host, and every address in an answer, stays as on any host.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { etagOf } from '../../src/http/response.ts';
import { sharedBuild } from '../support/built-server.ts';
import { rawRequest } from '../support/raw-http.ts';
import { readServedFile } from '../support/helpers.ts';

const service = sharedBuild();
const file = (rel: string) => readServedFile(path.join(service.dist, 'client', rel));

describe('a profile on its own domain', () => {
  test('`/` on the custom domain is the profile page, byte for byte, with the page headers', async () => {
    const page = file('p/alice.html');
    for (const host of ['alice.example.com', 'ALICE.Example.COM', 'alice.example.com:443', 'alice.example.com.']) {
      const r = await rawRequest(service.base, '/', { headers: { host } });
      expect(r.status, host).toBe(200);
      expect(r.body.equals(page), host).toBe(true);
      expect(r.header('content-type'), host).toBe('text/html; charset=utf-8');
      expect(r.header('content-security-policy'), host).toMatch(/default-src 'none'/);
      expect(r.header('etag'), host).toBe(etagOf(page));
      expect(r.header('access-control-allow-origin'), host).toBe('*');
    }
  });

  test('an absolute-form target\'s host stands for Host (RFC 9112 §3.2.2): the page of its domain, or the home page', async () => {
    const [page, home] = [file('p/alice.html'), file('index.html')];
    for (const [target, host, body] of [['http://alice.example.com/', 'localhost', page], ['http://localhost/', 'alice.example.com', home], ['http://Alice.Example.com:80', 'bob.example', page]] as const) {
      const r = await rawRequest(service.base, target, { headers: { host } });
      expect(r.status, target).toBe(200);
      expect(r.body.equals(body), `${target} with Host ${host}`).toBe(true);
    }
  });

  test('HEAD and a conditional GET behave as for any page', async () => {
    const head = await rawRequest(service.base, '/', { method: 'HEAD', headers: { host: 'alice.example.com' } });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.header('content-length')).toBe(String(file('p/alice.html').length));
    const again = await rawRequest(service.base, '/', { headers: { host: 'alice.example.com', 'if-none-match': head.header('etag')! } });
    expect(again.status).toBe(304);
  });

  test('any other host, or a host that is not a host name, gets the home page', async () => {
    const home = file('index.html');
    for (const host of ['localhost', 'profiles.example.net', 'bob.example.com', 'example.com', 'alice.example.com.evil.test', '[::1]:8080', 'constructor', '__proto__']) {
      const r = await rawRequest(service.base, '/', { headers: { host } });
      expect(r.status, host).toBe(200);
      expect(r.body.equals(home), host).toBe(true);
    }
  });

  test('only `/`: the API, pages and files on the custom domain are the same as anywhere', async () => {
    for (const p of ['/api/v1/users/bob', '/p/bob', '/favicon.svg']) {
      const plain = await rawRequest(service.base, p);
      const onDomain = await rawRequest(service.base, p, { headers: { host: 'alice.example.com' } });
      expect(onDomain.status, p).toBe(200);
      expect(onDomain.body.equals(plain.body), p).toBe(true);
    }
    const missing = await rawRequest(service.base, '/nothing-here', { headers: { host: 'alice.example.com' } });
    expect(missing.status).toBe(404);
  });

  test('addresses in answers come from SITE_URL, never from Host', async () => {
    const r = await rawRequest(service.base, '/api/v1/users?username=alice', { headers: { host: 'alice.example.com' } });
    const { data } = JSON.parse(r.text) as { data: { avatarUrl: string; pageUrl: string } };
    expect(data.avatarUrl).toBe('https://profiles.example.net/api/avatar?u=alice');
    expect(data.pageUrl).toBe('https://alice.example.com');
  });

  test('the lookup files are the handler\'s, never served', async () => {
    const client = path.join(service.dist, 'client');
    const lookups = fs.readdirSync(path.join(client, '_lookup'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(lookups.length).toBeGreaterThan(2);
    for (const e of lookups) {
      const address = `/${path.relative(client, path.join(e.parentPath, e.name)).split(path.sep).join('/')}`;
      expect((await rawRequest(service.base, address)).status, address).toBe(404);
    }
  });
});
