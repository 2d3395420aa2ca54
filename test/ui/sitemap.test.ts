import { describe, expect, test } from 'vitest';
import type { PublicUser } from '../../src/schemas/api.ts';
import { SITEMAP_MAX_URLS, SITEMAP_SIZES, changedSitemapFiles, robotsTxt, siteSitemap, sitemapEntries, sitemapFiles, sitemapXml } from '../../src/ui/sitemap.ts';
import { fixtureSite, SITE_URL } from '../support/helpers.ts';

const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!);

/** A synthetic profile: only what the sitemap reads. */
const user = (username: string, over: Partial<PublicUser> = {}) => ({ username, status: 'active', hasCustomDomain: false, ...over }) as PublicUser;

describe('sitemap', () => {
  test('lists the home page and each active profile on this host; not suspended or custom-domain ones', () => {
    const { index } = fixtureSite();
    expect(sitemapEntries(index.users)).toEqual(['', 'bob', 'dave', 'erin_99', 'kate']);
    expect(locs(sitemapFiles(SITE_URL, sitemapEntries(index.users))[0]!.xml)).toEqual([
      `${SITE_URL}/`, `${SITE_URL}/p/bob`, `${SITE_URL}/p/dave`, `${SITE_URL}/p/erin_99`, `${SITE_URL}/p/kate`,
    ]);
    const leftOut = index.users.filter((u) => u.status === 'suspended' || u.hasCustomDomain).map((u) => u.username).sort();
    expect(leftOut).toEqual(['alice', 'carol', 'frank']);
  });

  test('up to 50,000 addresses: one sitemap file, no lastmod', () => {
    const entries = ['', ...Array.from({ length: SITEMAP_MAX_URLS - 1 }, (_, i) => `u${i}`)];
    const urls = [`${SITE_URL}/`, ...entries.slice(1).map((e) => `${SITE_URL}/p/${e}`)];
    const files = sitemapFiles(SITE_URL, entries);
    expect(files.map((f) => f.path)).toEqual(['/sitemap.xml']);
    expect(files[0]!.xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">\n/);
    expect(locs(files[0]!.xml)).toEqual(urls);
    expect(files[0]!.xml).not.toContain('lastmod');
  });

  test('100,000 profiles: a sitemap index naming files of 25,000 to 50,000 addresses each', () => {
    const users = Array.from({ length: 100_000 }, (_, i) => user(`user${i}`));
    const [index, ...parts] = siteSitemap(columnsOf(users)).map((p) => ({ path: p.path, xml: sitemapXml(SITE_URL, p) }));
    expect(index!.path).toBe('/sitemap.xml');
    expect(index!.xml).toContain('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(parts.length).toBeLessThanOrEqual(4);
    expect(parts.map((p) => p.path)).toEqual(parts.map((_, k) => `/sitemap-${k + 1}.xml`));
    expect(locs(index!.xml)).toEqual(parts.map((p) => `${SITE_URL}${p.path}`));
    const perPart = parts.map((p) => locs(p.xml));
    for (const l of perPart.slice(0, -1)) expect(l.length).toBeGreaterThanOrEqual(SITEMAP_SIZES.min);
    for (const l of perPart) expect(l.length).toBeLessThanOrEqual(SITEMAP_MAX_URLS);
    // Every address exactly once, in order, the home page first.
    expect(perPart.flat()).toEqual([`${SITE_URL}/`, ...users.map((u) => `${SITE_URL}/p/${u.username}`)]);
    for (const p of parts) expect(p.xml).toContain('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
  });

  test('a profile added, removed or suspended changes the file it is in (rarely the next), not every later one', () => {
    const names = Array.from({ length: 200_000 }, (_, i) => `user${String(i).padStart(6, '0')}`);
    const before = columnsOf(names.map((n) => user(n)));
    const xmlOf = (c: ReturnType<typeof columnsOf>) => new Map(siteSitemap(c).map((p) => [p.path, sitemapXml(SITE_URL, p)]));
    const was = xmlOf(before);
    const cases = {
      added: columnsOf([...names.slice(0, 70_000), 'user070000a', ...names.slice(70_000)].map((n) => user(n))),
      removed: columnsOf(names.filter((n) => n !== 'user120000').map((n) => user(n))),
      suspended: columnsOf(names.map((n) => user(n, n === 'user150000' ? { status: 'suspended' } : {}))),
    };
    for (const [what, now] of Object.entries(cases)) {
      const { changed, gone } = changedSitemapFiles(now, before);
      const is = xmlOf(now);
      expect(changed.length, what).toBeGreaterThanOrEqual(1);
      expect(changed.length, what).toBeLessThanOrEqual(2);
      expect(gone, what).toEqual([...was.keys()].filter((p) => !is.has(p)));
      // Every file it calls unchanged is the same bytes; every one it calls changed is not.
      for (const [path, xml] of is) expect(xml === was.get(path), `${what} ${path}`).toBe(!changed.includes(path));
    }
  });

  test('split at any size; suspended and custom-domain profiles never counted', () => {
    const users = [user('a'), user('b', { status: 'suspended' }), user('c'), user('d', { hasCustomDomain: true }), user('e')];
    // Every address may end a file past the first two (every: 1), and none holds more than two.
    const files = sitemapFiles(SITE_URL, sitemapEntries(users), { min: 2, every: 1, max: 2 });
    expect(files.map((f) => [f.path, locs(f.xml)])).toEqual([
      ['/sitemap.xml', [`${SITE_URL}/sitemap-1.xml`, `${SITE_URL}/sitemap-2.xml`]],
      ['/sitemap-1.xml', [`${SITE_URL}/`, `${SITE_URL}/p/a`]],
      ['/sitemap-2.xml', [`${SITE_URL}/p/c`, `${SITE_URL}/p/e`]],
    ]);
  });

  test('addresses are entity-escaped; a size over the protocol limit is refused', () => {
    expect(sitemapFiles("https://x.example/a&b'", ['', 'c<d>'])[0]!.xml).toContain("<loc>https://x.example/a&amp;b&apos;/</loc></url>\n<url><loc>https://x.example/a&amp;b&apos;/p/c&lt;d&gt;</loc>");
    expect(() => sitemapFiles(SITE_URL, [], { ...SITEMAP_SIZES, max: SITEMAP_MAX_URLS + 1 })).toThrow(RangeError);
    expect(() => sitemapFiles(SITE_URL, ['a', 'b', 'c'], { min: 0, every: 1, max: 2 })).toThrow(RangeError);
  });
});

/** The columns the sitemap reads of `users`. */
function columnsOf(users: PublicUser[]) {
  return { names: users.map((u) => u.username), suspended: users.map((u) => (u.status === 'suspended' ? 1 : 0)), domains: users.map((u) => (u.hasCustomDomain ? 'x.example' : null)) };
}

describe('robots.txt', () => {
  test('allows everything (a noindex page must stay fetchable) and names the sitemap', () => {
    expect(robotsTxt(SITE_URL)).toMatchInlineSnapshot(`
      "User-agent: *
      Allow: /

      Sitemap: https://profiles.example.net/sitemap.xml
      "
    `);
  });
});
