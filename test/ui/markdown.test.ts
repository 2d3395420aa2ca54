import { describe, expect, test } from 'vitest';
import { markdownBlock, markdownInline } from '../../src/ui/markdown.ts';

describe('markdown of the API descriptions', () => {
  test('backticks become <code>, with the text inside escaped', () => {
    expect(markdownInline('Follow `links.next` to page on; `<b>` and `a & b`.')).toMatchInlineSnapshot(
      `"Follow <code>links.next</code> to page on; <code>&lt;b&gt;</code> and <code>a &amp; b</code>."`,
    );
  });

  test('raw HTML is shown as text, never passed through', () => {
    expect(markdownInline('a <script>alert(1)</script> <b onclick="x()">b</b> <!-- c -->')).toMatchInlineSnapshot(
      `"a &lt;script&gt;alert(1)&lt;/script&gt; &lt;b onclick=&quot;x()&quot;&gt;b&lt;/b&gt; &lt;!-- c --&gt;"`,
    );
    expect(markdownBlock('<div>\n<img src=x onerror=alert(1)>\n</div>')).not.toMatch(/<(div|img)/);
  });

  test('a javascript: link is not made a link', () => {
    expect(markdownInline('[click](javascript:alert(1))')).not.toContain('<a');
    expect(markdownInline('[RFC 8288](https://www.rfc-editor.org/rfc/rfc8288)')).toBe('<a href="https://www.rfc-editor.org/rfc/rfc8288">RFC 8288</a>');
  });

  test('inline has no paragraph around it; block keeps paragraphs', () => {
    expect(markdownInline('one line')).toBe('one line');
    expect(markdownBlock('first\n\nsecond')).toBe('<p>first</p>\n<p>second</p>\n');
  });
});
