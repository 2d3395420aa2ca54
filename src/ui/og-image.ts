// The link-preview image (`og:image`) of a profile page. Preview crawlers (Facebook, LinkedIn,
// Slack, X) skip SVG and small images (X: at least 144x144 for a `summary` card), so a page names:
// - its avatar image, when that is a PNG, JPEG or GIF of at least 144 px each way;
// - otherwise a generated PNG: the default avatar (first letter on the username's colour) at
//   400x400, written by the build (og-image-png.ts) at a static address, so static hosts serve it.
// The generated images are shared by (letter, colour): a few hundred files for 100,000 profiles.
import fs from 'node:fs';
import path from 'node:path';
import { hueOf, initialOf } from './default-avatar.ts';
import { imageDimensions, imageKindOf } from '../schemas/image-signature.ts';

/** Side of the generated images: above every crawler's minimum, small to write. */
export const OG_IMAGE_SIZE = 400;
/** X's minimum for a `summary` card image; Facebook and LinkedIn ask for less for a square. */
export const MIN_PREVIEW_SIZE = 144;
/** Where the build writes the generated images, below the site root. */
export const OG_IMAGES_PATH = '/media/og';
/** Hues of generated images are rounded to this step, so at most 36 colours exist per letter. */
export const HUE_STEP = 10;

export interface PreviewImage {
  url: string;
  /** Made by the build (og-image-png.ts), not the avatar file. */
  generated: boolean;
  width: number;
  height: number;
  type: string;
}

/** The hue of a generated preview: the avatar's, to the nearest HUE_STEP degrees (invisible at this size). */
export const previewHue = (username: string) => (Math.round(hueOf(username) / HUE_STEP) * HUE_STEP) % 360;

/** Letters and digits are drawn; an emoji or symbol gets a generic person (fonts for them vary). */
const DRAWN = /^[\p{L}\p{N}]/u;
/**
 * Code points of the longest initial drawn (a letter with its marks: Vietnamese takes 3, an Indic
 * cluster up to 6). A letter under 63 combining marks is one grapheme, and named the preview file
 * by its code points: past the 255 bytes of a file name, the build failed with ENAMETOOLONG.
 */
export const MAX_GLYPH_CODE_POINTS = 8;

/** The glyph drawn on a generated preview: the display name's initial, or null for the generic person. */
export function previewGlyph(displayName: string): string | null {
  const initial = initialOf(displayName);
  return DRAWN.test(initial) && [...initial].length <= MAX_GLYPH_CODE_POINTS ? initial : null;
}

/** The file name of a generated preview, from its colour and glyph: `210-4b.png`, `30-person.png`. */
export function generatedPreviewFile(hue: number, glyph: string | null): string {
  const glyphPart = glyph === null ? 'person' : [...glyph].map((c) => c.codePointAt(0)!.toString(16)).join('-');
  return `${hue}-${glyphPart}.png`;
}

/** The generated preview of a profile: what its page names when the avatar cannot be used. */
export function generatedPreview(siteUrl: string, username: string, displayName: string): PreviewImage {
  const file = generatedPreviewFile(previewHue(username), previewGlyph(displayName));
  return { url: `${siteUrl}${OG_IMAGES_PATH}/${file}`, generated: true, width: OG_IMAGE_SIZE, height: OG_IMAGE_SIZE, type: 'image/png' };
}

interface ImageSize {
  type: 'image/png' | 'image/jpeg' | 'image/gif';
  width: number;
  height: number;
}

const PREVIEW_TYPES = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif' } as const;

/**
 * The size of a PNG, GIF or JPEG from its first bytes (the content check's own reading,
 * `imageDimensions`); undefined for other types, which crawlers skip, or when the bytes end first.
 */
export function imageSize(bytes: Uint8Array): ImageSize | undefined {
  const kind = imageKindOf(bytes);
  if (kind !== 'png' && kind !== 'jpeg' && kind !== 'gif') return undefined;
  const dims = imageDimensions(kind, bytes);
  return dims && { type: PREVIEW_TYPES[kind], ...dims };
}

/** Bytes read from an avatar to find its size: enough for PNG and GIF, and for most JPEGs... */
const HEAD_BYTES = 4 * 1024;
/** ...whose frame header may follow a long EXIF block. */
const JPEG_HEAD_BYTES = 64 * 1024;
const avatarSizes = new Map<string, ImageSize | undefined>();

/**
 * The size of an avatar file in `avatarsDir`, from its first bytes only (cheap at 100,000 profiles),
 * never through a link (as src/content/read-file.ts reads content); remembered per file.
 */
export function avatarImageSize(avatarsDir: string, file: string): ImageSize | undefined {
  if (avatarSizes.has(file)) return avatarSizes.get(file);
  let size: ImageSize | undefined;
  try {
    const fd = fs.openSync(path.join(avatarsDir, file), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const head = new Uint8Array(JPEG_HEAD_BYTES);
      const regular = fs.fstatSync(fd).isFile();
      let n = regular ? fs.readSync(fd, head, 0, HEAD_BYTES, 0) : 0;
      size = imageSize(head.subarray(0, n));
      if (!size && n === HEAD_BYTES && head[0] === 0xff && head[1] === 0xd8) {
        n += fs.readSync(fd, head, n, JPEG_HEAD_BYTES - n, n);
        size = imageSize(head.subarray(0, n));
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    size = undefined;
  }
  avatarSizes.set(file, size);
  return size;
}

/** What previews and pages need of a profile; `status` absent counts as active. */
export interface PreviewUser {
  username: string;
  displayName: string;
  status?: string;
}

/**
 * The avatar file a page and its preview show: none for a suspended profile, whose page shows only
 * the generated default (the chosen picture may be the impersonation or the spam itself).
 */
export const shownAvatar = (user: PreviewUser, avatarFile: string | undefined) => (user.status === 'suspended' ? undefined : avatarFile);

/**
 * The `og:image` of a profile: its avatar as published under /media/avatars when crawlers accept it
 * (PNG, JPEG or GIF, at least MIN_PREVIEW_SIZE each way) and the profile is not suspended, else its
 * generated preview.
 */
export function previewImage(
  siteUrl: string,
  user: PreviewUser,
  avatarsDir: string,
  avatarFile: string | undefined,
): PreviewImage {
  avatarFile = shownAvatar(user, avatarFile);
  const size = avatarPreviewSize(avatarsDir, avatarFile);
  if (avatarFile && size) return { url: `${siteUrl}/media/avatars/${encodeURIComponent(avatarFile)}`, generated: false, ...size };
  return generatedPreview(siteUrl, user.username, user.displayName);
}

/** The generated preview file a profile's page names (previewImage's rule), or null: its avatar is the preview. */
export function previewFileOf(avatarsDir: string, user: PreviewUser, avatarFile: string | undefined): string | null {
  return avatarPreviewSize(avatarsDir, shownAvatar(user, avatarFile)) ? null : generatedPreviewFile(previewHue(user.username), previewGlyph(user.displayName));
}

/** The size of the avatar when it can be the preview itself (previewImage), else undefined: the preview is generated. */
export function avatarPreviewSize(avatarsDir: string, avatarFile: string | undefined): ImageSize | undefined {
  const size = avatarFile === undefined ? undefined : avatarImageSize(avatarsDir, avatarFile);
  return size && Math.min(size.width, size.height) >= MIN_PREVIEW_SIZE ? size : undefined;
}
