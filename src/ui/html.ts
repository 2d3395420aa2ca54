// HTML escaping for the few places we write markup ourselves. Astro escapes only `&` and `"` in
// attributes; we escape `<` and `>` too, so no profile text ever appears as a tag anywhere in a page.
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** `<meta>` tags from [attribute, key, value] triples, fully escaped. */
export const metaTags = (tags: [attr: 'name' | 'property', key: string, value: string][]) =>
  tags.map(([attr, key, value]) => `<meta ${attr}="${escapeHtml(key)}" content="${escapeHtml(value)}">`).join('');
