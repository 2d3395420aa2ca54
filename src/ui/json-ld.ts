// schema.org ProfilePage in JSON-LD. Every value is escaped so no profile text can end the script
// block: `<`, `>`, `&` and the JS line separators become \u escapes, which JSON parsers read back.
import type { PublicUser } from '../schemas/api.ts';

export function jsonLdSafe(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
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
