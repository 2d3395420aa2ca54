// The browse pages (src/ui/browse.ts): every name once, in order, in pages of the given size, and
// the pages as built and served: linked from the home page, prev and next between them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { BROWSE_PAGE_SIZES, browsePages, changedBrowsePages } from '../../src/ui/browse.ts';
import { sharedBuild } from '../support/built-server.ts';

describe('browsePages', () => {
  test('every name once, in order, in pages of the sizes; the total on the first page; at least one page', () => {
    const names = Array.from({ length: 7 }, (_, i) => `u${i}`);
    // Every name may end a page past the first two (every: 1): pages of two.
    const pages = browsePages(names, { min: 2, every: 1, max: 3 });
    expect(pages.map((p) => p.names)).toEqual([['u0', 'u1'], ['u2', 'u3'], ['u4', 'u5'], ['u6']]);
    expect(pages.map((p) => [p.page, p.pages, p.total])).toEqual([[1, 4, 7], [2, 4, undefined], [3, 4, undefined], [4, 4, undefined]]);
    expect(browsePages([], { min: 2, every: 1, max: 3 })).toEqual([{ page: 1, pages: 1, names: [], total: 0 }]);
  });

  test('a name added or removed changes its page and the first, rarely one more; the others are the same', () => {
    const names = Array.from({ length: 100_000 }, (_, i) => `user${String(i).padStart(6, '0')}`);
    const pages = browsePages(names);
    for (const p of pages.slice(0, -1)) {
      expect(p.names.length).toBeGreaterThanOrEqual(BROWSE_PAGE_SIZES.min);
      expect(p.names.length).toBeLessThanOrEqual(BROWSE_PAGE_SIZES.max);
    }
    expect(pages.length).toBeGreaterThan(50);
    expect(pages.length).toBeLessThan(200);
    for (const now of [[...names.slice(0, 40_000), 'user040000a', ...names.slice(40_000)], names.filter((n) => n !== 'user070000')]) {
      const { changed, gone } = changedBrowsePages(now, names);
      const after = browsePages(now);
      expect(changed[0]).toBe(1);
      expect(changed.length).toBeLessThanOrEqual(3);
      expect(gone).toEqual(pages.slice(after.length).map((p) => p.page));
      // What it calls unchanged shows the same; what it calls changed does not.
      for (const p of after) expect(JSON.stringify(p) === JSON.stringify(pages[p.page - 1]), `page ${p.page}`).toBe(!changed.includes(p.page));
    }
  });
});

describe('the browse pages as served', () => {
  const { dist, base } = sharedBuild();
  const fixtureNames = fs.readdirSync(path.join(dist, 'client', 'api', 'v1', 'users')).filter((f) => !/\.(br|gz)$/.test(f)).sort();

  test('/browse/1 links every profile in order, with no prev or next on a single page; the home page links it', async () => {
    const r = await fetch(`${base}/browse/1`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await r.text();
    const linked = [...html.matchAll(/<li><a href="\/p\/([^"]+)">/g)].map((m) => m[1]);
    expect(linked).toEqual(fixtureNames);
    expect(html).toContain(`${fixtureNames.length} profiles by username. Page 1 of 1`);
    expect(html).not.toMatch(/rel="(prev|next)"/);
    expect(await (await fetch(`${base}/`)).text()).toContain(`<a href="/browse/1">All ${fixtureNames.length} profiles by username</a>`);
    const none = await fetch(`${base}/browse/2`);
    expect(none.status).toBe(404);
  });
});
