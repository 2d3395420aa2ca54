// schema.org ProfilePage in JSON-LD. Every value is escaped so no profile text can end the script
// block: `<`, `>`, `&` and the JS line separators become \u escapes, which JSON parsers read back.
import type { PublicUser } from '../schemas/api.ts';

const UNSAFE = /[<>&\u2028\u2029]/g;
const escapeOf = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function jsonLdSafe(value: unknown): string {
  // One pass over the JSON, not one a character: a profile page's JSON-LD is made 20,000 times a build.
  return JSON.stringify(value).replace(UNSAFE, escapeOf);
}

// A suspended profile's page asserts only its name: no bio, picture or links (badges are never here).
export function profilePageLd(user: PublicUser, pageUrl: string) {
  return {
    '@context': 'https://schema.org',
    '@type': 'ProfilePage',
    url: pageUrl,
    dateCreated: user.createdAt,
    mainEntity: {
      '@type': 'Person',
      name: user.displayName,
      alternateName: `@${user.username}`,
      identifier: user.username,
      ...(user.status === 'active' && user.bio ? { description: user.bio } : {}),
      ...(user.status === 'active' ? { image: user.avatarUrl } : {}),
      ...(user.status === 'active' && user.socials.length ? { sameAs: user.socials.map((s) => s.url) } : {}),
      interactionStatistic: { '@type': 'InteractionCounter', interactionType: 'https://schema.org/ViewAction', userInteractionCount: user.views },
    },
  };
}
