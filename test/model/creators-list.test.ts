// The creators directory as a list API: limit, cursors, filters, sorts, and 400s that say what is allowed.
import { describe, expect, test } from 'vitest';
import { answer } from '../../src/api/handler.ts';
import { prerenderedCreators } from '../../src/api/prerendered.ts';
import { IndexFiles } from '../../src/api/index-files.ts';
import { etagOf } from '../../src/http/response.ts';
import { loadContent } from '../../src/content/load.ts';
import { buildSiteIndex, columnsOf } from '../../src/model/site-index.ts';
import { CreatorsBodySchema, ErrorBodySchema } from '../../src/schemas/api.ts';
import type { Profile } from '../../src/schemas/index.ts';
import { BUILT_AT, FIXTURE, SITE_URL, bodyJson, request } from '../support/helpers.ts';

/** The fixture plus `extra` generated creators, to page through more than a handful. */
function siteWithCreators(extra: number) {
  const { content } = loadContent(FIXTURE);
  for (let i = 0; i < extra; i++) {
    const username = `gen${String(i).padStart(3, '0')}`;
    const profile: Profile = {
      displayName: `Gen ${i % 7}`, bio: '', createdAt: new Date(Date.UTC(2020, 0, 1 + (i * 37) % 900)).toISOString(),
      views: (i * 7919) % 50, badges: [], socials: [],
    };
    content.profiles.set(username, profile);
    content.creators.set(username, { category: ['art', 'music', 'code'][i % 3]!, featured: i % 11 === 0 });
  }
  const index = buildSiteIndex(content, { siteUrl: SITE_URL, builtAt: BUILT_AT });
  return { index, files: new IndexFiles(index, { avatars: '', decorations: '' }) };
}

const big = siteWithCreators(120);
type Fixture = ReturnType<typeof siteWithCreators>;
const page = async (site: Fixture, query: string) => {
  const r = await answer(request(`/service-api/v1/creators${query}`), site.files);
  expect(r.status, query).toBe(200);
  return CreatorsBodySchema.parse(bodyJson(r));
};
const bad = async (query: string) => {
  const r = await answer(request(`/service-api/v1/creators${query}`), big.files);
  expect(r.status, query).toBe(400);
  const body = ErrorBodySchema.parse(bodyJson(r));
  expect(body.error.code).toBe('INVALID_PARAMETER');
  return body.error.message;
};
/** Follows links.next from `first` to the end. */
async function walk(site: Fixture, first: string) {
  const seen: string[] = [];
  let body = await page(site, first);
  for (;;) {
    seen.push(...body.data.map((c) => c.username));
    if (!body.links.next) return { seen, last: body };
    body = await page(site, body.links.next.slice(`${SITE_URL}/service-api/v1/creators`.length));
  }
}

