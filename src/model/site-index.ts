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
  /** [username, avatar file] for profiles with an avatar image (in an edit build: those of `users` and of the creators). */
  avatars: [string, string][];
  /** Decoration image files: the only files `/api/decoration` serves. */
  decorationFiles: string[];
  /** Active creators, in list order. */
  creators: CreatorSummary[];
  /**
   * Their rows with each profile's creation time, when `users` does not hold every creator: an
   * edit build (src/build/reuse/edit-path.ts) takes them from the served release and holds the changed users only.
   */
  creatorRows?: CreatorRow[];
  /** The whole site's columns, when `users` does not hold every profile (an edit build's): `columnsOf` returns them. */
  columns?: IndexColumns;
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


/**
 * What the files made from the whole index read of it (src/build/derived.ts): per profile, in
 * username order, the few fields they depend on; and the creators rows. A cold build takes them from
 * its index (`columnsOf`), an edit build from the served release's kept columns with its changes
 * applied, so both make the same bytes from the same columns.
 */
export interface IndexColumns {
  siteUrl: string;
  builtAt: string;
  names: readonly string[];
  /** 1 for a suspended profile. */
  suspended: ArrayLike<number>;
  domains: readonly (string | null)[];
  avatars: readonly (string | null)[];
  /** The active creators' rows, in the list's default order. */
  creatorRows: readonly CreatorRow[];
}

const COLUMNS = new WeakMap<SiteIndex, IndexColumns>();

/** The columns of a whole index (every profile in `users`), made once per index. */
export function columnsOf(index: SiteIndex): IndexColumns {
  const known = index.columns ?? COLUMNS.get(index);
  if (known) return known;
  const n = index.users.length;
  const names = new Array<string>(n);
  const suspended = new Uint8Array(n);
  const domains = new Array<string | null>(n);
  const avatars = new Array<string | null>(n);
  const creators = new Set(index.creators.map((c) => c.username));
  const createdAt = new Map<string, number>();
  // `avatars` lists profiles in `users`' order (buildSiteIndex): read side by side, not through a
  // map of a million names, whose lookups miss the CPU's caches (BENCHMARKS.md, "Finishing the API
  // files at 1,000,000"). A list in another order falls back to the map.
  let j = 0;
  for (let i = 0; i < n; i++) {
    const u = index.users[i]!;
    names[i] = u.username;
    suspended[i] = u.status === 'suspended' ? 1 : 0;
    domains[i] = u.customDomain;
    const pair = index.avatars[j];
    avatars[i] = pair !== undefined && pair[0] === u.username ? (j++, pair[1]) : null;
    if (creators.has(u.username)) createdAt.set(u.username, Date.parse(u.createdAt));
  }
  if (j !== index.avatars.length) {
    const avatarOf = new Map(index.avatars);
    for (let i = 0; i < n; i++) avatars[i] = avatarOf.get(names[i]!) ?? null;
  }
  const creatorRows = index.creatorRows ?? index.creators.map((summary) => ({ summary, createdAt: createdAt.get(summary.username)! }));
  const columns = { siteUrl: index.siteUrl, builtAt: index.builtAt, names, suspended, domains, avatars, creatorRows };
  COLUMNS.set(index, columns);
  return columns;
}
