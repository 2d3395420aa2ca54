// An incremental build serves what a full build (PROFILES_INCREMENTAL=0) of the same content, day
// and code serves, byte for byte: whatever changed, in whatever order. Random sequences of changes
// to every kind of content file (images replaced under the same name, view counts, creators,
// custom domains, suspensions, profiles edited, added and removed), a new UTC day and new code
// (the BUILD_CODE_SALT test hook), each followed by `npm run build`; then a full build of the last
// state in a fresh folder, and every file the two serve compared through their layers. Black-box:
// only the build's command and what it serves. PROPERTY_RUNS and PROPERTY_STEPS make a longer run,
// PROPERTY_TARGET=static builds for a static host, PROPERTY_SEED replays a run.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { locator, releaseFiles } from '../../src/release/layers.ts';
import { readReleaseInfo, releasePath, releasesDir, servedRelease } from '../../src/release/releases.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { validationCacheFile } from '../../src/config.ts';
import { Builder, spawnBuilder, type Rebuilt } from '../../src/build/rebuilds.ts';
import { TEST_SITE_URL, buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT, unpackedEntries } from '../support/helpers.ts';
import { makePng } from '../support/png.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 3);
const STEPS = Number(process.env.PROPERTY_STEPS ?? 4);
/** Sequences through `npm start`'s builder: fewer, since each also starts a builder process. */
const BUILDER_RUNS = Math.max(1, Math.ceil(RUNS / 2));
/** The deploy target built: `node` (layered releases, the edit path); PROPERTY_TARGET=static for a host with files only. */
const TARGET = process.env.PROPERTY_TARGET ?? 'node';
// 2026-01-15T13:00:00Z: the first build's time; each step a minute later, or a day.
const FIRST = 1768482000;

/** The profiles a sequence may hold: the fixture's and three more. alice keeps its avatar file in use. */
const NAMES = ['alice', 'bob', 'carol', 'dave', 'erin_99', 'frank', 'kate', 'amy', 'nina_2', 'zed'] as const;

type Change =
  | { kind: 'avatar' | 'decoration'; size: number; seed: number }
  | { kind: 'views'; who: number; count: number | null }
  | { kind: 'creator' | 'domain' | 'suspension' | 'uses-avatar' | 'remove' | 'add' | 'touch'; who: number }
  | { kind: 'edit'; who: number; n: number }
  | { kind: 'day' | 'code' };

const who = fc.nat({ max: NAMES.length - 1 });
// Images weighted up: a page made from an image's bytes is what a key of names misses.
const change: fc.Arbitrary<Change> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('avatar' as const, 'decoration' as const), size: fc.constantFrom(64, 160, 300), seed: fc.nat({ max: 1000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('views' as const), who, count: fc.option(fc.nat({ max: 99_999 })) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('creator' as const, 'domain' as const, 'suspension' as const, 'uses-avatar' as const, 'remove' as const, 'add' as const, 'touch' as const), who }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('edit' as const), who, n: fc.nat({ max: 1000 }) }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: 'day' as const }, { kind: 'code' as const }) },
);
/**
 * One step: changes, then a build; `settled`: whether the build trusts stamps of files written a
 * moment ago (BUILD_SETTLE_MS=0); `told`: whether it is told the files changed since the served
 * release (CHANGED_FILES, as `npm start` and the post-merge hook tell it): every one, or all but one,
 * which the check after the build must find.
 */
const step = fc.record({
  changes: fc.array(change, { minLength: 1, maxLength: 3 }),
  settled: fc.boolean(),
  told: fc.constantFrom('no' as const, 'all' as const, 'all but one' as const),
});

/** A profile file as its top-level entries (a key's line and the indented lines under it). */
const entries = (text: string) => text.split(/\n(?! )/).filter((e) => e !== '');
const setEntry = (text: string, key: string, entry: string | null) =>
  `${[...entries(text).filter((e) => !e.startsWith(`${key}:`)), ...(entry === null ? [] : [entry])].join('\n')}\n`;
const has = (text: string, key: string) => entries(text).some((e) => e.startsWith(`${key}:`));

