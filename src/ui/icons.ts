// Inline SVG icons for pages: brand marks from simple-icons (CC0) for the platforms people link to,
// a generic icon for the others, and our own badge icons. Inline, so a page makes no request for
// them and needs no script. Icons are decorative: the text beside each names what it stands for.
import {
  siArtstation, siBandcamp, siBehance, siBluesky, siCodeberg, siDevdotto, siDeviantart, siDiscord, siDribbble, siFacebook,
  siFlickr, siGithub, siGitlab, siGoodreads, siInstagram, siItchdotio, siKeybase, siKick, siKofi, siLetterboxd, siMastodon,
  siMatrix, siMedium, siNpm, siOrcid, siPatreon, siPinterest, siPixiv, siReddit, siSignal, siSnapchat, siSoundcloud, siSpotify,
  siStackoverflow, siSteam, siStrava, siSubstack, siTelegram, siThreads, siTiktok, siTumblr, siTwitch, siVimeo, siWhatsapp,
  siX, siYoutube,
} from 'simple-icons';
import type { Badge } from '../schemas/profile.ts';

interface Icon {
  path: string;
}

interface Platform {
  /** The name as the platform writes it ("LinkedIn", "GitHub", "X"). */
  name: string;
  /** Its mark from simple-icons; absent where simple-icons has none (LinkedIn asked for its removal). */
  icon?: Icon;
}

// Keys are the `platform` values of content (lowercase); several spellings people use map to one.
// A Map, not an object: `constructor` is a valid platform name and must not find Object.prototype's.
const PLATFORMS = new Map<string, Platform>(Object.entries({
  artstation: { name: 'ArtStation', icon: siArtstation },
  bandcamp: { name: 'Bandcamp', icon: siBandcamp },
  behance: { name: 'Behance', icon: siBehance },
  bluesky: { name: 'Bluesky', icon: siBluesky },
  codeberg: { name: 'Codeberg', icon: siCodeberg },
  'dev.to': { name: 'DEV', icon: siDevdotto },
  devto: { name: 'DEV', icon: siDevdotto },
  deviantart: { name: 'DeviantArt', icon: siDeviantart },
  discord: { name: 'Discord', icon: siDiscord },
  dribbble: { name: 'Dribbble', icon: siDribbble },
  email: { name: 'Email' },
  facebook: { name: 'Facebook', icon: siFacebook },
  flickr: { name: 'Flickr', icon: siFlickr },
  github: { name: 'GitHub', icon: siGithub },
  gitlab: { name: 'GitLab', icon: siGitlab },
  goodreads: { name: 'Goodreads', icon: siGoodreads },
  instagram: { name: 'Instagram', icon: siInstagram },
  'itch.io': { name: 'itch.io', icon: siItchdotio },
  itch: { name: 'itch.io', icon: siItchdotio },
  keybase: { name: 'Keybase', icon: siKeybase },
  kick: { name: 'Kick', icon: siKick },
  kofi: { name: 'Ko-fi', icon: siKofi },
  'ko-fi': { name: 'Ko-fi', icon: siKofi },
  letterboxd: { name: 'Letterboxd', icon: siLetterboxd },
  linkedin: { name: 'LinkedIn' },
  mastodon: { name: 'Mastodon', icon: siMastodon },
  matrix: { name: 'Matrix', icon: siMatrix },
  medium: { name: 'Medium', icon: siMedium },
  npm: { name: 'npm', icon: siNpm },
  orcid: { name: 'ORCID', icon: siOrcid },
  patreon: { name: 'Patreon', icon: siPatreon },
  pinterest: { name: 'Pinterest', icon: siPinterest },
  pixiv: { name: 'pixiv', icon: siPixiv },
  reddit: { name: 'Reddit', icon: siReddit },
  signal: { name: 'Signal', icon: siSignal },
  snapchat: { name: 'Snapchat', icon: siSnapchat },
  soundcloud: { name: 'SoundCloud', icon: siSoundcloud },
  spotify: { name: 'Spotify', icon: siSpotify },
  stackoverflow: { name: 'Stack Overflow', icon: siStackoverflow },
  steam: { name: 'Steam', icon: siSteam },
  strava: { name: 'Strava', icon: siStrava },
  substack: { name: 'Substack', icon: siSubstack },
  telegram: { name: 'Telegram', icon: siTelegram },
  threads: { name: 'Threads', icon: siThreads },
  tiktok: { name: 'TikTok', icon: siTiktok },
  tumblr: { name: 'Tumblr', icon: siTumblr },
  twitch: { name: 'Twitch', icon: siTwitch },
  // Twitter is X now; profiles written before the rename say `twitter`.
  twitter: { name: 'X', icon: siX },
  vimeo: { name: 'Vimeo', icon: siVimeo },
  website: { name: 'Website' },
  whatsapp: { name: 'WhatsApp', icon: siWhatsapp },
  x: { name: 'X', icon: siX },
  youtube: { name: 'YouTube', icon: siYoutube },
} satisfies Record<string, Platform>));

// A chain link (generic), for websites and platforms without a mark.
const LINK: Icon = {
  path: 'M10.6 13.4a1 1 0 0 1 0-1.4l3.5-3.5a1 1 0 1 1 1.4 1.4L12 13.4a1 1 0 0 1-1.4 0ZM7.8 20.2a4.5 4.5 0 0 1-3.2-7.7l2.5-2.5a1 1 0 1 1 1.4 1.4L6 13.9a2.5 2.5 0 0 0 3.5 3.5L12 15a1 1 0 0 1 1.4 1.4L11 18.9a4.5 4.5 0 0 1-3.2 1.3Zm8.5-6.2a1 1 0 0 1-.7-1.7l2.4-2.4A2.5 2.5 0 0 0 14.5 6.4L12 8.9a1 1 0 1 1-1.4-1.4l2.5-2.5a4.5 4.5 0 0 1 6.4 6.4L17 13.7a1 1 0 0 1-.7.3Z',
};

