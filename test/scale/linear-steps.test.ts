// No step of the build is quadratic: each function a build runs over every profile, on generated
// profile sets (fast-check), takes under BOUND times the CPU at K times the profiles. Linear is K
// (16x), n log n about 1.4K, quadratic K² (256x); BOUND is halfway on a log scale (K^1.5, 64x).
// CPU time of this process (process.cpuUsage, user + system, so a thread or a file write counts),
// the least of REPEATS runs. An edit build's plan (planEdit) likewise, over profile files on disk.
// PROPERTY_RUNS and PROPERTY_SEED as elsewhere; SCALE_REPORT=1 prints each step's ratio.
// Not V8's operation counts (test/support/operation-count.ts): they count JavaScript blocks, and an
// `includes` or `indexOf` in a loop is one block however long the list it scans.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import type { PublicUser } from '../../src/schemas/api.ts';
import type { Creator } from '../../src/schemas/index.ts';
import type { Content, DecorationEntry } from '../../src/content/load.ts';
import type { PublicProfile } from '../../src/content/profile-files.ts';
import { buildSiteIndex, columnsOf, type IndexColumns, type SiteIndex } from '../../src/model/site-index.ts';
import { wholeIndexFiles } from '../../src/build/derived.ts';
import { siteSitemap, sitemapXml } from '../../src/ui/sitemap.ts';
import { lookupFiles } from '../../src/api/release-files.ts';
import { prerenderedCreators } from '../../src/api/prerendered.ts';
import { keptIndexOf } from '../../src/build/reuse/kept-index.ts';
import { goneNames, planPages, userInputKey, type PageManifest } from '../../src/build/reuse/page-reuse.ts';
import { AnswerTimes, type AnswerTimesRecord } from '../../src/build/reuse/answer-times.ts';
import { readRecord, writeRecord } from '../../src/build/reuse/record.ts';
import { nameFilterBytes } from '../../src/api/name-filter.ts';
import { CREATORS_ROWS_FILE } from '../../src/api/release-files.ts';
import { USERS_PATH } from '../../src/api/handler.ts';
import { planEdit, type EditInputs } from '../../src/build/reuse/edit-path.ts';
import { stampList } from '../../src/content/file-stamps.ts';
import { digestFiles, folderDigest } from '../../src/content/file-digests.ts';
import { BUILT_AT, SITE_URL } from '../support/helpers.ts';

/** Profiles of the smaller set: large enough that a step's fixed costs do not hide a term in n². */
const N = 1_000;
const K = 16;
/** Measured 4-27x for every step here (9-58x at 32x on a loaded machine); a scan of a list per profile, 300x and more at 32x. */
const BOUND = Math.round(K ** 1.5);
/** Profiles of the smaller edit build: files on disk, written for each run. */
const N_EDIT = 1_000;
const K_EDIT = 8;
const REPEATS = 5;
const RUNS = Number(process.env.PROPERTY_RUNS ?? 2);
/** Writing 17,000 files a run is most of the edit test's time. */
const EDIT_RUNS = Number(process.env.PROPERTY_RUNS ?? 1);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'linear-steps-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }), 60_000);

/** How a profile set varies: drawn by fast-check, then expanded to any size by a seeded generator. */
interface Shape {
  seed: number;
  /** Usernames from 1 to this many characters after a shared prefix (a long prefix makes every comparison walk it). */
  nameLength: number;
  prefix: string;
  avatar: number;
  domain: number;
  suspended: number;
  creator: number;
  decorated: number;
  socials: number;
}
/** At least a quarter: a step quadratic in the profiles with an avatar (say) must have enough of them to show it. */
const rate = fc.double({ min: 0.25, max: 1, noNaN: true });
const shape: fc.Arbitrary<Shape> = fc.record({
  seed: fc.integer(),
  nameLength: fc.integer({ min: 6, max: 24 }),
  prefix: fc.constantFrom('', 'user', 'a-very-long-shared-prefix-'),
  avatar: rate, domain: rate, suspended: fc.double({ min: 0, max: 1, noNaN: true }), creator: rate, decorated: rate,
  socials: fc.integer({ min: 0, max: 8 }),
});