/** A content folder and the build settings a sequence has reached. */
class State {
  epoch = FIRST;
  salt = '';
  readonly content: string;
  constructor(content: string) {
    this.content = content;
  }
  file = (...parts: string[]) => path.join(this.content, ...parts);
  profile = (name: string) => this.file('profiles', `${name}.yaml`);
  exists = (name: string) => fs.existsSync(this.profile(name));
  editProfile(name: string, edit: (text: string) => string) {
    fs.writeFileSync(this.profile(name), edit(fs.readFileSync(this.profile(name), 'utf8')));
  }
  views(): Map<string, string> {
    const text = fs.existsSync(this.file('stats', 'views.yaml')) ? fs.readFileSync(this.file('stats', 'views.yaml'), 'utf8') : '';
    return new Map(text.split('\n').filter((l) => /^\w+: /.test(l)).map((l) => [l.slice(0, l.indexOf(':')), l]));
  }
  writeViews(lines: Map<string, string>) {
    // A file of no counts is a problem (an empty file): none at all is not.
    if (!lines.size) return fs.rmSync(this.file('stats', 'views.yaml'), { force: true });
    fs.writeFileSync(this.file('stats', 'views.yaml'), `# machine-written view counts\n${[...lines.values()].sort().join('\n')}\n`);
  }

  apply(c: Change): void {
    if (c.kind === 'day') return void (this.epoch += 86_400);
    if (c.kind === 'code') return void (this.salt = this.salt ? '' : 'other-code');
    if (c.kind === 'avatar' || c.kind === 'decoration') {
      return fs.writeFileSync(c.kind === 'avatar' ? this.file('avatars', 'alice.png') : this.file('decorations', 'sakura.png'), makePng(c.size, c.size, c.seed));
    }
    if (!('who' in c)) return;
    const name = NAMES[c.who]!;
    if (c.kind === 'add') {
      if (!this.exists(name)) fs.writeFileSync(this.profile(name), `displayName: "New ${name}"\ncreatedAt: 2024-0${1 + (c.who % 9)}-02T00:00:00Z\n`);
      return;
    }
    if (!this.exists(name)) return;
    switch (c.kind) {
      case 'views': {
        const lines = this.views();
        if (c.count === null) lines.delete(name);
        else lines.set(name, `${name}: ${c.count}`);
        return this.writeViews(lines);
      }
      case 'creator': {
        const file = this.file('creators', `${name}.yaml`);
        if (fs.existsSync(file)) fs.rmSync(file);
        else fs.writeFileSync(file, `category: ${c.who % 2 ? 'music' : 'art'}\nfeatured: ${c.who % 3 === 0}\n`);
        return;
      }
      case 'domain':
        return this.editProfile(name, (t) => setEntry(t, 'customDomain', has(t, 'customDomain') ? null : `customDomain: ${name.replace('_', '-')}.example.org`));
      case 'suspension':
        return this.editProfile(name, (t) => setEntry(t, 'suspension', has(t, 'suspension') ? null : 'suspension:\n  reason: spam\n  at: 2026-01-10T00:00:00Z'));
      case 'uses-avatar':
        if (name === 'alice') return;
        return this.editProfile(name, (t) => setEntry(t, 'avatar', has(t, 'avatar') ? null : 'avatar: alice.png'));
      case 'edit':
        return this.editProfile(name, (t) => setEntry(t, c.n % 2 ? 'displayName' : 'bio', c.n % 2 ? `displayName: "Name ${c.n}"` : `bio: "Bio ${c.n}, with <b>markup</b>"`));
      case 'touch':
        return this.editProfile(name, (t) => t);
      case 'remove': {
        // alice keeps the avatar file in use; a profile's creator file and view count go with it.
        if (name === 'alice') return;
        fs.rmSync(this.profile(name));
        fs.rmSync(this.file('creators', `${name}.yaml`), { force: true });
        const lines = this.views();
        if (lines.delete(name)) this.writeViews(lines);
      }
    }
  }

  /** Applies `changes`; returns the content files they changed (relative, with `/`), by stamp or bytes. */
  applyAll(changes: Change[]): string[] {
    const was = this.files();
    for (const c of changes) this.apply(c);
    const now = this.files();
    return [...new Set([...was.keys(), ...now.keys()])].filter((f) => was.get(f) !== now.get(f)).sort();
  }

  /** Each file of the content folder (relative, with `/`): its stamp and bytes. */
  files(): Map<string, string> {
    return new Map(fs.readdirSync(this.content, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => {
      const file = path.join(e.parentPath, e.name);
      return [path.relative(this.content, file).split(path.sep).join('/'), `${fs.statSync(file).mtimeMs}:${fs.readFileSync(file, 'base64')}`];
    }));
  }

  build(dist: string, env: Record<string, string> = {}) {
    const r = buildFixture(this.content, dist, { SOURCE_DATE_EPOCH: String(this.epoch), BUILD_CODE_SALT: this.salt, DEPLOY_TARGET: TARGET, ...env });
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    if (process.env.DEBUG_IEF) console.log(JSON.stringify(env), r.stdout);
    return r;
  }
}

