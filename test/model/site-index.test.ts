// The columns of a whole index (src/model/site-index.ts `columnsOf`), which every file made from the
// whole index reads (src/build/derived.ts).
import { expect, test } from 'vitest';
import { columnsOf, type SiteIndex } from '../../src/model/site-index.ts';
import type { PublicUser } from '../../src/schemas/api.ts';

const user = (username: string, i: number) => ({
  username, status: i % 3 === 0 ? 'suspended' : 'active', customDomain: i % 4 === 0 ? `${username}.example.com` : null, createdAt: '2024-01-01T00:00:00Z',
}) as unknown as PublicUser;

const indexOf = (avatars: [string, string][]): SiteIndex => ({
  builtAt: '2026-01-01T00:00:00.000Z', siteUrl: 'https://profiles.example', profileCount: 40, decorationFiles: [], creators: [],
  users: Array.from({ length: 40 }, (_, i) => user(`user${String(i).padStart(2, '0')}`, i)), avatars,
});

test('each profile gets its own avatar, whatever the order the avatars are listed in', () => {
  // Every third profile has one, listed in the users' order as buildSiteIndex lists them, and reversed.
  const avatars = Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 3 === 1).map((i) => [`user${String(i).padStart(2, '0')}`, `a${i}.png`] as [string, string]);
  const inOrder = columnsOf(indexOf(avatars));
  expect(inOrder.avatars).toEqual(Array.from({ length: 40 }, (_, i) => (i % 3 === 1 ? `a${i}.png` : null)));
  expect(columnsOf(indexOf([...avatars].reverse()))).toEqual(inOrder);
  // A name the users do not hold, first: every other avatar still found.
  expect(columnsOf(indexOf([['nobody', 'x.png'], ...avatars])).avatars).toEqual(inOrder.avatars);
  expect(inOrder.names).toEqual(Array.from({ length: 40 }, (_, i) => `user${String(i).padStart(2, '0')}`));
  expect(Array.from(inOrder.suspended)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? 1 : 0)));
});
