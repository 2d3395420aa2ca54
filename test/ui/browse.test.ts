// The browse pages (src/ui/browse.ts): every name once, in order, in pages of the given size, and
// the pages as built and served: linked from the home page, prev and next between them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { browsePages } from '../../src/ui/browse.ts';
import { sharedBuild } from '../support/built-server.ts';

describe('browsePages', () => {
  test('every name once, in order, in pages of the size; at least one page', () => {
    const names = Array.from({ length: 7 }, (_, i) => `u${i}`);
    const pages = browsePages(names, 3);
    expect(pages.map((p) => p.names)).toEqual([['u0', 'u1', 'u2'], ['u3', 'u4', 'u5'], ['u6']]);
    expect(pages.map((p) => [p.page, p.pages, p.total])).toEqual([[1, 3, 7], [2, 3, 7], [3, 3, 7]]);
    expect(browsePages([], 3)).toEqual([{ page: 1, pages: 1, names: [], total: 0 }]);
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
