// The public objects, built field by field from validated content. Nothing is spread from the
// source data, so `private:` (or anything else) can never slip into an answer, a page or a file.
import { BADGES, type Badge, type Profile } from '../schemas/index.ts';
import type { CreatorSummary, PublicUser } from '../schemas/api.ts';
import type { Content } from '../content/load.ts';
import { generatedPreview } from '../ui/og-image.ts';

const DAY_MS = 86_400_000;

export interface PublicContext {
  /** The public base address, without a trailing slash. */
  siteUrl: string;
  /** The build time: `accountAgeDays` counts the UTC dates up to its date. */
  builtAt: Date;
  /**
   * Where image addresses lead: `handler` (default) to `/api/avatar?u=` and `/api/decoration?f=`,
   * which the on-demand handler answers; `files` to the files the build writes under `/media/`,
   * for a host with files only (`DEPLOY_TARGET=static`), where the handler's addresses are 404s.
   */
  media?: MediaAddresses;
}

export type MediaAddresses = 'handler' | 'files';

export const avatarUrl = (siteUrl: string, username: string) => `${siteUrl}/api/avatar?u=${username}`;
export const decorationUrl = (siteUrl: string, file: string) => `${siteUrl}/api/decoration?f=${encodeURIComponent(file)}`;
/** The image addresses of a build for `target` (src/config.ts DEPLOY_TARGETS): files where no handler runs. */
export const mediaAddressesFor = (target: string): MediaAddresses => (target === 'static' ? 'files' : 'handler');
/** An avatar as a file of the build: its image under /media/avatars, or the generated PNG of its initial (og-image.ts) for a profile without one. */
export const avatarFileUrl = (siteUrl: string, username: string, displayName: string, file: string | undefined) =>
  file === undefined ? generatedPreview(siteUrl, username, displayName).url : `${siteUrl}/media/avatars/${encodeURIComponent(file)}`;
export const decorationFileUrl = (siteUrl: string, file: string) => `${siteUrl}/media/decorations/${encodeURIComponent(file)}`;
export const profilePageUrl = (siteUrl: string, username: string) => `${siteUrl}/p/${username}`;

/**
 * Days from the UTC date of `createdAt` to the UTC date of the build: it moves only when the date
 * does, so builds within a day leave every unchanged user file byte for byte as it was (docs/api.md).
 */
export const accountAgeDays = (createdAt: Date, builtAt: Date): number =>
  Math.max(0, Math.floor(builtAt.getTime() / DAY_MS) - Math.floor(createdAt.getTime() / DAY_MS));

export function toPublicUser(username: string, profile: Profile, content: Content, ctx: PublicContext): PublicUser {
  const createdAt = new Date(profile.createdAt);
  const decoration = profile.decoration ? content.decorations.get(profile.decoration) : undefined;
  const suspension = profile.suspension;
  const files = ctx.media === 'files';
  return {
    username,
    displayName: profile.displayName,
    bio: profile.bio,
    avatarUrl: files ? avatarFileUrl(ctx.siteUrl, username, profile.displayName, profile.avatar) : avatarUrl(ctx.siteUrl, username),
    pageUrl: profile.customDomain ? `https://${profile.customDomain}` : profilePageUrl(ctx.siteUrl, username),
    hasCustomDomain: profile.customDomain !== undefined,
    customDomain: profile.customDomain ?? null,
    accountAgeDays: accountAgeDays(createdAt, ctx.builtAt),
    createdAt: createdAt.toISOString(),
    views: content.views.get(username) ?? profile.views,
    badges: publicBadges(profile.badges),
    avatarDecoration: decoration
      ? { id: decoration.id, name: decoration.name, file: decoration.file, url: (files ? decorationFileUrl : decorationUrl)(ctx.siteUrl, decoration.file) }
      : null,
    socials: profile.socials.map((s) => ({ platform: s.platform, url: s.url })),
    status: suspension ? 'suspended' : 'active',
    banInfo: suspension
      ? { isBanned: true, reason: suspension.reason, message: suspension.message ?? null, bannedAt: new Date(suspension.at).toISOString() }
      : { isBanned: false, reason: null, message: null, bannedAt: null },
  };
}

function publicBadges(held: readonly Badge[]): PublicUser['badges'] {
  return {
    isVerified: held.includes('verified'),
    isOfficial: held.includes('official'),
    isHelper: held.includes('helper'),
    list: BADGES.filter((b) => held.includes(b)),
  };
}

/** The creators list entry, made from the public user so both always agree. */
export function toCreatorSummary(user: PublicUser, category: string, featured: boolean): CreatorSummary {
  return {
    username: user.username,
    displayName: user.displayName,
    avatarUrl: user.avatarUrl,
    pageUrl: user.pageUrl,
    badges: { ...user.badges, list: [...user.badges.list] },
    views: user.views,
    category,
    featured,
  };
}

const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** Featured first, then most views, then display name, then username: a total order, so pages never repeat or skip. */
export function compareCreators(a: CreatorSummary, b: CreatorSummary): number {
  return Number(b.featured) - Number(a.featured)
    || b.views - a.views
    || byName.compare(a.displayName, b.displayName)
    || (a.username < b.username ? -1 : a.username > b.username ? 1 : 0);
}
