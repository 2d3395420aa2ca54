// What a static host without a function can serve: every address the pages use (links, images,
// stylesheets, link previews) must be a file of the build at that address, so `dist/client`
// published as it is has no dead link. Only the API's own addresses in JSON answers (`avatarUrl`,
// `?username=`) need the handler, as docs/deploying.md says.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { filesAt, isServedFile } from '../../src/http/headers.ts';
import { TEST_SITE_URL, buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE, readServedFile } from '../support/helpers.ts';

const service = sharedBuild();
const client = path.join(service.dist, 'client');

/** The file a static host serves at a decoded address, as `filesAt` maps it (the host's own rule for `.html`). */
const staticFileAt = (address: string) => filesAt(address).find((f) => fs.existsSync(path.join(client, f)) && fs.statSync(path.join(client, f)).isFile());

function addressesIn(html: string): string[] {
  const out: string[] = [];
  // A form's action too: the lookup box's /lookup is a page of the build (lookup.html) there.
  for (const m of html.matchAll(/\s(?:href|src|content|action)="([^"]+)"/g)) {
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
    const pages = ['index.html', 'docs.html', '404.html', 'lookup.html', ...fs.readdirSync(path.join(client, 'p')).filter((f) => f.endsWith('.html')).map((f) => `p/${f}`)];
    const checked = new Set<string>();
    const dead: string[] = [];
    for (const page of pages) {
      for (const address of addressesIn(readServedFile(path.join(client, page)).toString('utf8'))) {
        if (checked.has(address)) continue;
        checked.add(address);
        if (address.includes('?') || !staticFileAt(address)) dead.push(`${address} (in ${page})`);
      }
    }
    expect(dead).toEqual([]);
    // Pages, stylesheets, avatars, decorations and generated previews were all among them.
    for (const kind of [/^\/lookup$/, /^\/p\//, /^\/_astro\/.+\.css$/, /^\/media\/avatars\//, /^\/media\/decorations\//, /^\/media\/og\/.+\.png$/]) {
      expect([...checked].some((a) => kind.test(a)), String(kind)).toBe(true);
    }
  });

  test('DEPLOY_TARGET=static leaves out what only a handler can answer right, and names image files instead of the handler', () => {
    const dist = path.join(workDir('static-target'), 'dist');
    fs.rmSync(path.dirname(dist), { recursive: true, force: true });
    try {
      const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'static' });
      expect(built.status, built.stderr).toBe(0);
      const own = path.join(dist, 'client');
      expect(fs.existsSync(path.join(own, 'service-api', 'v1', 'creators'))).toBe(false);
      expect(fs.existsSync(path.join(own, '_lookup'))).toBe(false);
      expect(fs.readFileSync(path.join(own, '_headers'), 'utf8')).not.toContain('/service-api/v1/creators');
      // Image addresses in the JSON and the pages' JSON-LD are files of this build, not the handler's.
      const ownFileAt = (address: string) => filesAt(address).find((f) => fs.existsSync(path.join(own, f)));
      const addressesOfUsers: string[] = [];
      // The answers, not their compressed siblings (src/build/files/compress.ts).
      for (const name of fs.readdirSync(path.join(own, 'api', 'v1', 'users')).filter((f) => isServedFile(`api/v1/users/${f}`))) {
        const user = JSON.parse(fs.readFileSync(path.join(own, 'api', 'v1', 'users', name), 'utf8')).data;
        const node = JSON.parse(readServedFile(path.join(client, 'api', 'v1', 'users', name)).toString('utf8')).data;
        addressesOfUsers.push(user.avatarUrl, ...(user.avatarDecoration ? [user.avatarDecoration.url] : []));
        if (!user.hasCustomDomain) addressesOfUsers.push(user.pageUrl);
        // Everything else is the Node build's answer.
        expect({ ...user, avatarUrl: node.avatarUrl, avatarDecoration: node.avatarDecoration && { ...user.avatarDecoration, url: node.avatarDecoration.url } }).toEqual(node);
      }
      const dead = addressesOfUsers.filter((a) => {
        const url = new URL(a);
        return url.origin !== TEST_SITE_URL || url.search !== '' || !ownFileAt(decodeURIComponent(url.pathname));
      });
      expect(dead).toEqual([]);
      expect(addressesOfUsers.some((a) => a.includes('/media/avatars/')) && addressesOfUsers.some((a) => a.includes('/media/og/')) && addressesOfUsers.some((a) => a.includes('/media/decorations/'))).toBe(true);
      const ld = /<script type="application\/ld\+json">(.*?)<\/script>/s.exec(fs.readFileSync(path.join(own, 'p', 'alice.html'), 'utf8'))![1]!;
      expect(JSON.parse(ld).mainEntity.image).toBe(JSON.parse(fs.readFileSync(path.join(own, 'api', 'v1', 'users', 'alice'), 'utf8')).data.avatarUrl);
      // The home page is the Node build's, byte for byte (pages, docs.html and openapi.json show image
      // addresses), but for the lookup box's script, which only a host without the handler needs.
      const script = '<script src="/lookup.js" defer></script>';
      const home = fs.readFileSync(path.join(own, 'index.html'), 'utf8');
      expect(home).toContain(script);
      expect(home.replace(script, '')).toBe(readServedFile(path.join(client, 'index.html')).toString('utf8'));
    } finally {
      fs.rmSync(path.dirname(dist), { recursive: true, force: true });
    }
  }, 120_000);
});
