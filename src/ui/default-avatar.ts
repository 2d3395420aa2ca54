// The generated avatar of a profile without an image: its first letter on a colour picked from the
// username, as a small SVG. Served with a CSP that forbids script (SVG_CSP in src/http/headers.ts).

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.codePointAt(0)};`);

/** The first character as a person sees it (an emoji with its modifiers is one); made when first needed, since making it costs ~9 ms of every process's start. */
let graphemes: Intl.Segmenter | undefined;

export function initialOf(displayName: string): string {
  const name = displayName.trim();
  // An ASCII character followed by ASCII (or nothing) is a grapheme of its own: most names, without the
  // segmenter, which cost 1.6 s over 100,000 names in a rebuild's previews.
  if (name.length > 0 && name.charCodeAt(0) < 0x7f && !(name.charCodeAt(1) >= 0x7f)) return name[0]!.toUpperCase();
  const first = (graphemes ??= new Intl.Segmenter('en', { granularity: 'grapheme' })).segment(name)[Symbol.iterator]().next();
  return first.done ? '?' : first.value.segment.toLocaleUpperCase('en');
}

/** A stable hue from the username (FNV-1a), so the same profile keeps its colour across builds. */
export function hueOf(username: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < username.length; i++) h = Math.imul(h ^ username.charCodeAt(i), 0x01000193);
  return (h >>> 0) % 360;
}

/** The background's saturation, and its lightness unless white on it would read too faintly. */
const SATURATION = 0.55;
const LIGHTNESS = 0.42;
/**
 * The least contrast of the white initial on the background: WCAG asks 3:1 of large text; a little
 * more, since the initial is also shown small (56 px in the creators list).
 */
const MIN_CONTRAST = 3.5;

/** `hsl(hue 55% l)` as 8-bit RGB. */
function hslRgb(hue: number, l: number): [number, number, number] {
  const a = SATURATION * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

/** White's contrast on an 8-bit sRGB colour (WCAG 2 relative luminance). */
function whiteContrast([r, g, b]: [number, number, number]): number {
  const lin = (c: number) => { const v = c / 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 1.05 / (0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b) + 0.05);
}

/**
 * The background of a generated avatar of `hue` as 8-bit RGB, the SVG's and the preview PNG's: 42%
 * light, or darker in steps of 1% where white on it would be under MIN_CONTRAST (yellows and
 * greens, 2.6:1 at 42%).
 */
export function avatarRgb(hue: number): [number, number, number] {
  let rgb = hslRgb(hue, LIGHTNESS);
  for (let l = LIGHTNESS - 0.01; whiteContrast(rgb) < MIN_CONTRAST; l -= 0.01) rgb = hslRgb(hue, l);
  return rgb;
}

/** `inline`: for a page that names the image itself (its wrapper has role="img"), so it is hidden from assistive tech. */
export function defaultAvatarSvg(username: string, displayName: string, { inline = false } = {}): string {
  const hue = hueOf(username);
  const a11y = inline ? 'aria-hidden="true"' : `role="img" aria-label="${escapeXml(displayName)}"`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256" ${a11y}>`
    + `<rect width="256" height="256" fill="rgb(${avatarRgb(hue).join(' ')})"/>`
    + `<text x="50%" y="50%" dy=".35em" text-anchor="middle" font-family="system-ui, sans-serif" font-size="120" font-weight="600" fill="#fff">${escapeXml(initialOf(displayName))}</text>`
    + `</svg>`;
}
