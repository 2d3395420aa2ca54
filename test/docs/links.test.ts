// Every relative link in the Markdown of the repository (README, docs/, the folders' READMEs) names
// a file that exists and, into a Markdown file, a heading it has: a reader follows them to find a
// behaviour by its name, and a file moved or a heading renamed breaks them silently.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../support/helpers.ts';

const markdownFiles = () => [
  'README.md',
  ...['docs', 'src', 'test', 'scripts'].flatMap((dir) => fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md')).map((f) => path.join(dir, f))),
];

/** Text outside fenced code blocks, where a `](…)` is no link. */
const prose = (file: string) => fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as `-`; a repeated one gets `-1`, `-2`. */
function headingAnchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of prose(file).matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const slug = m[1]!.trim().toLowerCase().replace(/<[^>]+>/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n ? `${slug}-${n}` : slug);
  }
  return anchors;
}

describe('the documentation\'s links', () => {
  test('every relative link names a file that exists, and a heading of it that exists', () => {
    const files = markdownFiles();
    expect(files).toContain(path.join('docs', 'scale.md'));
    const broken: string[] = [];
    const anchors = new Map<string, Set<string>>();
    for (const file of files) {
      const at = path.join(ROOT, file);
      for (const m of prose(at).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [to, anchor] = target.split('#') as [string, string | undefined];
        const resolved = to ? path.resolve(path.dirname(at), decodeURI(to)) : at;
        if (!fs.existsSync(resolved)) { broken.push(`${file}: ${target} (no such file)`); continue; }
        if (!anchor || !resolved.endsWith('.md')) continue;
        if (!anchors.has(resolved)) anchors.set(resolved, headingAnchors(resolved));
        if (!anchors.get(resolved)!.has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