// Icons are always decorative (aria-hidden): the visible text next to each is the one accessible name,
// so a screen reader reads a badge or a link once.
const svg = (icon: Icon, className: string) =>
  `<svg class="${className}" viewBox="0 0 24 24" width="20" height="20" fill="currentColor" aria-hidden="true" focusable="false"><path d="${icon.path}"/></svg>`;

/** The icon of a social platform: its brand mark, or a generic link icon. */
export const socialIcon = (platform: string) => svg(PLATFORMS.get(platform)?.icon ?? LINK, 'icon');

/**
 * How the page names a platform: `linkedin` → `LinkedIn`, `twitter` → `X`. `known` is false for a
 * platform we have no name for: then the name is the author's own word, shown as written (user text).
 */
export function platformLabel(platform: string): { name: string; known: boolean } {
  const known = PLATFORMS.get(platform);
  return known ? { name: known.name, known: true } : { name: platform, known: false };
}

const BADGE_ICONS: Record<Badge, Icon> = {
  // A seal with a check.
  verified: { path: 'm12 1 2.6 2.2 3.4-.4.9 3.3 3 1.7-1.2 3.2 1.2 3.2-3 1.7-.9 3.3-3.4-.4L12 23l-2.6-2.2-3.4.4-.9-3.3-3-1.7L3.3 13 2.1 9.8l3-1.7.9-3.3 3.4.4Zm-1.2 14.6 6-6-1.4-1.4-4.6 4.6-2.2-2.2-1.4 1.4Z' },
  // A shield with a star.
  official: { path: 'M12 1 3 4.6v6.6c0 5.6 3.8 10.3 9 11.8 5.2-1.5 9-6.2 9-11.8V4.6Zm0 5 1.7 3.5 3.8.5-2.8 2.6.7 3.8L12 14.6l-3.4 1.8.7-3.8L6.5 10l3.8-.5Z' },
  // A life buoy.
  helper: { path: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20Zm0 4a6 6 0 0 1 2.6.6L13 8.2a4 4 0 0 0-2 0L9.4 6.6A6 6 0 0 1 12 6ZM6 12c0-.9.2-1.8.6-2.6L8.2 11a4 4 0 0 0 0 2l-1.6 1.6A6 6 0 0 1 6 12Zm6 6a6 6 0 0 1-2.6-.6l1.6-1.6a4 4 0 0 0 2 0l1.6 1.6A6 6 0 0 1 12 18Zm0-4a2 2 0 1 1 0-4 2 2 0 0 1 0 4Zm5.4.6L15.8 13a4 4 0 0 0 0-2l1.6-1.6a6 6 0 0 1 0 5.2Z' },
};

const BADGE_LABELS: Record<Badge, string> = { verified: 'Verified', official: 'Official', helper: 'Helper' };

/** A badge's icon: decorative, since the badge's visible label is its name. */
export const badgeIcon = (badge: Badge) => svg(BADGE_ICONS[badge], `icon badge-icon badge-${badge}`);
export const badgeLabel = (badge: Badge) => BADGE_LABELS[badge];

/** Decodes %xx for reading; a malformed escape stays as written. */
function readable(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

// Platforms whose address names the person in more than the last path segment.
const HANDLE_RULES = new Map<string, (segments: string[], host: string) => string | undefined>([
  // Code hosts: `owner` or `owner/repo`, both meaningful.
  ['github', (s) => s.slice(0, 2).join('/')],
  ['gitlab', (s) => s.join('/')],
  ['codeberg', (s) => s.slice(0, 2).join('/')],
  // Fediverse: a handle needs its server (`@alice@mastodon.social`).
  ['mastodon', (s, host) => (s[0]?.startsWith('@') ? `${s[0]}@${host}` : undefined)],
  // `u/alice` and `r/art` are how Reddit writes them.
  ['reddit', (s) => (s.length >= 2 && ['u', 'user', 'r'].includes(s[0]!) ? `${s[0] === 'user' ? 'u' : s[0]}/${s[1]}` : undefined)],
]);

/**
 * The handle a link card shows for `url`: by the platform's rule where it has one, else the last
 * non-empty path segment, else the host without `www.`; a `mailto:` address is its address.
 */
export function linkHandle(platform: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.protocol === 'mailto:') return readable(parsed.pathname);
  const host = parsed.hostname.replace(/^www\./, '');
  const segments = parsed.pathname.split('/').filter(Boolean).map(readable);
  const rule = HANDLE_RULES.get(platform);
  return (rule && segments.length ? rule(segments, host) : undefined) || segments.at(-1) || host;
}

/**
 * The address a link card shows under its label: the URL without its scheme, `www.` or a last `/`,
 * with the host as the browser resolves it. A host written in other scripts shows in its ASCII
 * form (`xn--pple-43d.com` for `аpple.com` with a Cyrillic `а`), so that it cannot pass for a
 * host it only looks like; the rest is as written.
 */
export function linkAddress(url: string): string {
  let host: string;
  try {
    host = new URL(url).host;
  } catch {
    return url;
  }
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return `${host.replace(/^www\./, '')}${rest}`.replace(/\/$/, '');
}
