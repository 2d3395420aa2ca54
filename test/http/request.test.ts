// Reading a request target: origin-form, absolute-form (RFC 9112 §3.2.2), queries and fragments.
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

  test('absolute-form is the same request as its path; the host in it is ignored', () => {
    expect(split('http://elsewhere.example/api/v1/users/alice')).toEqual(split('/api/v1/users/alice'));
    expect(split('HTTPS://elsewhere.example:8443/p/alice?x=1')).toEqual(split('/p/alice?x=1'));
    expect(split('http://elsewhere.example')).toEqual(split('/'));
    expect(split('http://elsewhere.example?username=alice')).toEqual({ method: 'GET', path: '/', search: 'username=alice' });
  });

  test('anything else that is not a path stays as it is, and matches no route', () => {
    expect(split('*').path).toBe('*');
    expect(split('alice').path).toBe('alice');
  });
});
