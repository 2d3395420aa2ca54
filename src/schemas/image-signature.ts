// What an image file is, from its first bytes: the name says which type we serve it as, the bytes
// must agree. An SVG or HTML page saved as `.png` is text that a browser could run as a document.
import { IMAGE_TYPES } from './common.ts';

/** The image types we accept, as the extensions of IMAGE_TYPES name them (`jpg` and `jpeg` are both JPEG). */
export type ImageKind = 'png' | 'jpeg' | 'gif' | 'webp' | 'avif';

/** How many leading bytes `imageKindOf` needs: enough for an AVIF `ftyp` box with a few compatible brands. */
export const SIGNATURE_BYTES = 64;

const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));

/**
 * The type of an image from its signature: PNG (RFC 2083 §3.1), JPEG (SOI marker FF D8 FF), GIF
 * (`GIF87a`/`GIF89a`), WebP (RIFF container, `WEBP` form type) or AVIF (an ISO BMFF `ftyp` box whose
 * major or compatible brand is `avif` or `avis`). Undefined for anything else.
 */
export function imageKindOf(bytes: Uint8Array): ImageKind | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (starts(0xff, 0xd8, 0xff)) return 'jpeg';
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a')) return 'gif';
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'webp';
  if (bytes.length >= 16 && ascii(bytes, 4, 8) === 'ftyp') {
    const boxEnd = Math.min(bytes.length, new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0));
    // The major brand at 8, a minor version at 12, then compatible brands.
    for (let at = 8; at + 4 <= boxEnd; at += at === 8 ? 8 : 4) {
      const brand = ascii(bytes, at, at + 4);
      if (brand === 'avif' || brand === 'avis') return 'avif';
    }
  }
  return undefined;
}

/** The kind an extension promises: `x.JPG` -> `jpeg`. Undefined for a name without an image extension. */
export function imageKindOfName(file: string): ImageKind | undefined {
  const ext = file.slice(file.lastIndexOf('.') + 1).toLowerCase();
  if (!Object.hasOwn(IMAGE_TYPES, ext)) return undefined;
  return ext === 'jpg' ? 'jpeg' : (ext as ImageKind);
}

const EXTENSION: Record<ImageKind, string> = { png: '.png', jpeg: '.jpg', gif: '.gif', webp: '.webp', avif: '.avif' };
const NAME: Record<ImageKind, string> = { png: 'PNG', jpeg: 'JPEG', gif: 'GIF', webp: 'WebP', avif: 'AVIF' };

/**
 * Why the bytes of `file` are not the image its name promises, with a hint; undefined when they are.
 * The type must match the extension, not only be some image: the server's Content-Type comes from
 * the name, so a JPEG named `.png` would be served as `image/png`.
 */
export function imageSignatureProblem(file: string, head: Uint8Array): { message: string; hint: string } | undefined {
  const promised = imageKindOfName(file);
  if (!promised) return { message: 'is not named as an image', hint: `use one of .${Object.keys(IMAGE_TYPES).join(', .')}` };
  const actual = imageKindOf(head);
  if (actual === promised) return undefined;
  if (actual) {
    return {
      message: `is named as a ${NAME[promised]} image but its bytes are a ${NAME[actual]} image`,
      hint: `rename it to end in \`${EXTENSION[actual]}\` (and the name where it is used), or save it as ${NAME[promised]}`,
    };
  }
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head).replace(/^\uFEFF/, '').trimStart().toLowerCase();
  if (text.startsWith('<')) {
    return {
      message: `is not a ${NAME[promised]} image: its bytes are markup (SVG, HTML or XML), which a browser can run as a page with scripts`,
      hint: `export it as a real ${NAME[promised]} (SVG is refused on purpose); the first bytes of a ${NAME[promised]} file are its signature`,
    };
  }
  return {
    message: `is not a ${NAME[promised]} image: its first bytes are not a PNG, JPEG, GIF, WebP or AVIF signature`,
    hint: `save it again as ${NAME[promised]} with an image editor; renaming a file does not change its type`,
  };
}
