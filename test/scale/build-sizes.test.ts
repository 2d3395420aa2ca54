// What a build writes for one profile does not depend on how many others there are, and no file a
// build keeps for the next one holds every profile in one line (issue 31: at 1,000,000 profiles one
// JSON string of them passed V8's limit on a string's length). Two builds of the benchmark's
// generated content, SMALL profiles and LARGE (its first SMALL are the same at any count), with the
// same SITE_URL and build time, and lines of ROWS profiles (BUILD_ROWS_PER_LINE) so that a few
// hundred profiles make many lines.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { validationCacheFile } from '../../src/config.ts';
import { isWholeIndexFile } from '../../src/build/derived.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { releasePath, servedRelease } from '../../src/release/releases.ts';
import { buildFixture, workDir } from '../support/built-server.ts';
import { ROOT } from '../support/helpers.ts';
import { isPacked } from '../../src/release/coded-file.ts';
import type { IndexColumns } from '../../src/model/site-index.ts';
import { LOOKUP_BUCKETS, LOOKUP_DIR, USER_NAMES_FILE, lookupFiles } from '../../src/api/release-files.ts';
import { BITS_PER_NAME } from '../../src/api/name-filter.ts';
import { SITEMAP_MAX_URLS, siteSitemap, sitemapXml } from '../../src/ui/sitemap.ts';
import { BROWSE_PAGE_SIZES, browsePages } from '../../src/ui/browse.ts';

const SMALL = 100;
const LARGE = 3 * SMALL;
const ROWS = 10;

const work = workDir('build-sizes');
const content = (n: number) => path.join(work, `content-${n}`);
const dist = (n: number) => path.join(work, `dist-${n}`);

/** Every file under `dir`, relative to it with `/`. */
const filesUnder = (dir: string) =>
  fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/')).sort();

/** A content folder's validation cache: its file, and the files or folders named after it beside it, whatever their extension. */
function cacheEntries(dir: string): string[] {
  const file = validationCacheFile(ROOT, dir);
  const stem = path.basename(file, path.extname(file));
  const folder = path.dirname(file);
  return fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => f.startsWith(stem)).map((f) => path.join(folder, f)) : [];
}
const cacheFiles = (dir: string) => cacheEntries(dir).flatMap((at) => (fs.statSync(at).isDirectory() ? filesUnder(at).map((g) => path.join(at, g)) : [at]));
const removeCache = (dir: string) => { for (const at of cacheEntries(dir)) fs.rmSync(at, { recursive: true, force: true }); };

beforeAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  for (const n of [SMALL, LARGE]) {
    const gen = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'bench', 'generate-profiles.ts'), String(n), content(n)], { encoding: 'utf8' });
    expect(gen.status, gen.stderr).toBe(0);
    removeCache(content(n));
    // Stamps trusted at once (BUILD_SETTLE_MS=0) in both builds: whether the files just generated are
    // old enough to be trusted otherwise depends on the machine's speed, and a trusted stamp adds a
    // column (the page manifest's input keys), which made one build's lines longer than the other's.
    const r = buildFixture(content(n), dist(n), { BUILD_ROWS_PER_LINE: String(ROWS), BUILD_SETTLE_MS: '0' });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  }
}, 120_000);
afterAll(() => {
  for (const n of [SMALL, LARGE]) removeCache(content(n));
  fs.rmSync(work, { recursive: true, force: true });
});

const layoutOf = (n: number) => buildLayout(releasePath(dist(n), servedRelease(dist(n))!));

/** Bytes of the longest line of `files`. */
function longestLine(files: string[]): number {
  let longest = 0;
  for (const file of files) {
    const bytes = fs.readFileSync(file);
    for (let at = 0; at < bytes.length;) {
      const end = bytes.indexOf(10, at);
      const next = end < 0 ? bytes.length : end;
      longest = Math.max(longest, next - at);
      at = next + 1;
    }
  }
  return longest;
}

describe('no file a build keeps holds every profile in one line', () => {
  // One line of every profile is 3x as long at 3x the profiles; lines of ROWS profiles stay alike.
  const GROWTH = 1.2;

  test('the release record (server/record.ndjson)', () => {
    const [small, large] = [SMALL, LARGE].map((n) => longestLine([layoutOf(n).record]));
    // ROWS per line: more lines than a head and one line of every profile.
    expect(fs.readFileSync(layoutOf(SMALL).record, 'utf8').split('\n').length).toBeGreaterThan(SMALL / ROWS);
    expect(large, `longest line: ${small} bytes at ${SMALL} profiles, ${large} at ${LARGE}`).toBeLessThanOrEqual(small * GROWTH);
  });

  test('the validation cache (node_modules/.cache/profile-lookup)', () => {
    const [smallFiles, largeFiles] = [SMALL, LARGE].map((n) => cacheFiles(content(n)));
    expect(smallFiles.length).toBeGreaterThan(0);
    const [small, large] = [longestLine(smallFiles!), longestLine(largeFiles!)];
    expect(large, `longest line: ${small} bytes at ${SMALL} profiles, ${large} at ${LARGE}`).toBeLessThanOrEqual(small * GROWTH);
  });
});

