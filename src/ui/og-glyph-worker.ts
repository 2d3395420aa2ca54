// The worker thread of og-image-png.ts: rasterises up to GLYPHS_PER_WORKER glyphs with resvg in one
// render and posts their coverage masks back. A thread per render because resvg's native memory
// (its font database, ~14 MB, and the canvas) is freed only when its objects are collected, which
// V8 does not hurry: in one thread 320 glyphs raised the peak by 294 MB; a thread per 16 glyphs
// keeps it at +89 MB for 320 or 844 glyphs, at ~9 ms per glyph.
import { parentPort, workerData } from 'node:worker_threads';
import { Resvg } from '@resvg/resvg-js';

export interface GlyphJob {
  glyphs: (string | null)[];
  size: number;
}

/** Cells per row of the canvas: 4x4 cells of 400 px, a 10 MB canvas (8x8 peaked at +183 MB). */
export const GRID = 4;
export const GLYPHS_PER_WORKER = GRID * GRID;

/** A head and shoulders, in the 256-unit box of the default avatar. */
const PERSON = '<circle cx="128" cy="98" r="42"/><path d="M48 214c0-44 36-72 80-72s80 28 80 72z"/>';

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.codePointAt(0)};`);

/** A glyph cell as the default avatar draws it (default-avatar.ts), in white on nothing; null is the person. */
const cell = (glyph: string | null, x: number, y: number, size: number) =>
  `<svg x="${x}" y="${y}" width="${size}" height="${size}" viewBox="0 0 256 256" fill="#fff">`
  + (glyph === null
    ? PERSON
    : `<text x="128" y="128" dy=".35em" text-anchor="middle" font-family="system-ui, DejaVu Sans, Noto Sans, sans-serif" font-size="120" font-weight="600">${escapeXml(glyph)}</text>`)
  + '</svg>';

if (parentPort) {
  const { glyphs, size } = workerData as GlyphJob;
  const cols = Math.min(GRID, glyphs.length);
  const rows = Math.ceil(glyphs.length / GRID);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${cols * size}" height="${rows * size}">`
    + glyphs.map((g, i) => cell(g, (i % GRID) * size, Math.floor(i / GRID) * size, size)).join('') + '</svg>';
  const rgba = new Resvg(svg, { font: { loadSystemFonts: true }, logLevel: 'off' }).render().pixels;
  // The alpha channel is the coverage: mask i is bytes [i * size², (i + 1) * size²).
  const masks = new Uint8Array(glyphs.length * size * size);
  const stride = cols * size * 4;
  for (let i = 0; i < glyphs.length; i++) {
    const x0 = (i % GRID) * size * 4;
    const y0 = Math.floor(i / GRID) * size;
    for (let y = 0; y < size; y++) {
      const row = (y0 + y) * stride + x0;
      const out = (i * size + y) * size;
      for (let x = 0; x < size; x++) masks[out + x] = rgba[row + x * 4 + 3]!;
    }
  }
  parentPort.postMessage(masks.buffer, [masks.buffer]);
}
