// Markdown of the OpenAPI descriptions, rendered at build time for /docs. Some descriptions come
// from the content schemas (src/schemas), so no raw HTML may pass: markdown-it with `html: false`
// writes a tag in the source as escaped text, and its link check refuses `javascript:`, `vbscript:`,
// `file:` and non-image `data:` addresses.
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });

/** A description that may hold paragraphs or lists, as block HTML. */
export const markdownBlock = (text: string): string => md.render(text);

/** A short description for a table cell or a line of text: inline HTML, no `<p>` around it. */
export const markdownInline = (text: string): string => md.renderInline(text);
