// The API's inputs as schemas: the creators query parsed through CreatorsQuerySchema.
import { describe, expect, test } from 'vitest';
import { CreatorsQuerySchema, DEFAULT_LIMIT, MAX_LIMIT, parseQuery } from '../../src/schemas/queries.ts';

const parse = (query: string) => parseQuery(CreatorsQuerySchema, new URLSearchParams(query));

describe('the creators query', () => {
  test('defaults, and parameters not in the schema ignored', () => {
    expect(parse('utm_source=x&_=123')).toEqual({ ok: true, value: { limit: DEFAULT_LIMIT, sort: 'featured' } });
  });

  test('values come out typed: limit a number, category trimmed', () => {
    expect(parse(`limit=${MAX_LIMIT}&category=%20art%20&featured=false&sort=newest&cursor=abc`)).toEqual({
      ok: true, value: { limit: MAX_LIMIT, category: 'art', featured: 'false', sort: 'newest', cursor: 'abc' },
    });
  });

  test('a limit is digits only, 1 to MAX_LIMIT', () => {
    for (const bad of ['0', `${MAX_LIMIT + 1}`, '1e1', ' 5', '5.0', '-1', '0x10', '', 'ten']) {
      expect(parse(`limit=${encodeURIComponent(bad)}`), bad).toMatchObject({ ok: false, param: 'limit' });
    }
  });

  test('a category of only spaces, or longer than 64 characters before trimming, is refused', () => {
    expect(parse('category=%20%20')).toMatchObject({ ok: false, param: 'category' });
    expect(parse(`category=${'a'.repeat(64)}`)).toMatchObject({ ok: true });
    expect(parse(`category=${'a'.repeat(64)}%20`)).toMatchObject({ ok: false, param: 'category' });
  });

  test('a parameter given twice is refused by name, whatever its values', () => {
    expect(parse('sort=name&sort=name')).toEqual({ ok: false, param: 'sort', message: '`sort` is given 2 times: give it once' });
  });
});