/** Every file the served release of `dist` serves (through its layers), with its bytes. */
function served(dist: string): Map<string, Buffer> {
  const id = servedRelease(dist)!;
  const client = buildLayout(releasePath(dist, id)).client;
  const layers = readReleaseInfo(dist, id)?.layers;
  const at = locator(releasesDir(dist), client, layers);
  return new Map(releaseFiles(releasesDir(dist), client, layers).sort().flatMap((f) => unpackedEntries(f, fs.readFileSync(path.join(at(f)!, f)))).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const ENCODED = /\.(br|gz)$/;
const decode = (file: string, bytes: Buffer) => (file.endsWith('.br') ? zlib.brotliDecompressSync(bytes) : file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes);
/** A pre-rendered answer: its `meta.timestamp` is when its data last changed (answer-times.ts), which only an incremental build remembers. */
const isAnswer = (file: string) => file.startsWith('api/v1/users/') || file === 'service-api/v1/creators';
const timestampOf = (bytes: Buffer) => (JSON.parse(bytes.toString('utf8')) as { meta: { timestamp: string } }).meta.timestamp;
const withoutTimestamp = (bytes: Buffer) => {
  const answer = JSON.parse(bytes.toString('utf8')) as { meta: { timestamp?: string } };
  delete answer.meta.timestamp;
  return JSON.stringify(answer);
};

/**
 * The incremental build's served files against the full build's: the same names; every file the
 * same bytes, but an answer's timestamp; every compressed file the bytes of its original.
 */
function expectSameServed(ours: Map<string, Buffer>, full: Map<string, Buffer>, context: string) {
  expect([...ours.keys()], context).toEqual([...full.keys()]);
  for (const [file, bytes] of ours) {
    const original = file.replace(ENCODED, '');
    if (isAnswer(original)) {
      if (file !== original) expect(decode(file, bytes).equals(ours.get(original)!), `${context}: ${file} is not ${original} compressed`).toBe(true);
      else expect(withoutTimestamp(bytes), `${context}: ${file}`).toBe(withoutTimestamp(full.get(file)!));
    } else {
      expect(bytes.equals(full.get(file)!), `${context}: ${file} differs from the full build's`).toBe(true);
    }
  }
}

/**
 * Each answer's timestamp is the time of the build that last changed its data: the one before's if
 * its data is the same as then, else this build's.
 */
function expectAnswerTimes(now: Map<string, Buffer>, before: Map<string, Buffer>, builtAt: string, context: string) {
  for (const [file, bytes] of now) {
    if (!isAnswer(file) || ENCODED.test(file)) continue;
    const was = before.get(file);
    const expected = was && withoutTimestamp(was) === withoutTimestamp(bytes) ? timestampOf(was) : builtAt;
    expect(timestampOf(bytes), `${context}: ${file}'s timestamp`).toBe(expected);
  }
}

const work = workDir('incremental-equals-full');
/** The content folders made here, whose validation caches go with them. */
const contents: string[] = [];
let firstDist = '';
beforeAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  // One first build, copied for each sequence.
  const first = new State(path.join(work, 'first-content'));
  contents.push(first.content);
  fs.cpSync(FIXTURE, first.content, { recursive: true });
  firstDist = path.join(work, 'first', 'dist');
  first.build(firstDist);
}, 120_000);
afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  for (const content of contents) {
    const base = validationCacheFile(ROOT, content).replace(/\.json$/, '');
    for (const suffix of ['.json', '-views.json', '-creators.json']) fs.rmSync(`${base}${suffix}`, { force: true });
  }
});

/** A sequence's folder: the fixture as content, and a copy of the first build (`a/dist`) to build on. */
function sequenceFolder(name: string) {
  const dir = path.join(work, name);
  const content = path.join(dir, 'content');
  contents.push(content);
  fs.cpSync(path.join(work, 'first'), path.join(dir, 'a'), { recursive: true, verbatimSymlinks: true });
  fs.cpSync(FIXTURE, content, { recursive: true });
  return { dir, state: new State(content), dist: path.join(dir, 'a', 'dist') };
}