/** mulberry32, as scripts/bench/generate-profiles.ts: the same shape and size make the same set. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DECORATIONS = new Map<string, DecorationEntry>([['sakura', { id: 'sakura', name: 'Sakura', file: 'sakura.png' }], ['neon', { id: 'neon', name: 'Neon', file: 'neon.png' }]]);

/** A validated content of `n` profiles of this shape, in username order as the loader gives it. */
function contentOf(s: Shape, n: number): Content {
  const r = random(s.seed);
  const names = new Set<string>();
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  while (names.size < n) {
    let name = s.prefix;
    const length = 1 + Math.floor(r() * s.nameLength);
    for (let i = 0; i < length; i++) name += letters[Math.floor(r() * letters.length)];
    names.add(name.slice(0, 32)); // USERNAME_PATTERN's length
  }
  const profiles = new Map<string, PublicProfile>();
  const creators = new Map<string, Creator>();
  const views = new Map<string, number>();
  for (const name of [...names].sort()) {
    profiles.set(name, {
      displayName: `Name of ${name}`,
      bio: r() < 0.5 ? '' : `Bio of ${name}. `.repeat(1 + Math.floor(r() * 20)),
      createdAt: new Date(Date.UTC(2015, 0, 1) + Math.floor(r() * 3650) * 86_400_000).toISOString(),
      ...(r() < s.avatar && { avatar: r() < 0.5 ? 'a.png' : `${name}.png` }),
      ...(r() < s.domain && { customDomain: `${name}.example.com` }),
      views: Math.floor(r() * 100_000),
      badges: r() < 0.2 ? ['verified'] : [],
      ...(r() < s.decorated && { decoration: r() < 0.5 ? 'sakura' : 'neon' }),
      socials: Array.from({ length: Math.floor(r() * (s.socials + 1)) }, (_, i) => ({ platform: 'github', url: `https://github.com/${name}${i}` })),
      ...(r() < s.suspended && { suspension: { reason: 'spam', at: '2025-06-30T18:45:00Z' } }),
    } as PublicProfile);
    if (r() < s.creator) creators.set(name, { category: 'art', featured: r() < 0.1 } as Creator);
    if (r() < 0.8) views.set(name, Math.floor(r() * 1000));
  }
  return { dir: work, profiles, creators, decorations: DECORATIONS, views };
}

/** What one size of a shape gives each step, made before any step is timed. */
interface Inputs {
  content: Content;
  index: SiteIndex;
  columns: IndexColumns;
  json: Map<PublicUser, string>;
  manifest: PageManifest;
  pages: string[];
  times: AnswerTimesRecord;
  /** The names with every tenth gone and as many added. */
  nextNames: string[];
  file: string;
}

const FINGERPRINT = 'code';
const inputKeyOf = (u: PublicUser) => userInputKey(`stamp-${u.username}`, u, undefined);

function inputsOf(s: Shape, n: number): Inputs {
  const content = contentOf(s, n);
  const index = buildSiteIndex(content, { siteUrl: SITE_URL, builtAt: BUILT_AT });
  const json = new Map(index.users.map((u) => [u, JSON.stringify(u)]));
  const names = index.users.map((u) => u.username);
  // The served release's manifest and answer times: of the same profiles, a tenth of them changed since.
  const changed = new Set(names.filter((_, i) => !(i % 10)));
  const manifest = planPages(index, FINGERPRINT, undefined, () => [], true, (u) => json.get(u)!, (u) => (changed.has(u.username) ? undefined : inputKeyOf(u))).manifest;
  const answers = new AnswerTimes('2026-01-14T12:00:00.000Z');
  for (const u of index.users) answers.user(u.username, json.get(u)!);
  const nextNames = [...names.filter((_, i) => i % 10), ...names.filter((_, i) => !(i % 10)).map((x) => `${x}-new`)].sort();
  return {
    content, index, columns: columnsOf(index), json, manifest, pages: names.map((x) => `${x}.html`), times: answers.record(), nextNames,
    file: path.join(work, `record-${n}.ndjson`),
  };
}

