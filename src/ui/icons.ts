// Inline SVG icons for pages: brand marks from simple-icons (CC0) for the common social platforms,
// a generic link icon for any other, and our own badge icons. Inline, so a page makes no request
// for them and needs no script.
import {
  siBandcamp, siBluesky, siCodeberg, siDiscord, siFacebook, siFlickr, siGithub, siGitlab, siInstagram, siKofi, siMastodon,
  siPatreon, siPixiv, siReddit, siSoundcloud, siSpotify, siThreads, siTiktok, siTwitch, siX, siYoutube,
} from 'simple-icons';
import type { Badge } from '../schemas/profile.ts';

interface Icon {
  title: string;
  path: string;
}

const BRANDS: Record<string, Icon> = {
  bandcamp: siBandcamp, bluesky: siBluesky, codeberg: siCodeberg, discord: siDiscord, facebook: siFacebook, flickr: siFlickr,
  github: siGithub, gitlab: siGitlab, instagram: siInstagram, kofi: siKofi, 'ko-fi': siKofi, mastodon: siMastodon,
  patreon: siPatreon, pixiv: siPixiv, reddit: siReddit, soundcloud: siSoundcloud, spotify: siSpotify, threads: siThreads,
  tiktok: siTiktok, twitch: siTwitch, twitter: siX, x: siX, youtube: siYoutube,
};

// A chain link (generic), for websites and platforms without a mark.
const LINK: Icon = {
  title: 'Link',
  path: 'M10.6 13.4a1 1 0 0 1 0-1.4l3.5-3.5a1 1 0 1 1 1.4 1.4L12 13.4a1 1 0 0 1-1.4 0ZM7.8 20.2a4.5 4.5 0 0 1-3.2-7.7l2.5-2.5a1 1 0 1 1 1.4 1.4L6 13.9a2.5 2.5 0 0 0 3.5 3.5L12 15a1 1 0 0 1 1.4 1.4L11 18.9a4.5 4.5 0 0 1-3.2 1.3Zm8.5-6.2a1 1 0 0 1-.7-1.7l2.4-2.4A2.5 2.5 0 0 0 14.5 6.4L12 8.9a1 1 0 1 1-1.4-1.4l2.5-2.5a4.5 4.5 0 0 1 6.4 6.4L17 13.7a1 1 0 0 1-.7.3Z',
};

const svg = (icon: Icon, label: string | null, className: string) =>
  `<svg class="${className}" viewBox="0 0 24 24" width="20" height="20" fill="currentColor" ${label ? `role="img" aria-label="${label}"` : 'aria-hidden="true" focusable="false"'}><path d="${icon.path}"/></svg>`;

/** The icon of a social platform (decorative: the link text names the platform). */
export const socialIcon = (platform: string) => svg(BRANDS[platform] ?? LINK, null, 'icon');

/** A readable platform name: `github` → `GitHub` where simple-icons knows it. */
export const platformName = (platform: string) =>
  BRANDS[platform]?.title ?? (platform === 'website' ? 'Website' : platform.charAt(0).toUpperCase() + platform.slice(1));

const BADGE_ICONS: Record<Badge, Icon> = {
  // A seal with a check.
  verified: { title: 'Verified', path: 'm12 1 2.6 2.2 3.4-.4.9 3.3 3 1.7-1.2 3.2 1.2 3.2-3 1.7-.9 3.3-3.4-.4L12 23l-2.6-2.2-3.4.4-.9-3.3-3-1.7L3.3 13 2.1 9.8l3-1.7.9-3.3 3.4.4Zm-1.2 14.6 6-6-1.4-1.4-4.6 4.6-2.2-2.2-1.4 1.4Z' },
  // A shield with a star.
  official: { title: 'Official', path: 'M12 1 3 4.6v6.6c0 5.6 3.8 10.3 9 11.8 5.2-1.5 9-6.2 9-11.8V4.6Zm0 5 1.7 3.5 3.8.5-2.8 2.6.7 3.8L12 14.6l-3.4 1.8.7-3.8L6.5 10l3.8-.5Z' },
  // A life buoy.
  helper: { title: 'Helper', path: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20Zm0 4a6 6 0 0 1 2.6.6L13 8.2a4 4 0 0 0-2 0L9.4 6.6A6 6 0 0 1 12 6ZM6 12c0-.9.2-1.8.6-2.6L8.2 11a4 4 0 0 0 0 2l-1.6 1.6A6 6 0 0 1 6 12Zm6 6a6 6 0 0 1-2.6-.6l1.6-1.6a4 4 0 0 0 2 0l1.6 1.6A6 6 0 0 1 12 18Zm0-4a2 2 0 1 1 0-4 2 2 0 0 1 0 4Zm5.4.6L15.8 13a4 4 0 0 0 0-2l1.6-1.6a6 6 0 0 1 0 5.2Z' },
};

/** A badge icon with its accessible name. */
export const badgeIcon = (badge: Badge) => svg(BADGE_ICONS[badge], BADGE_ICONS[badge].title, `icon badge-icon badge-${badge}`);
export const badgeLabel = (badge: Badge) => BADGE_ICONS[badge].title;
