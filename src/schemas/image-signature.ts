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

/**
 * The largest side, in pixels, of an avatar or decoration: they are shown a few hundred pixels
 * wide, and 4096 leaves room for any screen. A PNG that declares 40,000 px a side in 194 KB is a
 * decompression bomb for every browser and crawler that opens the page's image.
 */
export const MAX_IMAGE_SIDE = 4096;

/** Reads `length` bytes of the file at `offset` (fewer at its end). */
export type ReadAt = (offset: number, length: number) => Uint8Array;

/** Bytes read from the start to find an image's size: a JPEG's frame header may follow a long EXIF block. */
const HEAD_BYTES = 64 * 1024;

const u32be = (b: Uint8Array, at: number) => ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;
const u16le = (b: Uint8Array, at: number) => b[at]! + (b[at + 1]! << 8);
const u24le = (b: Uint8Array, at: number) => u16le(b, at) + (b[at + 2]! << 16);

/** Width and height from the header of an image of `kind`; undefined when the header is not there. */
export function imageDimensions(kind: ImageKind, head: Uint8Array): { width: number; height: number } | undefined {
  switch (kind) {
    case 'png': // IHDR, the first chunk (RFC 2083 §4.1.1)
      return head.length >= 24 && ascii(head, 12, 16) === 'IHDR' ? { width: u32be(head, 16), height: u32be(head, 20) } : undefined;
    case 'gif':
      return head.length >= 10 ? gifExtent(head) : undefined;
    case 'jpeg': { // the first SOFn marker's frame size
      let at = 2;
      while (at + 9 <= head.length) {
        if (head[at] !== 0xff) return undefined;
        const marker = head[at + 1]!;
        if (marker === 0xff) { at++; continue; }
        if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
          return { height: (head[at + 5]! << 8) + head[at + 6]!, width: (head[at + 7]! << 8) + head[at + 8]! };
        }
        at += 2 + (head[at + 2]! << 8) + head[at + 3]!;
      }
      return undefined;
    }
    case 'webp': { // the first chunk: VP8X (extended), VP8L (lossless) or VP8 (lossy)
      if (head.length < 30) return undefined;
      const chunk = ascii(head, 12, 16);
      if (chunk === 'VP8X') return { width: u24le(head, 24) + 1, height: u24le(head, 27) + 1 };
      if (chunk === 'VP8L' && head[20] === 0x2f) {
        const bits = head[21]! | (head[22]! << 8) | (head[23]! << 16) | (head[24]! << 24);
        return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
      }
      if (chunk === 'VP8 ') return { width: u16le(head, 26) & 0x3fff, height: u16le(head, 28) & 0x3fff };
      return undefined;
    }
    case 'avif': { // the image spatial extent property, `ispe`
      for (let at = 4; at + 16 <= head.length; at++) {
        if (head[at] === 0x69 && ascii(head, at, at + 4) === 'ispe') return { width: u32be(head, at + 8), height: u32be(head, at + 12) };
      }
      return undefined;
    }
  }
}

/**
 * A GIF's size: its logical screen, grown to every frame's right and bottom edge that `head` holds
 * (GIF89a §18, §20). A browser draws a first frame larger than the screen at the frame's size: a
 * 29-byte GIF of a 1×1 screen and a 65535×65535 frame passed as 1×1.
 */
function gifExtent(head: Uint8Array): { width: number; height: number } {
  let width = u16le(head, 6);
  let height = u16le(head, 8);
  if (head.length < 13) return { width, height };
  const table = (packed: number) => (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0);
  /** Past a block's data sub-blocks (a size byte, that many bytes, until a zero). */
  const skipSubBlocks = (at: number) => {
    while (at < head.length && head[at] !== 0) at += head[at]! + 1;
    return at + 1;
  };
  let at = 13 + table(head[10]!);
  while (at < head.length) {
    const block = head[at];
    if (block === 0x21) at = skipSubBlocks(at + 2); // an extension: its label, then data
    else if (block === 0x2c && at + 10 <= head.length) { // an image descriptor
      width = Math.max(width, u16le(head, at + 1) + u16le(head, at + 5));
      height = Math.max(height, u16le(head, at + 3) + u16le(head, at + 7));
      at = skipSubBlocks(at + 10 + table(head[at + 9]!) + 1); // its colour table, the LZW code size, the data
    } else break; // the trailer, or what the head does not hold
  }
  return { width, height };
}

/** Whether the file ends where its format says it ends: a truncated upload is refused, not published. */
function endsWhole(kind: ImageKind, size: number, at: ReadAt): boolean {
  const tail = at(Math.max(0, size - 12), 12);
  switch (kind) {
    case 'png': // the IEND chunk, always these 12 bytes
      return tail.length === 12 && [0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82].every((b, i) => tail[i] === b);
    case 'jpeg': // the EOI marker
      return tail.length >= 2 && tail[tail.length - 2] === 0xff && tail[tail.length - 1] === 0xd9;
    case 'gif': // the trailer
      return tail.length >= 1 && tail[tail.length - 1] === 0x3b;
    case 'webp': { // the RIFF size covers the file exactly
      const head = at(0, 8);
      return head.length === 8 && head[4]! + (head[5]! << 8) + (head[6]! << 16) + ((head[7]! << 24) >>> 0) + 8 === size;
    }
    case 'avif': { // the top-level boxes cover the file exactly
      let offset = 0;
      for (let boxes = 0; offset < size && boxes < 1000; boxes++) {
        const header = at(offset, 16);
        if (header.length < 8) return false;
        let boxSize = u32be(header, 0);
        if (boxSize === 1 && header.length === 16) boxSize = u32be(header, 8) * 2 ** 32 + u32be(header, 12);
        else if (boxSize === 0) boxSize = size - offset;
        if (boxSize < 8) return false;
        offset += boxSize;
      }
      return offset === size;
    }
  }
}

/**
 * Why an image file of `size` bytes (read through `at`) cannot be published, with a hint: its
 * bytes are not the type its name says, it is cut short, or it is larger than MAX_IMAGE_SIDE.
 */
export function imageProblem(file: string, size: number, at: ReadAt): { message: string; hint: string } | undefined {
  const head = at(0, Math.min(size, HEAD_BYTES));
  const bad = imageSignatureProblem(file, head.subarray(0, SIGNATURE_BYTES));
  if (bad) return bad;
  const kind = imageKindOf(head)!;
  if (!endsWhole(kind, size, at)) {
    return {
      message: `is not one whole ${NAME[kind]} image: the file does not end where the image does (cut short by an upload or copy, or with bytes added after its end)`,
      hint: `export or copy the image again; a whole ${NAME[kind]} file ends with its format's end marker, with nothing after it`,
    };
  }
  const dims = imageDimensions(kind, head);
  if (!dims) {
    return {
      message: `is a ${NAME[kind]} image whose size in pixels could not be read from its first ${HEAD_BYTES / 1024} KB`,
      hint: 'save it again with an image editor, without large embedded metadata',
    };
  }
  if (dims.width < 1 || dims.height < 1) {
    return {
      message: `is ${dims.width}×${dims.height} px: an image with no pixels shows nothing`,
      hint: 'export the image again from an image editor',
    };
  }
  if (dims.width > MAX_IMAGE_SIDE || dims.height > MAX_IMAGE_SIDE) {
    return {
      message: `is ${dims.width}×${dims.height} px: an image may be at most ${MAX_IMAGE_SIDE} px a side`,
      hint: 'scale it down: it is shown at most a few hundred pixels wide (512 px is plenty)',
    };
  }
  return undefined;
}