/** Each step over every profile, as a build runs it; fresh objects each call, so no cache of a call before answers. */
const STEPS: Record<string, (i: Inputs) => unknown> = {
  'the public index (buildSiteIndex)': (i) => buildSiteIndex(i.content, { siteUrl: SITE_URL, builtAt: BUILT_AT }),
  'the index columns (columnsOf)': (i) => columnsOf({ ...i.index }),
  'the pages made from the whole index: sitemaps, browse pages (wholeIndexFiles, sitemapXml)': (i) => {
    const c = { ...i.columns };
    return [wholeIndexFiles(c).routes, siteSitemap(c).map((part) => sitemapXml(c.siteUrl, part))];
  },
  'which of them an edit makes again (wholeIndexFiles with the served columns)': (i) => {
    const c = i.columns;
    const before = { names: c.names.slice(1), suspended: Array.from(c.suspended).slice(1), domains: c.domains.slice(1) };
    return wholeIndexFiles({ ...c }, { names: true, listed: true, media: false, creators: false, before }).routes;
  },
  'the lookup tables, creators rows and filter of names (lookupFiles)': (i) => lookupFiles({ ...i.columns }),
  'the creators list\'s first page (prerenderedCreators)': (i) => prerenderedCreators({ ...i.columns }, () => i.index.builtAt),
  'the filter of names (nameFilterBytes)': (i) => nameFilterBytes(i.columns.names),
  'the kept index (keptIndexOf)': (i) => keptIndexOf(i.index, FINGERPRINT, 'others', (x) => `stamp-${x}`, () => undefined, () => null, [], null, []),
  'which pages to render (planPages)': (i) => planPages(i.index, FINGERPRINT, i.manifest, () => i.pages, true, (u) => i.json.get(u)!, inputKeyOf),
  'the answer times (AnswerTimes)': (i) => {
    const times = new AnswerTimes(BUILT_AT.toISOString(), i.times);
    for (const u of i.index.users) times.user(u.username, i.json.get(u)!);
    return times.record();
  },
  'the names gone (goneNames)': (i) => goneNames(i.columns.names, i.nextNames),
  'the record written and read (writeRecord, readRecord)': (i) => {
    writeRecord(i.file, { manifest: i.manifest, times: i.times, kept: undefined, files: undefined });
    return readRecord(i.file);
  },
};

// Each run starts with cold caches, at both sizes: otherwise the smaller set stays in the CPU's
// caches (2 MB L2, 32 MB L3 here) and the larger does not, and a linear merge of names measured
// 31-38x at 8x the names, warm, against 4-6x cold.
const EVICT = new Uint8Array(64 << 20);
let touched = 0;
function coldCaches(): void {
  for (let i = 0; i < EVICT.length; i += 64) touched += EVICT[i]!++;
}

/** CPU microseconds of one run of `step` on `inputs`, caches cold: the least of REPEATS runs. */
function cpu(step: (i: Inputs) => unknown, inputs: Inputs): number {
  let least = Infinity;
  for (let r = 0; r < REPEATS; r++) {
    coldCaches();
    const before = process.cpuUsage();
    step(inputs);
    const used = process.cpuUsage(before);
    least = Math.min(least, used.user + used.system);
  }
  return least;
}

/** The same for a step that waits (on a thread of this process, whose CPU counts). */
async function cpuAwaited(step: () => Promise<unknown>): Promise<number> {
  let least = Infinity;
  for (let r = 0; r < REPEATS; r++) {
    coldCaches();
    const before = process.cpuUsage();
    await step();
    const used = process.cpuUsage(before);
    least = Math.min(least, used.user + used.system);
  }
  return least;
}

/**
 * A content folder of the shape's `n` profiles on disk and the record of the release served from
 * it, and then one profile edited, one added and one removed: what an edit build plans from.
 */