describe('creators list', () => {
  test('the default is the first 50, featured first, with total and links', async () => {
    const body = await page(big, '');
    expect(body.data).toHaveLength(50);
    expect(body.meta).toMatchObject({ total: 124, limit: 50 });
    expect(body.links.prev).toBeNull();
    expect(body.links.next).toMatch(/^https:\/\/profiles\.example\.net\/service-api\/v1\/creators\?limit=50&cursor=[\w-]+$/);
    expect(body.data.slice(0, 12).every((c) => c.featured)).toBe(true);
  });

  test('following next visits every creator once, in order, for every sort and limit', async () => {
    for (const sort of ['featured', 'views', 'newest', 'name']) {
      for (const limit of [1, 7, 50, 100]) {
        const all = (await page(big, `?sort=${sort}&limit=100`)).data.map((c) => c.username);
        const rest = (await walk(big, `?sort=${sort}&limit=100`)).seen;
        const { seen } = await walk(big, `?sort=${sort}&limit=${limit}`);
        expect(seen, `${sort}/${limit}`).toEqual(rest);
        expect(new Set(seen).size).toBe(124);
        expect(seen.slice(0, all.length)).toEqual(all);
      }
    }
  });

  test('prev goes back to the same page', async () => {
    const first = await page(big, '?limit=10&sort=name');
    const second = await page(big, first.links.next!.replace(/^.*creators/, ''));
    const back = await page(big, second.links.prev!.replace(/^.*creators/, ''));
    expect(back.data).toEqual(first.data);
    expect(back.links.prev).toBeNull();
  });

  test('sorts: views descending, newest first, name', async () => {
    const views = (await page(big, '?sort=views&limit=100')).data.map((c) => c.views);
    expect(views).toEqual([...views].sort((a, b) => b - a));
    const names = (await page(big, '?sort=name&limit=100')).data.map((c) => c.displayName);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base', numeric: true })));
    const small = siteWithCreators(0);
    expect((await page(small, '?sort=newest')).data.map((c) => c.username)).toEqual(['bob', 'kate', 'dave', 'alice']);
  });

  test('filters: category and featured, with total counting the matches', async () => {
    const art = await page(big, '?category=art&limit=100');
    expect(art.data.every((c) => c.category === 'art')).toBe(true);
    expect(art.meta.total).toBe(art.data.length);
    expect((await page(big, '?category=ART&limit=100')).data).toEqual(art.data);
    const featured = await page(big, '?featured=true&limit=100');
    expect(featured.data.every((c) => c.featured)).toBe(true);
    expect(featured.meta.total).toBe(12);
    const next = (await page(big, '?category=music&limit=5')).links.next!;
    expect(next).toContain('category=music');
    expect((await page(big, '?category=nothing')).data).toEqual([]);
  });

  test('a suspended creator is never listed', async () => {
    const { seen } = await walk(big, '?limit=100');
    expect(seen).not.toContain('carol');
  });

  test('invalid values are 400s that name the parameter and what is allowed', async () => {
    expect(await bad('?limit=0')).toMatchInlineSnapshot(`"\`limit\` must be a whole number from 1 to 100 (default 50)"`);
    expect(await bad('?limit=101')).toBe(await bad('?limit=abc'));
    expect(await bad('?sort=popular')).toMatchInlineSnapshot(`"\`sort\` must be one of \`featured\`, \`views\`, \`newest\`, \`name\` (default \`featured\`)"`);
    expect(await bad('?featured=yes')).toMatchInlineSnapshot(`"\`featured\` must be \`true\` or \`false\`"`);
    expect(await bad('?cursor=not-a-cursor')).toMatchInlineSnapshot(`"\`cursor\` is not a cursor from this API: use \`links.next\` or \`links.prev\` of a previous page as it is"`);
    expect(await bad('?limit=5&limit=6')).toMatchInlineSnapshot(`"\`limit\` is given 2 times: give it once"`);
    expect(await bad('?category=')).toMatchInlineSnapshot(`"\`category\` must be a category name of 1 to 64 characters, e.g. \`category=art\`"`);
    const cursor = new URL((await page(big, '?limit=5')).links.next!).searchParams.get('cursor');
    expect(await bad(`?sort=name&cursor=${cursor}`)).toMatchInlineSnapshot(`"\`cursor\` belongs to \`sort=featured\`: keep the sort of the page it came from"`);
  });

  test('unknown parameters are ignored', async () => {
    expect((await page(big, '?utm_source=x&_=123')).data).toEqual((await page(big, '')).data);
  });

  test('every page names its neighbours in a Link header too, the same addresses as links (RFC 8288)', async () => {
    let target = '?limit=30&sort=name';
    const seen: string[] = [];
    for (let pages = 0; target && pages < 10; pages++) {
      const r = await answer(request(`/service-api/v1/creators${target}`), big.files);
      const { links } = CreatorsBodySchema.parse(bodyJson(r));
      const expected = [links.next && `<${links.next}>; rel="next"`, links.prev && `<${links.prev}>; rel="prev"`].filter(Boolean);
      if (expected.length) expect(r.headers.link, target).toBe(expected.join(', '));
      else expect(r.headers.link, target).toBeUndefined();
      seen.push(...expected.map((e) => e!.slice(e!.indexOf('rel='))));
      target = links.next?.slice(`${SITE_URL}/service-api/v1/creators`.length) ?? '';
    }
    // The first page has only next, the middle ones both, the last only prev.
    expect(new Set(seen)).toEqual(new Set(['rel="next"', 'rel="prev"']));
  });

  test('one page with no neighbours has no Link header', async () => {
    const r = await answer(request('/service-api/v1/creators?limit=100&category=nothing-here'), big.files);
    expect(r.status).toBe(200);
    expect(r.headers.link).toBeUndefined();
  });

  test('the pre-rendered first page is the default answer with the same Link and a strong ETag of its bytes', async () => {
    const file = prerenderedCreators(columnsOf(big.index));
    const onDemand = await answer(request('/service-api/v1/creators'), big.files);
    expect(file.headers.link).toBe(onDemand.headers.link);
    expect(file.headers.link).toMatch(/^<https:\/\/profiles\.example\.net\/service-api\/v1\/creators\?limit=50&cursor=[\w-]+>; rel="next"$/);
    expect(file.headers.etag).toBe(etagOf(file.body!));
    const body = CreatorsBodySchema.parse(bodyJson(file));
    expect(body.meta).toMatchObject({ timestamp: big.index.builtAt, executionTimeMs: 0 });
    expect(body.data).toEqual(CreatorsBodySchema.parse(bodyJson(onDemand)).data);
  });
});
