// The platform names the page shows: a name the schema allows is either one we know or the author's own word.
import { describe, expect, test } from 'vitest';
import { ProfileSchema } from '../../src/schemas/index.ts';
import { platformLabel, socialIcon } from '../../src/ui/icons.ts';

describe('platform labels', () => {
  test('a platform named like a property of every object is the author\'s own word, with the generic icon', () => {
    // Every name Object.prototype carries that the schema lets through as a platform (today: `constructor`).
    const inherited = Object.getOwnPropertyNames(Object.prototype).filter((name) =>
      ProfileSchema.safeParse({ displayName: 'A', createdAt: '2021-03-14T09:26:53Z', socials: [{ platform: name, url: 'https://example.com/a' }] }).success);
    expect(inherited).toContain('constructor');
    for (const name of inherited) {
      expect(platformLabel(name), name).toEqual({ name, known: false });
      expect(socialIcon(name), name).toBe(socialIcon('website'));
    }
  });
});
