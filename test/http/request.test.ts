// Reading a request target: origin-form, absolute-form (RFC 9112 §3.2.2), queries and fragments.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { splitTarget } from '../../src/http/request.ts';

const split = (target: string) => {
  const r = splitTarget('get', target, () => undefined, 0);
  return { method: r.method, path: r.path, search: r.search };
};

describe('request targets', () => {
  test('origin-form: path and query, the fragment dropped, `//` kept as a path', () => {
    expect(split('/api/v1/users?username=alice#x')).toEqual({ method: 'GET', path: '/api/v1/users', search: 'username=alice' });
    expect(split('//evil.example/p/alice')).toEqual({ method: 'GET', path: '//evil.example/p/alice', search: '' });
  });

  test('absolute-form is the same request as its path; its host stands for Host (RFC 9112 §3.2.2)', () => {
    expect(split('http://elsewhere.example/api/v1/users/alice')).toEqual(split('/api/v1/users/alice'));
    expect(split('HTTPS://elsewhere.example:8443/p/alice?x=1')).toEqual(split('/p/alice?x=1'));
    expect(split('http://elsewhere.example')).toEqual(split('/'));
    expect(split('http://elsewhere.example?username=alice')).toEqual({ method: 'GET', path: '/', search: 'username=alice' });
    const authority = (target: string) => splitTarget('GET', target, () => 'host.header.example', 0).authority;
    expect(authority('http://elsewhere.example/p/alice')).toBe('elsewhere.example');
    expect(authority('HTTPS://user:pw@elsewhere.example:8443?x=1')).toBe('elsewhere.example:8443');
    expect(authority('http://[::1]:8080/')).toBe('[::1]:8080');
    expect(authority('/p/alice')).toBeUndefined();
  });

  test('anything else that is not a path stays as it is, and matches no route', () => {
    expect(split('*').path).toBe('*');
    expect(split('alice').path).toBe('alice');
  });

  test('dot segments are resolved as the WHATWG URL parser resolves them (what Workers and nginx see)', () => {
    expect(split('/x/../p/alice?u=1')).toEqual({ method: 'GET', path: '/p/alice', search: 'u=1' });
    expect(split('/x/%2E%2e/api/v1/users/alice').path).toBe('/api/v1/users/alice');
    // Never above the root; an encoded slash is no segment boundary.
    expect(split('/../../package.json').path).toBe('/package.json');
    expect(split('/p/..%2F..%2Fpackage.json').path).toBe('/p/..%2F..%2Fpackage.json');
    const segment = fc.constantFrom('.', '..', '%2e', '%2E', '.%2e', '%2e.', '%2e%2E', '...', '..a', 'a', 'p', '', '%2f', 'b.c');
    fc.assert(fc.property(fc.array(segment, { maxLength: 8 }), (segments) => {
      const path = `/${segments.join('/')}`;
      expect(split(path).path, path).toBe(new URL(`http://h${path}`).pathname);
    }), { numRuns: 2000 });
  });
});
