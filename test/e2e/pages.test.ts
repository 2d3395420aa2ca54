// The profile pages as built: what a screen reader and a bidi-aware browser get (badges named once,
// user text with `dir="auto"` and no claimed language, platform names as the platforms write them).
// Read from the shared build's HTML files; the markup is ours, so small patterns find it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { platformLabel, socialIcon } from '../../src/ui/icons.ts';
import { sharedBuild } from '../support/built-server.ts';

const { dist } = sharedBuild();
const page = (username: string) => fs.readFileSync(path.join(dist, 'client', 'p', `${username}.html`), 'utf8');

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
