// Content from strangers, generated: profiles whose text comes from every Unicode category (lone
// surrogates, controls, bidirectional controls, invisible characters included), written escaped or
// as raw bytes, then corrupted byte by byte. For each: the check's loader (loadContentFast, with its
// cache, as `npm run check` and `npm run build` both run it) and a fresh read agree; every refusal
// names the file; and what would be published carries no character the schema refuses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadContent, loadContentFast } from '../../src/content/load.ts';
import { formatProblem } from '../../src/content/problems.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { BIDI_CONTROL, LONE_SURROGATE, URL_FORBIDDEN } from '../../src/schemas/common.ts';
import { FIXTURE } from '../support/helpers.ts';

let dir = '';
let cacheFile = '';
beforeAll(() => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'content-property-'));
  dir = path.join(parent, 'content');
  cacheFile = path.join(parent, 'validated.json');
  fs.cpSync(FIXTURE, dir, { recursive: true });
});
afterAll(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

/** One character of any kind a stranger can type or paste, the awkward ones weighted up. */
const char = fc.oneof(
  { weight: 30, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCodePoint(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '\0', '\t', '\n', '\r', '\u0007', '\u001b', '\u007f', '\u0085', '\u00a0', '\u00ad', '\u034f', '\u0301', '\u061c',
      '\u115f', '\u200b', '\u200d', '\u200e', '\u200f', '\u2028', '\u202a', '\u202e', '\u2060', '\u2066', '\u2069',
      '\u2800', '\u3164', '\ufe0f', '\ufeff', '\ufffd', '\ud800', '\udfff', '🌸', '👩\u200d💻', 'é', 'ي', '"', "'", '\\', ':', '#', '&', '{', '[', '-', '*',
    ),
  },
);
const textOf = (max: number) => fc.array(char, { maxLength: max }).map((cs) => cs.join(''));

/** A profile's YAML: each text either escaped (JSON's double-quoted form, which YAML reads) or written raw. */
const profileYaml = fc.record({
  displayName: textOf(70),
  bio: textOf(40),
  path: textOf(12),
  raw: fc.boolean(),
}).map(({ displayName, bio, path: urlPath, raw }) => {
  const scalar = (s: string) => (raw ? `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : JSON.stringify(s));
  return `displayName: ${scalar(displayName)}\ncreatedAt: 2024-11-02T00:00:00Z\nbio: ${scalar(bio)}\nsocials:\n  - platform: site\n    url: ${scalar(`https://example.com/${urlPath}`)}\n`;
});

/** The bytes of a file: the YAML as UTF-8, sometimes corrupted (a byte changed, inserted or cut). */
const edit = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'cut'));
const fileBytes = fc.tuple(profileYaml, fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(edit, { minLength: 1, maxLength: 3 }) }))
  .map(([yaml, edits]) => {
    let bytes = Buffer.from(yaml, 'utf8');
    for (const [at, byte, how] of edits) {
      const i = at % (bytes.length + 1);
      if (how === 'set' && i < bytes.length) { bytes = Buffer.from(bytes); bytes[i] = byte; }
      else if (how === 'insert') bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from([byte]), bytes.subarray(i)]);
      else bytes = bytes.subarray(0, i);
    }
    return bytes;
  });

/** Every string in a public object, with its key. */
function strings(value: unknown, key = ''): [string, string][] {
  if (typeof value === 'string') return [[key, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${key}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, key ? `${key}.${k}` : k));
  return [];
}

// C0 and C1 controls but tab and newline, as text() refuses them.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('generated content from strangers', () => {
  test('check and a fresh read agree, every refusal names the file, and nothing published holds a refused character', async () => {
    const file = path.join(dir, 'profiles', 'bob.yaml');
    await fc.assert(fc.asyncProperty(fileBytes, async (bytes) => {
      fs.writeFileSync(file, bytes);
      const fresh = loadContent(dir);
      const check = await loadContentFast(dir, { cacheFile });
      check.saveCache();
      const again = await loadContentFast(dir, { cacheFile });
      const shown = (r: { problems: Parameters<typeof formatProblem>[0][] }) => r.problems.map((p) => formatProblem(p, dir));
      // One verdict, whether read fresh, by the check, or from its cache.
      expect(shown(check)).toEqual(shown(fresh));
      expect(shown(again)).toEqual(shown(fresh));
      for (const p of check.problems) expect(p.file).toBe(file);
      if (check.problems.length) return;
      const index = buildSiteIndex(check.content, { siteUrl: 'https://profiles.example.net', builtAt: new Date('2026-01-15T12:00:00Z') });
      const bob = index.users.find((u) => u.username === 'bob')!;
      for (const [key, s] of strings(bob)) {
        const allowed = key === 'bio' ? s.replace(/[\t\n]/g, '') : s;
        expect(CONTROL.test(allowed) || BIDI_CONTROL.test(s) || LONE_SURROGATE.test(s), `${key}: ${JSON.stringify(s)}`).toBe(false);
        if (key.endsWith('url') || key.endsWith('Url')) expect(URL_FORBIDDEN.test(s), `${key}: ${JSON.stringify(s)}`).toBe(false);
      }
      expect(/[^\s\u200b-\u200f\u2060\ufeff\u3164\u115f\u2800]/u.test(bob.displayName.replace(/\p{M}/gu, '')), JSON.stringify(bob.displayName)).toBe(true);
    }), { numRuns: 300 });
  }, 120_000);
});
