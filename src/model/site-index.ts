// The public data of one build, made from validated content: every profile's public object, the
// avatar files, the declared decoration files and the creators in list order. The build hands it to
// the pages and writes it for the server; nothing private reaches it (public-user.ts).
import type { CreatorSummary, PublicUser } from '../schemas/api.ts';
import type { CreatorRow } from './creators-list.ts';
import type { Content } from '../content/load.ts';
import { compareCreators, toCreatorSummary, toPublicUser, type PublicContext } from './public-user.ts';

/** Serialisable; arrays rather than objects keyed by username, so a user named `constructor` is only data. */
export interface SiteIndex {
  builtAt: string;
  siteUrl: string;
  /** Every profile's public object, by username. */
  users: PublicUser[];
  /** How many profiles the site has: `users.length`, but in an edit build, whose `users` are the changed ones. */
  profileCount: number;
  /** Every profile's username, sorted, when `users` does not hold them all (an edit build): the browse pages list them (src/ui/browse.ts). */
  names?: string[];
  /** [username, avatar file] for profiles with an avatar image (in an edit build: those of `users` and of the creators). */
  avatars: [string, string][];
  /** Decoration image files: the only files `/api/decoration` serves. */
  decorationFiles: string[];
  /** Active creators, in list order. */
  creators: CreatorSummary[];
  /**
   * Their rows with each profile's creation time, when `users` does not hold every creator: an
   * edit build (src/build/edit-path.ts) takes them from the served release and holds the changed users only.
   */
  creatorRows?: CreatorRow[];
}

export function buildSiteIndex(content: Content, ctx: PublicContext): SiteIndex {
  const users: PublicUser[] = [];
  const avatars: [string, string][] = [];
  const byName = new Map<string, PublicUser>();
  for (const [username, profile] of content.profiles) {
    const user = toPublicUser(username, profile, content, ctx);
    users.push(user);
    byName.set(username, user);
    if (profile.avatar) avatars.push([username, profile.avatar]);
  }
  const creators: CreatorSummary[] = [];
  for (const [username, creator] of content.creators) {
    const user = byName.get(username);
    if (user && user.status === 'active') creators.push(toCreatorSummary(user, creator.category, creator.featured));
  }
  creators.sort(compareCreators);
  return {
    builtAt: ctx.builtAt.toISOString(),
    siteUrl: ctx.siteUrl,
    users,
    profileCount: users.length,
    avatars,
    decorationFiles: [...new Set([...content.decorations.values()].map((d) => d.file))].sort(),
    creators,
  };
}