function editOf(s: Shape, n: number): EditInputs<undefined> {
  const dir = path.join(work, `edit-${n}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'profiles'), { recursive: true });
  const content = contentOf(s, n);
  // Plain profiles: an edit path keeps a profile's avatar, decoration and domain as they were.
  for (const [name, p] of content.profiles) {
    content.profiles.set(name, { displayName: p.displayName, bio: p.bio, createdAt: p.createdAt, views: 0, badges: [], socials: [] } as unknown as PublicProfile);
  }
  content.creators.clear();
  content.views.clear();
  const file = (name: string) => path.join(dir, 'profiles', `${name}.yaml`);
  for (const [name, p] of content.profiles) fs.writeFileSync(file(name), `displayName: ${JSON.stringify(p.displayName)}\ncreatedAt: ${p.createdAt}\n`);
  const index = buildSiteIndex(content, { siteUrl: SITE_URL, builtAt: BUILT_AT });
  const names = index.users.map((u) => u.username);
  const stamps = stampList(names.map(file));
  const at = new Map(names.map((name, i) => [name, i]));
  const others = folderDigest(digestFiles(dir, [], undefined));
  const kept = keptIndexOf(index, FINGERPRINT, others, (x) => stamps.stamps[at.get(x)!] ?? undefined, () => undefined, () => null, [], { name: names[0]!, full: false }, []);
  kept.stamps[1] = 'edited since';
  fs.rmSync(file(names[2]!));
  fs.writeFileSync(file('zzzzzzzzzzzzzzzzzzzzzzzzz-added'), 'displayName: Added\ncreatedAt: 2020-01-01T00:00:00Z\n');
  const served = new Map([[CREATORS_ROWS_FILE, JSON.stringify({ siteUrl: SITE_URL, rows: [] })], [`${USERS_PATH.slice(1)}/${names[0]}`, JSON.stringify({ data: index.users[0] })]]);
  return {
    contentDir: dir, kept: () => kept, digests: () => undefined, meanwhile: () => undefined, fingerprint: FINGERPRINT, builtAt: BUILT_AT, siteUrl: SITE_URL,
    cacheFile: path.join(dir, 'no-cache.json'), readServed: (f) => (served.has(f) ? Buffer.from(served.get(f)!) : undefined), settleMs: 0,
  };
}

describe('no step of the build is quadratic in the number of profiles', () => {
  test(`${K}x the profiles is under ${BOUND}x the CPU time of each step (${N} and ${K * N} profiles)`, () => {
    const seen: string[] = [];
    fc.assert(fc.property(shape, (s) => {
      const small = inputsOf(s, N);
      const large = inputsOf(s, K * N);
      for (const [name, step] of Object.entries(STEPS)) {
        step(small); // compiled before it is timed
        step(small);
        const ratio = cpu(step, large) / cpu(step, small);
        seen.push(`${name}: ${ratio.toFixed(1)}x`);
        expect(ratio, name).toBeLessThan(BOUND);
      }
    }), { numRuns: RUNS, endOnFailure: true, ...(process.env.PROPERTY_SEED && { seed: Number(process.env.PROPERTY_SEED) }) });
    if (process.env.SCALE_REPORT) console.log(seen.join('\n'));
  }, 60_000);

  test(`${K_EDIT}x the profiles is under ${Math.round(K_EDIT ** 1.5)}x the CPU time of an edit build's plan (planEdit; ${N_EDIT} and ${K_EDIT * N_EDIT} profile files)`, async () => {
    const seen: string[] = [];
    await fc.assert(fc.asyncProperty(shape, async (s) => {
      const [small, large] = [editOf(s, N_EDIT), editOf(s, K_EDIT * N_EDIT)];
      const plan = await planEdit(small);
      // The edit path, not a reason to read every profile: one edited, one added, one removed.
      expect('reason' in plan ? plan.reason : 'unchanged' in plan ? 'unchanged' : plan.changed.length).toBe(2);
      expect('removed' in plan && plan.removed).toHaveLength(1);
      const ratio = await cpuAwaited(() => planEdit(large)) / await cpuAwaited(() => planEdit(small));
      seen.push(`planEdit: ${ratio.toFixed(1)}x`);
      expect(ratio).toBeLessThan(Math.round(K_EDIT ** 1.5));
      for (const i of [small, large]) fs.rmSync(i.contentDir, { recursive: true, force: true });
    }), { numRuns: EDIT_RUNS, endOnFailure: true, ...(process.env.PROPERTY_SEED && { seed: Number(process.env.PROPERTY_SEED) }) });
    if (process.env.SCALE_REPORT) console.log(seen.join('\n'));
  }, 60_000);
});
