// The home page (src/ui/home.ts): every active creator while they fit, else the first HOME_CREATORS
// of the creators list's order and how many there are; the link to every profile either way.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { HOME_CREATORS } from '../../src/ui/home.ts';
import { buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE, servedText } from '../support/helpers.ts';

/** The usernames the home page lists, in order, and its HTML. */
const homeOf = (html: string) => ({ html, listed: [...html.matchAll(/<li>\s*<a href="\/p\/([^"]+)">/g)].map((m) => m[1]) });
/** The creators list's first page as built (the default order, 50 a page), and the total. */
const creatorsFile = (client: string) => {
  const body = JSON.parse(servedText(fs.readFileSync(path.join(client, 'service-api', 'v1', 'creators')))) as { data: { username: string }[]; meta: { total: number } };
  return { first: body.data.map((c) => c.username), total: body.meta.total };
};

describe('the home page', () => {
  test('lists every active creator, in the creators list order, while they fit', async () => {
    const { base, dist } = sharedBuild();
    const { html, listed } = homeOf(await (await fetch(`${base}/`)).text());
    const { first, total } = creatorsFile(path.join(dist, 'client'));
    expect(total).toBeLessThan(HOME_CREATORS);
    expect(listed).toEqual(first);
    expect(html).not.toContain('The first ');
  });

  const work = workDir('home');
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));
  test(`past ${HOME_CREATORS} creators, the first ${HOME_CREATORS} in the list order and how many there are`, () => {
    const content = path.join(work, 'content');
    fs.rmSync(work, { recursive: true, force: true });
    fs.cpSync(FIXTURE, content, { recursive: true });
    const extra = HOME_CREATORS + 5;
    for (let i = 0; i < extra; i++) {
      const name = `creator${String(i).padStart(3, '0')}`;
      fs.writeFileSync(path.join(content, 'profiles', `${name}.yaml`), `displayName: Creator ${i}\ncreatedAt: 2024-01-01T00:00:00Z\nviews: ${1000 + 37 * i}\n`);
      fs.writeFileSync(path.join(content, 'creators', `${name}.yaml`), 'category: art\n');
    }
    const dist = path.join(work, 'dist');
    const r = buildFixture(content, dist, { PRECOMPRESS: '0' });
    expect(r.status, r.stderr).toBe(0);
    const client = path.join(dist, 'client');
    const { html, listed } = homeOf(fs.readFileSync(path.join(client, 'index.html'), 'utf8'));
    const { first, total } = creatorsFile(client);
    expect(total).toBeGreaterThan(extra);
    expect(listed).toHaveLength(HOME_CREATORS);
    // The same order as the creators list: its first page is the home page's first creators.
    expect(listed.slice(0, first.length)).toEqual(first);
    expect(html).toContain(`The first ${HOME_CREATORS} of ${total} creators`);
    expect(html).toMatch(/<a href="\/browse\/1">All [\d,]+ profiles by username<\/a>/);
  }, 120_000);
});