describe('what a build writes for one profile does not depend on the others', () => {
  test(`every file of a build of ${SMALL} profiles but those made from the whole index is byte-equal in a build of ${LARGE} with the same first ${SMALL}`, () => {
    const [small, large] = [layoutOf(SMALL).client, layoutOf(LARGE).client];
    const compared: string[] = [];
    for (const file of filesUnder(small)) {
      // The home page, sitemaps, browse pages, API description, lookup tables, creators list.
      if (isWholeIndexFile(file)) continue;
      const theirs = path.join(large, file);
      expect(fs.existsSync(theirs), `${file} is missing at ${LARGE} profiles`).toBe(true);
      expect(fs.readFileSync(theirs).equals(fs.readFileSync(path.join(small, file))), `${file} differs at ${LARGE} profiles`).toBe(true);
      compared.push(file);
    }
    // Each profile's page and answer, with their compressed codings inside (src/release/coded-file.ts), and the preview images.
    const names = Array.from({ length: SMALL }, (_, i) => `user${String(i).padStart(6, '0')}`);
    for (const name of names) {
      for (const file of [`p/${name}.html`, `api/v1/users/${name}`]) {
        expect(compared).toContain(file);
        expect(isPacked(fs.readFileSync(path.join(small, file))), file).toBe(true);
      }
    }
    expect(compared.filter((f) => f.startsWith('media/og/')).length).toBeGreaterThan(0);
  });
});

/** Columns of `n` profiles as the benchmark makes them: a third with an avatar of their own, 5% suspended, 5% with a custom domain. */
function columns(n: number): IndexColumns {
  const names = Array.from({ length: n }, (_, i) => `user${String(i).padStart(7, '0')}`);
  return {
    siteUrl: 'https://profiles.example.net', builtAt: '2026-01-15T12:00:00.000Z', names,
    suspended: Uint8Array.from(names, (_, i) => (i % 20 === 7 ? 1 : 0)),
    domains: names.map((x, i) => (i % 20 === 3 ? `${x}.example.com` : null)),
    avatars: names.map((x, i) => (i % 3 === 0 ? `${x}.png` : null)),
    creatorRows: [],
  };
}

describe('the files made from the whole index', () => {
  // Past one sitemap file (50,000 URLs): 60,000 and 180,000 profiles.
  const [n, large] = [60_000, 180_000];
  const [small, big] = [columns(n), columns(large)];

  test('no sitemap file or browse page grows with the profiles: the sitemaps split at 50,000 URLs at most, the pages at 2,000 names', () => {
    const longest = (c: IndexColumns) => Math.max(...siteSitemap(c).map((f) => sitemapXml(c.siteUrl, f).length));
    for (const c of [small, big]) {
      for (const f of siteSitemap(c)) expect((sitemapXml(c.siteUrl, f).match(/<loc>/g) ?? []).length, f.path).toBeLessThanOrEqual(SITEMAP_MAX_URLS);
      expect(Math.max(...browsePages(c.names).map((p) => p.names.length))).toBeLessThanOrEqual(BROWSE_PAGE_SIZES.max);
    }
    // At most a file of the most addresses a file holds, each as long as the site's longest.
    const longestName = big.names.reduce((a, b) => (b.length > a.length ? b : a));
    expect(longest(big)).toBeLessThanOrEqual(sitemapXml(big.siteUrl, { path: '/sitemap-1.xml', index: false, entries: Array(SITEMAP_MAX_URLS).fill(longestName) }).length);
  });

  test(`the lookup tables grow by 1/${LOOKUP_BUCKETS} of the profiles a file, spread evenly; the filter of names by ${BITS_PER_NAME} bits a name`, () => {
    const sizes = (c: IndexColumns) => {
      const files = lookupFiles(c);
      const buckets = [...files].filter(([f]) => f.startsWith(`${LOOKUP_DIR}/avatars/`)).map(([, text]) => (text as string).length);
      return { buckets, filter: (files.get(USER_NAMES_FILE) as Uint8Array).byteLength };
    };
    const [a, b] = [sizes(small), sizes(big)];
    for (const s of [a, b]) {
      expect(s.buckets).toHaveLength(LOOKUP_BUCKETS);
      // Spread evenly: no file holds much more than its share (the largest: 1.46x the mean at 60,000, 1.25x at 180,000, 1.14x at 1,000,000).
      const mean = s.buckets.reduce((x, y) => x + y, 0) / s.buckets.length;
      expect(Math.max(...s.buckets)).toBeLessThanOrEqual(mean * 1.5);
    }
    expect(Math.max(...b.buckets)).toBeLessThanOrEqual(Math.max(...a.buckets) * (large / n) * 1.1);
    expect(b.filter).toBeLessThanOrEqual(16 + Math.ceil((large * BITS_PER_NAME) / 8));
  });
});
