// What a static host without a function can serve: every address the pages use (links, images,
// stylesheets, link previews) must be a file of the build at that address, so `dist/client`
// published as it is has no dead link. Only the API's own addresses in JSON answers (`avatarUrl`,
// `?username=`) need the handler, as docs/deploying.md says.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { filesAt } from '../../src/http/headers.ts';
import { TEST_SITE_URL, sharedBuild } from '../support/built-server.ts';

const service = sharedBuild();
const client = path.join(service.dist, 'client');

/** The file a static host serves at a decoded address, as `filesAt` maps it (the host's own rule for `.html`). */
const staticFileAt = (address: string) => filesAt(address).find((f) => fs.existsSync(path.join(client, f)) && fs.statSync(path.join(client, f)).isFile());

function addressesIn(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/\s(?:href|src|content)="([^"]+)"/g)) {
    const raw = m[1]!.replaceAll('&amp;', '&');
    let url: URL;
    try {
      url = new URL(raw, `${TEST_SITE_URL}/`);
    } catch {
      continue;
    }
    // Internal addresses only, and only those that name something on this site (not `content="profile"`).
    if (url.origin !== TEST_SITE_URL || !/^(\/|https?:)/.test(raw)) continue;
    out.push(decodeURIComponent(url.pathname) + url.search);
  }
  return out;
}

describe('dist/client on a static host', () => {
  test('every internal address of every page is a file at that address, with no query', () => {
    const pages = ['index.html', 'docs.html', '404.html', ...fs.readdirSync(path.join(client, 'p')).map((f) => `p/${f}`)];
    const checked = new Set<string>();
    const dead: string[] = [];
    for (const page of pages) {
      for (const address of addressesIn(fs.readFileSync(path.join(client, page), 'utf8'))) {
        if (checked.has(address)) continue;
        checked.add(address);
        if (address.includes('?') || !staticFileAt(address)) dead.push(`${address} (in ${page})`);
      }
    }
    expect(dead).toEqual([]);
    // Pages, stylesheets, avatars, decorations and generated previews were all among them.
    for (const kind of [/^\/p\//, /^\/_astro\/.+\.css$/, /^\/media\/avatars\//, /^\/media\/decorations\//, /^\/media\/og\/.+\.png$/]) {
      expect([...checked].some((a) => kind.test(a)), String(kind)).toBe(true);
    }
  });
});
