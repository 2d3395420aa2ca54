// Writes the generated preview images named by og-image.ts: one 400x400 PNG per (hue, glyph) used
// by a profile that needs one. Cheap at 100,000 profiles:
// - each glyph is rasterised once (resvg, 16 per render, each render in a thread of its own:
//   og-glyph-worker.ts says why) into a coverage mask, deflated once;
// - a PNG is then that mask as palette indices (colour type 3) plus a 256-colour palette blending
//   the hue to white: per file, only the palette and the chunk checksums are computed.
// Fonts are the build machine's (resvg's system font loading); a letter no font has is drawn as the
// generic person, never as a missing-glyph box.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Worker } from 'node:worker_threads';
import { OG_IMAGE_SIZE, OG_IMAGES_PATH, generatedPreviewFile, previewFileOf, previewGlyph, previewHue } from './og-image.ts';
import type { SiteIndex } from '../model/site-index.ts';
import { GLYPHS_PER_WORKER, type GlyphJob } from './og-glyph-worker.ts';
import { avatarRgb } from './default-avatar.ts';

const SIZE = OG_IMAGE_SIZE;
/** A code point no font has (plane 16 private use): its rendering is the fonts' missing-glyph box. */
const MISSING = '\u{10fffd}';

/** Coverage masks (one byte per pixel, 0..255) of `glyphs`, rendered in a thread of their own. */
async function renderMasks(glyphs: (string | null)[]): Promise<Uint8Array[]> {
  const job: GlyphJob = { glyphs, size: SIZE };
  const worker = new Worker(new URL('./og-glyph-worker.ts', import.meta.url), { workerData: job });
  try {
    const bytes = await new Promise<ArrayBuffer>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the glyph thread stopped (exit code ${code})`)));
    });
    return glyphs.map((_, i) => new Uint8Array(bytes, i * SIZE * SIZE, SIZE * SIZE));
  } finally {
    await worker.terminate();
  }
}

/** The zlib stream of a mask as 8-bit palette rows, each with filter type 0 (none). */
function idatOf(mask: Uint8Array): Buffer {
  const raw = Buffer.alloc(SIZE * (SIZE + 1));
  for (let y = 0; y < SIZE; y++) raw.set(mask.subarray(y * SIZE, (y + 1) * SIZE), y * (SIZE + 1) + 1);
  return zlib.deflateSync(raw);
}

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(zlib.crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const IHDR = (() => {
  const data = Buffer.alloc(13);
  data.writeUInt32BE(SIZE, 0);
  data.writeUInt32BE(SIZE, 4);
  data.set([8, 3, 0, 0, 0], 8); // 8-bit, palette, deflate, adaptive filtering, no interlace
  return chunk('IHDR', data);
})();
const IEND = chunk('IEND', new Uint8Array(0));

/** Palette entry i: the background blended toward white by i/255 (the glyph's coverage). */
function palette(hue: number): Buffer {
  const [r, g, b] = avatarRgb(hue);
  const out = Buffer.alloc(256 * 3);
  for (let i = 0; i < 256; i++) {
    out[i * 3] = Math.round(r + ((255 - r) * i) / 255);
    out[i * 3 + 1] = Math.round(g + ((255 - g) * i) / 255);
    out[i * 3 + 2] = Math.round(b + ((255 - b) * i) / 255);
  }
  return chunk('PLTE', out);
}

/**
 * Writes into `dir` the preview of every profile in `users` (those without a usable avatar),
 * shared by (hue, glyph), but those `have` says exist already (a file's name says what is in it).
 * Returns the names of every preview the profiles use.
 */
export async function writePreviewImages(dir: string, users: Iterable<{ username: string; displayName: string }>, have: (file: string) => boolean = () => false): Promise<string[]> {
  const wanted = new Map<string, { hue: number; glyph: string | null; username: string }>();
  const all = new Set<string>();
  for (const u of users) {
    const hue = previewHue(u.username);
    const glyph = previewGlyph(u.displayName);
    const file = generatedPreviewFile(hue, glyph);
    if (all.has(file)) continue;
    all.add(file);
    if (!have(file)) wanted.set(file, { hue, glyph, username: u.username });
  }
  if (!wanted.size) return [...all];
  // The glyphs in renders of GLYPHS_PER_WORKER, each deflated at once so only one render's masks are
  // held. The first render starts with the missing-glyph box and the person.
  const glyphs = [MISSING, null, ...new Set([...wanted.values()].map((w) => w.glyph).filter((g) => g !== null))];
  const idats = new Map<string | null, Buffer>();
  let missing: Uint8Array | undefined;
  for (let start = 0; start < glyphs.length; start += GLYPHS_PER_WORKER) {
    const batch = glyphs.slice(start, start + GLYPHS_PER_WORKER);
    const masks = await renderMasks(batch);
    for (let i = 0; i < batch.length; i++) {
      const glyph = batch[i]!;
      const mask = masks[i]!;
      if (glyph === MISSING) { missing = mask; continue; }
      // A glyph no font has renders as the missing box, or as nothing: it is drawn as the person.
      const drawn = glyph === null || !(mask.every((v) => v === 0) || Buffer.compare(mask, missing!) === 0);
      idats.set(glyph, drawn ? chunk('IDAT', idatOf(mask)) : idats.get(null)!);
    }
  }
  fs.mkdirSync(dir, { recursive: true });
  const palettes = new Map<number, Buffer>();
  for (const [file, { hue, glyph, username }] of wanted) {
    let plte = palettes.get(hue);
    if (!plte) palettes.set(hue, plte = palette(hue));
    try {
      fs.writeFileSync(path.join(dir, file), Buffer.concat([SIGNATURE, IHDR, plte, idats.get(glyph)!, IEND]));
    } catch (e) {
      // A failure here comes from a profile's content (its display name names the file): say whose.
      throw new Error(`could not write the link preview of profiles/${username}.yaml (its \`displayName\`'s initial) as ${file}: ${(e as Error).message}`, { cause: e });
    }
  }
  return [...all];
}

/**
 * The build step: writes under `clientDir` (OG_IMAGES_PATH) the generated preview of every profile
 * whose page names one (`previewImage`), but those `have` says the release has already (a layered
 * release, src/release/layers.ts). Returns the names of every preview the pages use.
 */
export function writeProfilePreviews(clientDir: string, index: SiteIndex, avatarsDir: string, have?: (file: string) => boolean): Promise<string[]> {
  const avatarFiles = new Map(index.avatars);
  // Only which previews are generated (previewImage's rule): their names are made once, below.
  const needing = index.users.filter((u) => previewFileOf(avatarsDir, u, avatarFiles.get(u.username)) !== null);
  return writePreviewImages(path.join(clientDir, ...OG_IMAGES_PATH.split('/').filter(Boolean)), needing, have);
}