describe('an incremental build', () => {
  test(`serves what a full build of the same content, day and code serves (${TARGET}: ${RUNS} sequences of up to ${STEPS} builds)`, () => {
    let run = 0;
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: STEPS }), (steps) => {
      const { dir, state, dist } = sequenceFolder(`run-${run++}`);
      let before = served(dist);
      steps.forEach(({ changes, settled, told }, k) => {
        const changed = state.applyAll(changes);
        const listed = told === 'all but one' ? changed.slice(1) : changed;
        state.epoch += 60;
        state.build(dist, {
          ...(settled && { BUILD_SETTLE_MS: '0' }),
          ...(told !== 'no' && { CHANGED_FILES: listed.join('\n'), CHANGED_SINCE: servedRelease(dist)! }),
        });
        const after = served(dist);
        expectAnswerTimes(after, before, new Date(state.epoch * 1000).toISOString(), `step ${k + 1}: ${JSON.stringify(changes)}`);
        before = after;
      });
      const fullDist = path.join(dir, 'full', 'dist');
      state.build(fullDist, { PROFILES_INCREMENTAL: '0' });
      expectSameServed(before, served(fullDist), JSON.stringify(steps));
      fs.rmSync(dir, { recursive: true, force: true });
    }), {
      numRuns: RUNS, endOnFailure: true,
      // Also, every run: the defect this test was written for (an avatar replaced under its name),
      // and a build told of no file when a profile changed, which only the check after it finds (a
      // second build: a content folder's first reads every profile, having no validation cache).
      examples: [
        [[{ changes: [{ kind: 'avatar', size: 300, seed: 1 }], settled: false, told: 'no' }]],
        [[{ changes: [{ kind: 'touch', who: 2 }], settled: true, told: 'no' }, { changes: [{ kind: 'edit', who: 1, n: 3 }], settled: true, told: 'all but one' }]],
      ], ...(process.env.PROPERTY_SEED && { seed: Number(process.env.PROPERTY_SEED) }) });
  }, 600_000);
});

/**
 * A builder step: content changes only (the builder's day and code are its process's), then a build
 * told every file they changed, as `npm start`'s watcher tells it, or told nothing.
 */
const contentChange = change.filter((c) => c.kind !== 'day' && c.kind !== 'code');
const builderStep = fc.record({ changes: fc.array(contentChange, { minLength: 1, maxLength: 3 }), told: fc.boolean() });

describe('edit builds one after another in npm start\'s builder', () => {
  test(`serve what a full build of the same content serves (${TARGET}: ${BUILDER_RUNS} sequences of up to ${STEPS} builds in one builder)`, async () => {
    let run = 0;
    await fc.assert(fc.asyncProperty(fc.array(builderStep, { minLength: 1, maxLength: STEPS }), fc.boolean(), async (steps, settled) => {
      const { dir, state, dist } = sequenceFolder(`builder-${run++}`);
      const { content } = state;
      state.epoch += 60;
      // The builder's environment is its process's, as `npm start` starts it: one day, one code.
      const builder = new Builder(spawnBuilder(process.execPath, ['scripts/build-site.ts'], ROOT, {
        ...process.env, CONTENT_DIR: content, DIST_DIR: dist, SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(state.epoch),
        DEPLOY_TARGET: TARGET, ...(settled && { BUILD_SETTLE_MS: '0' }),
      }), (checked) => checks.push(checked));
      // What a check after a build printed: only when it built something or failed, which a build
      // told every changed file leaves it nothing to do.
      const checks: Rebuilt[] = [];
      try {
        for (const [k, { changes, told }] of steps.entries()) {
          const changed = state.applyAll(changes);
          const r = await builder.build(told ? { CHANGED_FILES: changed.join('\n'), CHANGED_SINCE: servedRelease(dist)! } : {});
          if (process.env.DEBUG_IEF) console.log(`step ${k + 1} pid ${builder.child?.pid}`, r.stdout);
          expect(r.code, `step ${k + 1}: ${JSON.stringify(changes)}\n${r.stdout}${r.stderr}`).toBe(0);
        }
      } finally {
        // Its stdin closed, it ends, and stops the check of its last build.
        const closed = new Promise((resolve) => builder.child?.once('close', resolve) ?? resolve(undefined));
        builder.stop();
        await closed;
      }
      expect(checks, 'the checks after the builds').toEqual([]);
      const fullDist = path.join(dir, 'full', 'dist');
      state.build(fullDist, { PROFILES_INCREMENTAL: '0' });
      expectSameServed(served(dist), served(fullDist), JSON.stringify(steps));
      fs.rmSync(dir, { recursive: true, force: true });
    }), {
      numRuns: BUILDER_RUNS, endOnFailure: true,
      // Also, every run: three edits told. The first reads every profile (a new content folder has
      // no validation cache), in a process of its own; the builder after it reads the record for
      // the second, which hands the one it wrote to the third.
      examples: [[[
        { changes: [{ kind: 'edit', who: 1, n: 3 }], told: true },
        { changes: [{ kind: 'edit', who: 1, n: 4 }, { kind: 'suspension', who: 2 }], told: true },
        { changes: [{ kind: 'add', who: 7 }, { kind: 'edit', who: 1, n: 5 }], told: true },
      ], true]],
      ...(process.env.PROPERTY_SEED && { seed: Number(process.env.PROPERTY_SEED) }) });
  }, 600_000);
});
