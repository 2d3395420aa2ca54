// The profile pages as built: what a screen reader and a bidi-aware browser get (badges named once,
// user text with `dir="auto"` and no claimed language, platform names as the platforms write them).
// Read from the shared build's HTML files; the markup is ours, so small patterns find it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LOOKUP_INPUT, LOOKUP_PROBLEM } from '../../src/api/handler.ts';
import { linkAddress, linkHandle, platformLabel, socialIcon } from '../../src/ui/icons.ts';
import { previewFileOf, previewImage } from '../../src/ui/og-image.ts';
import { writePreviewImages } from '../../src/ui/og-image-png.ts';
import { TEST_SITE_URL, ownBuild, sharedBuild, workDir, type OwnBuild } from '../support/built-server.ts';
import { readServedFile } from '../support/helpers.ts';
import { rawRequest } from '../support/raw-http.ts';

const { dist, base } = sharedBuild();
const pageIn = (distDir: string, username: string) => readServedFile(path.join(distDir, 'client', 'p', `${username}.html`)).toString('utf8');
const page = (username: string) => pageIn(dist, username);

interface Element {
  tag: string;
  attrs: Record<string, string>;
  /** The inner HTML up to the first closing tag of the same name. */
  inner: string;
}

/** Elements whose class list contains `cls`. */
function byClass(html: string, cls: string): Element[] {
  const found: Element[] = [];
  for (const m of html.matchAll(/<([a-z0-9]+)((?:\s+[a-z:-]+(?:="[^"]*")?)*)\s*>/g)) {
    const attrs: Record<string, string> = {};
    for (const a of m[2]!.matchAll(/([a-z:-]+)(?:="([^"]*)")?/g)) attrs[a[1]!] = a[2] ?? '';
    if (!(attrs.class ?? '').split(/\s+/).includes(cls)) continue;
    const start = m.index + m[0].length;
    const end = html.indexOf(`</${m[1]}>`, start);
    found.push({ tag: m[1]!, attrs, inner: html.slice(start, end) });
  }
  return found;
}

const text = (inner: string) => inner.replace(/<[^>]*>/g, '').trim();

describe('profile page markup', () => {
  test('each badge is read once: its visible label, the icon hidden, no aria-label or title on the list', () => {
    const [list] = byClass(page('alice'), 'badges');
    expect(list!.tag).toBe('ul');
    expect(list!.attrs['aria-label']).toBeUndefined();
    const badges = byClass(page('alice'), 'badge');
    expect(badges.map((b) => [b.tag, text(b.inner)])).toEqual([['li', 'Verified'], ['li', 'Official']]);
    for (const b of badges) {
      expect(b.attrs.title).toBeUndefined();
      expect(b.inner).not.toContain('aria-label');
      expect(b.inner).toContain('aria-hidden="true"');
    }
  });

  test('a generated avatar is one image named once: its inline SVG is hidden', () => {
    const [avatar] = byClass(page('bob'), 'avatar-generated');
    expect(avatar!.attrs).toMatchObject({ role: 'img', 'aria-label': 'Avatar of Bob' });
    expect(avatar!.inner).toMatch(/^<svg [^>]*aria-hidden="true"/);
    expect(avatar!.inner).not.toMatch(/role=|aria-label=/);
  });

  test('user text has dir="auto" and lang="" (unknown); the page itself stays lang="en"', () => {
    const alice = page('alice');
    expect(alice).toMatch(/^<!DOCTYPE html><html lang="en"/i);
    for (const cls of ['name', 'bio']) {
      const [el] = byClass(alice, cls);
      expect(el!.attrs, cls).toMatchObject({ dir: 'auto', lang: '' });
    }
    const [suspension] = byClass(page('carol'), 'suspension');
    expect(suspension!.inner).toMatch(/<p dir="auto" lang="">This profile has been suspended for repeated spam.<\/p>/);
    // The only lang="en" is the root's.
    for (const u of ['alice', 'bob', 'carol', 'dave', 'erin_99']) expect(page(u).match(/lang="en"/g), u).toHaveLength(1);
  });

  test('platforms are named as they write themselves, with their mark', () => {
    expect(byClass(page('alice'), 'platform').map((p) => text(p.inner))).toEqual(['GitHub', 'YouTube']);
    expect(byClass(page('dave'), 'platform').map((p) => text(p.inner))).toEqual(['Instagram']);
    expect(byClass(page('kate'), 'platform').map((p) => text(p.inner))).toEqual(['Codeberg']);
    expect(['linkedin', 'twitter', 'x', 'tiktok', 'bluesky', 'mastodon', 'twitch'].map((p) => platformLabel(p).name))
      .toEqual(['LinkedIn', 'X', 'X', 'TikTok', 'Bluesky', 'Mastodon', 'Twitch']);
    // Brand marks differ from the generic link icon; LinkedIn has none in simple-icons, so it gets the generic one.
    const generic = socialIcon('website');
    for (const p of ['github', 'youtube', 'x', 'mastodon', 'bluesky', 'twitch', 'tiktok', 'instagram']) expect(socialIcon(p), p).not.toBe(generic);
    expect(socialIcon('linkedin')).toBe(generic);
    // A platform we have no name for is shown as written, as user text.
    expect(platformLabel('cohost')).toEqual({ name: 'cohost', known: false });
  });
});

describe('links home and the lookup page', () => {
  test('the links to the home page name it in full: on a profile\'s own domain `/` is that profile\'s page', async () => {
    const client = path.join(dist, 'client');
    for (const file of ['p/alice.html', 'p/bob.html', '404.html', 'lookup.html', 'docs.html', 'index.html']) {
      const html = readServedFile(path.join(client, file)).toString('utf8');
      expect(html, file).toContain(`href="${TEST_SITE_URL}/"`);
      expect(html, file).not.toMatch(/href="\/"/);
    }
    // On alice's domain, what `/` is there links to the site's home, not to itself.
    const onDomain = (await rawRequest(base, '/', { headers: { host: 'alice.example.com' } })).text;
    expect(onDomain).toContain('class="profile"');
    expect(onDomain).toContain(`href="${TEST_SITE_URL}/"`);
  });

  test('a lookup that leads nowhere is the lookup page saying why, with what was typed back in the box', async () => {
    const built = readServedFile(path.join(dist, 'client', 'lookup.html')).toString('utf8');
    // The places the handler fills in (src/api/handler.ts lookupPage) are in the page as built.
    expect(built).toContain(LOOKUP_PROBLEM);
    expect(built).toContain(LOOKUP_INPUT);
    for (const [query, status, typed, message] of [['bad%20name!', 400, 'bad name!', '“bad name!” is not a username.'], ['%20Nobody', 404, 'Nobody', 'There is no profile called “nobody”.']] as const) {
      const r = await fetch(`${base}/lookup?u=${query}`);
      expect(r.status, query).toBe(status);
      const html = await r.text();
      expect(html, query).toContain(`<p class="lookup-problem" role="alert">${message}</p>`);
      expect(html, query).toContain(`${LOOKUP_INPUT} value="${typed}"`);
    }
  });
});

describe('the API docs page', () => {
  test('each scrolling example can be reached by keyboard (tabindex), so it can be scrolled without a mouse', () => {
    const html = readServedFile(path.join(dist, 'client', 'docs.html')).toString('utf8');
    const pres = [...html.matchAll(/<pre\b[^>]*>/g)].map((m) => m[0]);
    expect(pres.length).toBeGreaterThan(3);
    expect(pres.filter((p) => !/\btabindex="0"/.test(p))).toEqual([]);
  });

  // axe's scrollable-region-focusable (WCAG 2.1.1): on a phone a parameter table scrolls sideways,
  // and on main at b59a9e2 a keyboard could not reach it.
  test('each parameter table\'s scrolling wrapper is a named region a keyboard can reach', () => {
    const html = readServedFile(path.join(dist, 'client', 'docs.html')).toString('utf8');
    const wrappers = [...html.matchAll(/<div\b[^>]*class="docs-table"[^>]*>/g)].map((m) => m[0]);
    expect(wrappers.length).toBeGreaterThan(2);
    for (const w of wrappers) {
      expect(w).toMatch(/\btabindex="0"/);
      expect(w).toMatch(/\brole="region"/);
      expect(w).toMatch(/\baria-label="Parameters of (GET) \/[^"]+"/);
    }
  });
});

describe('link cards', () => {
  // A label holds spans, which byClass does not nest: it ends where the address line starts.
  const labelsOf = (html: string) => [...html.matchAll(/class="social-label">(.*?)<span class="url">/gs)].map((m) => text(m[1]!).replace(/\s+/g, ' '));

  test('a card is labelled with the platform and the handle; the full address is its target and title', () => {
    expect(labelsOf(page('alice'))).toEqual(['GitHub · alice-example', 'YouTube · @alice-example']);
    expect(labelsOf(page('kate'))).toEqual(['Codeberg · kate-example']);
    expect(page('alice')).toContain('<a href="https://github.com/alice-example" title="https://github.com/alice-example"');
    // The address line drops what every address has (scheme, `www.`, a trailing slash).
    expect(byClass(page('alice'), 'url').map((u) => u.inner)).toEqual(['github.com/alice-example', 'youtube.com/@alice-example']);
  });

  test('handles: by the platform\'s rule, else the last path segment, else the host', () => {
    expect([
      ['github', 'https://github.com/alice-example/'],
      ['github', 'https://github.com/alice-example/tea-timer?tab=readme#top'],
      ['youtube', 'https://www.youtube.com/@alice-example'],
      ['youtube', 'https://www.youtube.com/channel/UCabc123'],
      ['mastodon', 'https://mastodon.social/@alice'],
      ['reddit', 'https://www.reddit.com/user/alice_ex/'],
      ['reddit', 'https://reddit.com/r/illustration'],
      ['linkedin', 'https://www.linkedin.com/in/alice-liddell'],
      ['bluesky', 'https://bsky.app/profile/alice.bsky.social'],
      ['website', 'https://www.alice.example/'],
      ['website', 'https://alice.example/about/me'],
      ['cohost', 'https://cohost.org/%E3%81%82%E3%82%8A%E3%81%99'],
      ['website', 'https://alice.example/%E0%A4%A'],
      ['email', 'mailto:alice@example.com'],
    ].map(([p, u]) => linkHandle(p!, u!))).toEqual([
      'alice-example', 'alice-example/tea-timer', '@alice-example', 'UCabc123', '@alice@mastodon.social', 'u/alice_ex',
      'r/illustration', 'alice-liddell', 'alice.bsky.social', 'alice.example', 'me', 'ありす', '%E0%A4%A', 'alice@example.com',
    ]);
  });
});

test('the address under a link: the host as the browser resolves it (ASCII for other scripts), the rest as written', () => {
  expect([
    'https://github.com/alice-example/', 'https://www.youtube.com/@alice', 'http://Alice.Example:8080/a?b=c#d',
    'https://\u0430pple.com/x', 'https://b\u00fccher.example/%C3%BC', 'mailto:alice@example.com',
  ].map(linkAddress)).toEqual([
    'github.com/alice-example', 'youtube.com/@alice', 'alice.example:8080/a?b=c#d',
    'xn--pple-43d.com/x', 'xn--bcher-kva.example/%C3%BC', 'mailto:alice@example.com',
  ]);
});

describe('a suspended page', () => {
  const ldOf = (html: string) => JSON.parse(/<script type="application\/ld\+json">(.*?)<\/script>/s.exec(html)![1]!);

  test('shows the name and the message, nothing the profile wrote or was given, and asks not to be indexed', async () => {
    for (const u of ['carol', 'frank']) {
      const html = page(u);
      expect(metas(html).robots, u).toBe('noindex');
      expect(byClass(html, 'name')[0]!.inner, u).toBe(u === 'carol' ? 'Carol' : 'Frank');
      expect(text(byClass(html, 'suspension')[0]!.inner), u).toMatch(/^This profile is suspended/);
      for (const cls of ['badges', 'badge', 'bio', 'socials', 'domain', 'avatar-decoration']) expect(byClass(html, cls), `${u} .${cls}`).toEqual([]);
      // The generated default avatar, not a chosen picture.
      expect(byClass(html, 'avatar-generated'), u).toHaveLength(1);
      const person = ldOf(html).mainEntity;
      expect(Object.keys(person).filter((k) => ['description', 'sameAs', 'image'].includes(k)), u).toEqual([]);
      expect(person.name, u).toBe(u === 'carol' ? 'Carol' : 'Frank');
    }
    const carol = page('carol');
    expect(text(byClass(carol, 'suspension')[0]!.inner)).toContain('This profile has been suspended for repeated spam.');
    for (const written of ['Used to post here.', 'carol-example', 'Helper']) expect(carol).not.toContain(written);
    // An active page asks nothing of search engines, and keeps what its profile wrote.
    expect(metas(page('alice')).robots).toBeUndefined();
    expect(ldOf(page('alice')).mainEntity.sameAs).toEqual(['https://github.com/alice-example', 'https://www.youtube.com/@alice-example']);
    // The API answer keeps every field of the contract.
    const api = await (await fetch(`${base}/api/v1/users/carol`)).json();
    expect(api.data).toMatchObject({ status: 'suspended', bio: 'Used to post here.', socials: [{ platform: 'twitter', url: 'https://twitter.com/carol-example' }] });
    expect(api.data.badges.list).toEqual(['helper']);
  });

  test('its link preview is the generated image, even when its avatar could be one', () => {
    const big = workDir('big-avatar');
    fs.mkdirSync(big, { recursive: true });
    try {
      // A 200x200 PNG header is all previewImage reads (og-image.ts avatarImageSize).
      const head = Buffer.alloc(33);
      head.writeUInt32BE(0x89504e47, 0); head.writeUInt32BE(0x0d0a1a0a, 4); head.writeUInt32BE(13, 8);
      head.write('IHDR', 12, 'latin1'); head.writeUInt32BE(200, 16); head.writeUInt32BE(200, 20);
      fs.writeFileSync(path.join(big, 'zed.png'), head);
      const active = previewImage(TEST_SITE_URL, { username: 'zed', displayName: 'Zed', status: 'active' }, big, 'zed.png');
      const suspended = previewImage(TEST_SITE_URL, { username: 'zed', displayName: 'Zed', status: 'suspended' }, big, 'zed.png');
      expect(active).toMatchObject({ generated: false, url: `${TEST_SITE_URL}/media/avatars/zed.png` });
      expect(suspended).toMatchObject({ generated: true, width: 400 });
      // The build writes the same generated file for it (previewFileOf is the build's side of the rule).
      expect(previewFileOf(big, { username: 'zed', displayName: 'Zed', status: 'active' }, 'zed.png')).toBeNull();
      expect(suspended.url.endsWith(`/${previewFileOf(big, { username: 'zed', displayName: 'Zed', status: 'suspended' }, 'zed.png')}`)).toBe(true);
    } finally {
      fs.rmSync(big, { recursive: true, force: true });
    }
  });
});

/** The `<meta>` values of a page, by property or name. */
function metas(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<meta (?:property|name)="([^"]+)" content="([^"]*)">/g)) out[m[1]!] = m[2]!;
  return out;
}

/** The og:image of a page, checked against the PNG file the build wrote at its address. */
function previewOf(distDir: string, username: string) {
  const meta = metas(pageIn(distDir, username));
  const url = new URL(meta['og:image']!.replace(/&amp;/g, '&'));
  expect(url.origin).toBe(TEST_SITE_URL);
  const file = path.join(distDir, 'client', ...decodeURIComponent(url.pathname).split('/').filter(Boolean));
  const bytes = fs.readFileSync(file);
  // PNG signature, then the IHDR chunk: width and height as 32-bit big-endian numbers (RFC 2083 §4.1.1).
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(bytes.toString('latin1', 12, 16)).toBe('IHDR');
  return { meta, path: url.pathname, width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('link previews (og:image)', () => {
  test('a profile without an avatar, or with one under 144 px, names a generated 400x400 PNG that the build wrote', () => {
    for (const username of ['bob', 'alice', 'erin_99']) {
      const preview = previewOf(dist, username);
      expect(preview.path, username).toMatch(/^\/media\/og\/\d+-[0-9a-f-]+\.png$/);
      expect([preview.width, preview.height], username).toEqual([400, 400]);
      expect(preview.meta, username).toMatchObject({
        'og:image:type': 'image/png', 'og:image:width': '400', 'og:image:height': '400', 'twitter:card': 'summary',
        'twitter:image': preview.meta['og:image'],
      });
      expect(preview.meta['og:image:alt'], username).toMatch(/^Avatar of /);
    }
  });

  test('profiles with the same initial and colour share one generated file', () => {
    const files = fs.readdirSync(path.join(dist, 'client', 'media', 'og'));
    const named = new Set(['alice', 'bob', 'carol', 'dave', 'erin_99', 'frank', 'kate'].map((u) => path.basename(previewOf(dist, u).path)));
    expect(files.sort()).toEqual([...named].sort());
  });

  describe('in a build with a large avatar and text in other scripts', () => {
    let own: OwnBuild;
    beforeAll(async () => {
      own = await ownBuild('pages');
      const dir = own.fixtureWith('content', {
        'profiles/hana.yaml': [
          'displayName: "김하나"',
          'bio: "مرحبا بالعالم"',
          'createdAt: 2024-02-02T00:00:00Z',
          'avatar: hana.png',
          'socials:',
          '  - { platform: linkedin, url: "https://www.linkedin.com/in/hana-example" }',
          '  - { platform: cohost, url: "https://cohost.example/hana" }',
        ].join('\n'),
      });
      // A 400x400 PNG as the avatar: the generated image of some other profile will do.
      const made = path.join(own.work, 'made');
      await writePreviewImages(made, [{ username: 'hana', displayName: 'H' }]);
      fs.copyFileSync(path.join(made, fs.readdirSync(made)[0]!), path.join(dir, 'avatars', 'hana.png'));
      const build = own.rebuild(dir);
      expect(build.status, build.stderr).toBe(0);
    }, 180_000);
    afterAll(() => own?.stop());

    test('an avatar of at least 144 px is the preview itself, declared at its size', () => {
      const preview = previewOf(own.dist, 'hana');
      expect(preview.path).toBe('/media/avatars/hana.png');
      expect(preview.meta).toMatchObject({ 'og:image:width': String(preview.width), 'og:image:height': String(preview.height), 'og:image:type': 'image/png' });
      expect(preview.width).toBe(400);
    });

    test('Korean and Arabic text is marked dir="auto" lang="", LinkedIn is named, an unknown platform is user text', () => {
      const html = pageIn(own.dist, 'hana');
      const [name] = byClass(html, 'name');
      expect([name!.attrs, text(name!.inner)]).toEqual([{ class: 'name', dir: 'auto', lang: '' }, '김하나']);
      expect(byClass(html, 'bio')[0]!.attrs).toMatchObject({ dir: 'auto', lang: '' });
      const platforms = byClass(html, 'platform');
      expect(platforms.map((p) => [text(p.inner), p.attrs.dir, p.attrs.lang])).toEqual([['LinkedIn', undefined, undefined], ['cohost', 'auto', '']]);
    });
  });
});
