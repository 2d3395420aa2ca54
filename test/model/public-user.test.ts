// The public User object and creators list: every field, defaults, suspended, and nothing private.
import { describe, expect, test } from 'vitest';
import { CreatorSummarySchema, PublicUserSchema } from '../../src/schemas/api.ts';
import { accountAgeDays } from '../../src/model/public-user.ts';
import { BUILT_AT, PRIVATE_MARKERS, SITE_URL, fixtureSite } from '../support/helpers.ts';

const { index } = fixtureSite();
const user = (name: string) => {
  const u = index.users.find((x) => x.username === name);
  if (!u) throw new Error(`no ${name}`);
  return u;
};

describe('public user', () => {
  test('a full profile, field by field (alice)', () => {
    expect(user('alice')).toEqual({
      username: 'alice',
      displayName: 'Alice Liddell 🌸 & «friends»',
      bio: 'Illustrator. Tea at four — always.\nSecond line with <b>markup</b> that must stay text.',
      avatarUrl: `${SITE_URL}/api/avatar?u=alice`,
      pageUrl: 'https://alice.example.com',
      hasCustomDomain: true,
      customDomain: 'alice.example.com',
      // 2021-03-14T09:26:53Z to 2026-01-15T12:00:00Z
      accountAgeDays: 1768,
      createdAt: '2021-03-14T09:26:53.000Z',
      views: 48213,
      badges: { isVerified: true, isOfficial: true, isHelper: false, list: ['verified', 'official'] },
      avatarDecoration: { id: 'sakura', name: 'Sakura Petals', file: 'sakura.png', url: `${SITE_URL}/api/decoration?f=sakura.png` },
      socials: [
        { platform: 'github', url: 'https://github.com/alice-example' },
        { platform: 'youtube', url: 'https://www.youtube.com/@alice-example' },
      ],
      status: 'active',
      banInfo: { isBanned: false, reason: null, message: null, bannedAt: null },
    });
  });

  test('a minimal profile gets every default (bob)', () => {
    expect(user('bob')).toEqual({
      username: 'bob', displayName: 'Bob', bio: '', avatarUrl: `${SITE_URL}/api/avatar?u=bob`, pageUrl: `${SITE_URL}/p/bob`,
      hasCustomDomain: false, customDomain: null, accountAgeDays: 439, createdAt: '2024-11-02T00:00:00.000Z', views: 0,
      badges: { isVerified: false, isOfficial: false, isHelper: false, list: [] }, avatarDecoration: null, socials: [],
      status: 'active', banInfo: { isBanned: false, reason: null, message: null, bannedAt: null },
    });
  });

  test('a suspended profile keeps its data and carries banInfo (carol, frank without message)', () => {
    expect(user('carol')).toMatchObject({
      status: 'suspended',
      banInfo: { isBanned: true, reason: 'spam', message: 'This profile has been suspended for repeated spam.', bannedAt: '2025-06-30T18:45:00.000Z' },
    });
    expect(user('frank').banInfo).toEqual({ isBanned: true, reason: 'impersonation', message: null, bannedAt: '2025-01-02T02:04:05.000Z' });
  });

  test('zone offsets become UTC instants, and stats replace views (dave)', () => {
    expect(user('dave').createdAt).toBe('2022-07-04T13:30:00.000Z');
    expect(user('dave').views).toBe(1337);
    expect(user('dave').badges.list).toEqual(['verified', 'helper']);
  });

  test('accountAgeDays counts UTC dates from createdAt to the build', () => {
    // erin_99 was created 2025-12-31T23:59:59Z: 14 days and 12 hours before the build, on a date 15 days earlier.
    expect(user('erin_99').accountAgeDays).toBe(15);
  });

  test('accountAgeDays moves only when the UTC date does', () => {
    const created = new Date('2025-12-31T23:59:59Z');
    expect(accountAgeDays(created, new Date('2025-12-31T23:59:59Z'))).toBe(0);
    expect(accountAgeDays(created, new Date('2026-01-01T00:00:00Z'))).toBe(1);
    expect(accountAgeDays(created, new Date('2026-01-01T23:59:59.999Z'))).toBe(1);
    expect(accountAgeDays(created, new Date('2026-01-02T00:00:00Z'))).toBe(2);
    // A createdAt after the build (a clock skew) is never a negative age.
    expect(accountAgeDays(new Date('2026-02-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'))).toBe(0);
  });

  test('every user has exactly the schema fields, and nothing private', () => {
    for (const u of index.users) {
      expect(PublicUserSchema.parse(u)).toEqual(u);
      const text = JSON.stringify(u);
      for (const m of PRIVATE_MARKERS) expect(text).not.toContain(m);
    }
    expect(JSON.stringify(index)).not.toMatch(/private/i);
  });

  test('the build time is the one given', () => {
    expect(index.builtAt).toBe(BUILT_AT.toISOString());
  });
});

describe('creators list', () => {
  test('active creators only: featured first, then views, then name', () => {
    expect(index.creators.map((c) => [c.username, c.featured, c.views])).toEqual([
      ['alice', true, 48213],
      ['dave', false, 1337],
      ['bob', false, 0],
      ['kate', false, 0],
    ]);
  });

  test('entries are made from the public user', () => {
    for (const c of index.creators) {
      CreatorSummarySchema.parse(c);
      const u = user(c.username);
      expect(c).toMatchObject({ displayName: u.displayName, avatarUrl: u.avatarUrl, pageUrl: u.pageUrl, badges: u.badges, views: u.views });
    }
    expect(index.creators.find((c) => c.username === 'dave')).toMatchObject({ category: '3d', featured: false });
  });
});
