// The edit path: a rebuild after a few profile files changed, made from the served release's kept
// index (kept-index.ts) without reading the other profiles. At 100,000 profiles reading them back
// (the validation cache, the public index made again) was most of a rebuild's 5 s; here a rebuild
// stats every content file (or, told which changed, those: `changedNames`), parses the changed ones
// and takes everything else from the kept columns and the served release. It covers the common edits: profiles changed in place (a creator's too)
// with the same avatar, decoration and custom domain, and profiles added or removed without any
// (nor a creator file or view count). Anything else (a file outside `profiles/` changed, a
// problem) returns a reason, and the build reads every profile instead: that build reports
// problems as it always does. What it serves is what that build
// would serve, byte for byte (test/build/edit-path.test.ts).
import { hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PublicUser } from '../../schemas/api.ts';
import { isUsername } from '../../schemas/index.ts';
import type { SiteIndex } from '../../model/site-index.ts';
import { compareCreators, toCreatorSummary, toPublicUser } from '../../model/public-user.ts';
import type { CreatorRow } from '../../model/creators-list.ts';
import type { Creator } from '../../schemas/index.ts';
import { CREATORS_ROWS_FILE, type CreatorsRows } from '../../api/release-files.ts';
import { USERS_PATH } from '../../api/handler.ts';
import { exampleUser, showsEveryPart } from '../../api/openapi.ts';
import { previewFileOf } from '../../ui/og-image.ts';
import { walkContent, type ContentTree } from '../../content/content-tree.ts';
import { RACY_MS, stampFiles, stampList, type StampList } from '../../content/file-stamps.ts';
import { ContentReader, YAML_LIMIT, decodeText } from '../../content/read-file.ts';
import { StampedFileCache, parseProfileFile, type PublicProfile } from '../../content/profile-files.ts';
import { viewCountOf, type Content, type ViewCounts } from '../../content/load.ts';
import { digestFiles, digestMap, folderDigest, type FileDigests } from '../../content/file-digests.ts';
import { otherFiles, type KeptIndex } from './kept-index.ts';
import { siteRuns, type ColumnChanges } from '../derived.ts';
import { lowerBound, sortedIndexOf } from '../../model/sorted.ts';

/** The kept columns an edit build writes values of. */
type Written = 'stamps' | 'digests' | 'suspended' | 'previews';

/** Past this many changed profiles the edit path saves little: the build reads every profile. */
export const EDIT_PATH_MAX_CHANGED = 1_000;

export interface EditPlan {
  /**
   * The index the pages and files of this build are made from: the changed users and the example
   * user (openapi.ts), their avatars, every decoration file, and the served release's creators.
   */
  index: SiteIndex;
  /** The changed and added users' public objects, in username order. */
  changed: PublicUser[];
  /** For each profile of this build (kept.names), its place in the served release's names, or -1: added. */
  servedAt: Int32Array;
  /** The served release's profile names (its kept index's). */
  servedNames: string[];
  /** The profiles removed since the served release. */
  removed: string[];
  /** username → the stamp of its profile file, for the changed users whose stamp proves their bytes. */
  stamps: Map<string, string>;
  /** The kept index of this build. */
  kept: KeptIndex;
  /** The digests of the content files outside `profiles/` (the same bytes as the served release's). */
  digests: FileDigests;
  /** What this edit changed of the columns the files made from the whole index read (derived.ts). */
  changes: ColumnChanges;
}

export interface EditInputs<M> {
  contentDir: string;
  /** Reads the served release's kept index: while a thread stamps the content files. */
  kept: () => KeptIndex | undefined;
  /** Reads the served release's digests of the content files outside `profiles/` (file-digests.ts). */
  digests: () => FileDigests | undefined;
  /** More of the caller's work that the stamping thread overlaps (reading the served release's records). */
  meanwhile: () => M;
  fingerprint: string;
  builtAt: Date;
  siteUrl: string;
  /** The validation cache file: the view counts are taken from its parsed `stats/views.yaml`. */
  cacheFile: string;
  /** A file of the served release (relative to `client/`), or undefined. */
  readServed: (file: string) => Buffer | undefined;
  /** How long before now a file must have changed for its stamp to prove its bytes (RACY_MS). */
  settleMs?: number;
  /**
   * The profiles whose files changed since the served release was built (`changedProfiles` of
   * what `npm start`'s watcher saw): only those are stamped. Undefined: every one is.
   */
  changedNames?: readonly string[];
  /**
   * With `changedNames`: whether the list named files outside `profiles/` too. When it did not,
   * those files are taken to be as the served release read them, as the profiles it does not name
   * (at 1,000,000 profiles, listing and stamping the 20,000 creator files was 0.3 s of an edit).
   */
  listedOthers?: boolean;
  /** BUILD_IF_CHANGED: no plan (`unchanged`) when no profile changed before this time (ms), the files outside `profiles/` as they were. */
  ifChangedBefore?: number;
}

const sameDay = (a: string, b: string) => a.slice(0, 10) === b.slice(0, 10);

/** The plan of an edit build, or why this build must read every profile, or (`ifChangedBefore`) that nothing changed. */
export async function planEdit<M>(inputs: EditInputs<M>): Promise<(EditPlan & { meanwhile: M }) | { reason: string } | { unchanged: true }> {
  const { contentDir, siteUrl } = inputs;
  const builtAt = inputs.builtAt.toISOString();
  const dir = path.resolve(contentDir);
  const reader = new ContentReader(dir);
  if (reader.rootProblem()) return { reason: 'the content folder has a problem' };

  // Before any stat: a file written after its stamp must not be trusted for it (RACY_MS).
  const scannedAt = Date.now();
  const profileFile = (name: string) => `${dir}${path.sep}profiles${path.sep}${name}.yaml`;
  let names: string[];
  let tree: ContentTree | undefined;
  let others: string[];
  /** Told which files changed, none outside `profiles/`: the served release's digests of those files, taken as they are. */
  let trusted: FileDigests | undefined;
  let stamping: Promise<StampList | undefined>;
  let kept: KeptIndex | undefined;
  /** With the list of changed files: the profiles it names (the others take their kept stamp). */
  let hinted: ReadonlySet<string> | undefined;
  if (inputs.changedNames) {
    // The profiles named changed (by `npm start`'s watcher) are stamped; every other one is taken
    // to be as the served release read it. The build checks that afterwards (scripts/build-site.ts).
    trusted = inputs.listedOthers === false ? inputs.digests() : undefined;
    if (!trusted) {
      tree = walkContent(dir, 'profiles');
      if (tree.problems.length) return { reason: 'the content folder has a link or a special file' };
    }
    kept = inputs.kept();
    if (!kept) return { reason: 'the served release has no kept index' };
    const keptAt = (name: string) => sortedIndexOf(kept!.names, name);
    const gone = new Set<string>();
    const come: string[] = [];
    for (const name of inputs.changedNames) {
      const there = fs.lstatSync(profileFile(name), { throwIfNoEntry: false });
      if (there && !there.isFile()) return { reason: `profiles/${name}.yaml is not a regular file` };
      if (there && keptAt(name) < 0) come.push(name);
      if (!there && keptAt(name) >= 0) gone.add(name);
    }
    // The served names themselves when none came or went (never changed: a read record is frozen),
    // so the record's writer sees the same column and compares none of it (record.ts).
    names = come.length || gone.size ? mergeNames(kept.names, come, gone) : kept.names;
    hinted = new Set(inputs.changedNames);
    others = trusted ? trusted.files : otherFiles(tree!);
    stamping = Promise.resolve(undefined);
  } else {
    tree = walkContent(dir);
    if (tree.problems.length) return { reason: 'the content folder has a link or a special file' };
    const profileNames = tree.files.get('profiles') ?? [];
    names = new Array(profileNames.length);
    for (let i = 0; i < profileNames.length; i++) {
      const file = profileNames[i]!;
      const name = file.endsWith('.yaml') ? file.slice(0, -5) : '';
      if (!isUsername(name)) return { reason: `profiles/${file} is not a profile file` };
      names[i] = name;
    }
    // The listing is sorted by file name; `a-b.yaml` sorts before `a.yaml`, usernames the other way.
    names.sort();
    others = otherFiles(tree);
    // At 100,000 profiles threads stamp the files while this one reads the served release's records.
    stamping = stampFiles([...names.map(profileFile), ...others.map((f) => path.join(dir, f))]);
    kept = inputs.kept();
  }
  if (!kept) return { reason: 'the served release has no kept index' };
  if (kept.fingerprint !== inputs.fingerprint) return { reason: 'the code or SITE_URL changed' };
  // accountAgeDays of every answer moves with the date.
  if (!sameDay(kept.builtAt, builtAt)) return { reason: 'the date changed since the last build' };
  // Both lists are sorted: one merge finds each profile's place in the served release.
  const servedAt = new Int32Array(names.length);
  const removed: number[] = [];
  const added: number[] = [];
  for (let i = 0, j = 0; i < names.length || j < kept.names.length;) {
    if (j >= kept.names.length || (i < names.length && names[i]! < kept.names[j]!)) {
      servedAt[i] = -1;
      added.push(i++);
    } else if (i >= names.length || names[i]! > kept.names[j]!) {
      removed.push(j++);
    } else {
      servedAt[i++] = j++;
    }
    if (added.length + removed.length > EDIT_PATH_MAX_CHANGED) return { reason: `more than ${EDIT_PATH_MAX_CHANGED} profiles were added or removed` };
  }
  for (const j of removed) {
    const name = kept.names[j]!;
    // Its avatar and custom domain are in the lookup tables; the API description shows the example.
    if (kept.avatars[j] !== null || kept.domains[j] !== null) return { reason: `${name}, removed, had an avatar or a custom domain` };
    if (kept.example?.name === name) return { reason: `${name}, removed, was the API description's example` };
  }
  const meanwhile = inputs.meanwhile();
  const rows = parseJson<CreatorsRows>(inputs.readServed(CREATORS_ROWS_FILE));
  if (!rows || !Array.isArray(rows.rows)) return { reason: 'the served release has no creators rows' };
  const { views: viewsCache, creators: creatorsCache } = readCachedInputs(inputs.cacheFile);

  const otherPaths = others.map((f) => path.join(dir, f));
  const stamps = (await stamping) ?? (hinted ? hintedStamps(names, servedAt, kept, hinted, profileFile, otherPaths, trusted) : stampList([...names.map(profileFile), ...otherPaths]));
  const settleMs = inputs.settleMs ?? RACY_MS;
  // By bytes: a file whose stamp the served record does not prove is read again, not taken as changed.
  const othersStamps = { stamps: stamps.stamps.slice(names.length), changedMs: stamps.changedMs.subarray(names.length) };
  const servedDigests = trusted ?? inputs.digests();
  // Every stamp the served one (told, and none needed taking again): the served digests, as digestFiles would give them.
  const digests = trusted && sameStamps(othersStamps.stamps, trusted.stamps) ? trusted : digestFiles(dir, others, servedDigests, scannedAt, settleMs, othersStamps);
  const othersChanged = folderDigest(digests) !== kept.others;
  // BUILD_IF_CHANGED after a told build: files outside profiles/ changed after the time it gives are
  // the watcher's next build (it reads every profile), not this check's.
  const othersChangedBefore = othersChanged && (inputs.ifChangedBefore === undefined || firstChange(digests, servedDigests, othersStamps) < inputs.ifChangedBefore);
  if (othersChangedBefore) return { reason: 'files outside profiles/ changed' };

  const changedAt: number[] = [];
  /** Profiles whose stamp did not prove their bytes at the last build, read again and found the same: [place, digest of the bytes]. */
  const same: [number, string][] = [];
  for (let i = 0; i < names.length; i++) {
    const stamp = stamps.stamps[i];
    const j = servedAt[i]!;
    if (j >= 0 && stamp !== null && stamp === kept.stamps[j] && stamps.changedMs[i]! < scannedAt - settleMs) continue;
    // A stamp that proved nothing (written just before the last build): the bytes say whether it changed.
    const digest = j >= 0 && kept.stamps[j] === null && kept.digests[j] !== null ? digestOf(reader, profileFile(names[i]!)) : undefined;
    if (digest !== undefined && digest === kept.digests[j]) same.push([i, digest]);
    else changedAt.push(i);
    if (changedAt.length > EDIT_PATH_MAX_CHANGED) return { reason: `more than ${EDIT_PATH_MAX_CHANGED} profiles changed` };
  }

  if (inputs.ifChangedBefore !== undefined) {
    // A removal leaves no file to tell when.
    const first = removed.length ? -Infinity : changedAt.reduce((t, i) => Math.min(t, stamps.stamps[i] === null ? -Infinity : stamps.changedMs[i]!), Infinity);
    if (first >= inputs.ifChangedBefore) return { unchanged: true };
  }
  if (othersChanged) return { reason: 'files outside profiles/ changed' };

  const creatorFiles = new Set(tree ? tree.files.get('creators') ?? [] : filesIn(others, 'creators'));
  // A creator file without its profile is a problem, which the whole read reports.
  for (const j of removed) if (creatorFiles.has(`${kept.names[j]}.yaml`)) return { reason: `${kept.names[j]}, removed, has a creator file` };
  const decorations = new Map(kept.decorationEntries.map(([id, name, file]) => [id, { id, name, file }]));
  const views = new Map<string, number>();
  // What the last build parsed of a file outside profiles/ (its bytes are the same: folderDigest),
  // stored in the validation cache for its stamp then: used when that stamp, now, proves the bytes.
  const storedFor = <T,>(cache: StampedFileCache<T>, file: string): T | undefined => {
    const k = names.length + others.indexOf(file);
    const stamp = stamps.stamps[k];
    return k >= names.length && stamp && stamps.changedMs[k]! < scannedAt - settleMs ? cache.storedFor(path.join(dir, file), stamp) : undefined;
  };
  if (others.includes('stats/views.yaml')) {
    const counts = storedFor(viewsCache, 'stats/views.yaml');
    if (!counts) return { reason: 'the view counts are not in the validation cache' };
    const countOf = viewCountOf(counts);
    for (const i of changedAt) {
      const count = countOf(names[i]!);
      if (count !== undefined) views.set(names[i]!, count);
    }
    // A count for a name without a profile is a warning: one that comes or goes changes the warnings.
    for (const i of added) if (countOf(names[i]!) !== undefined) return { reason: `${names[i]}, added, has a view count` };
    for (const j of removed) if (countOf(kept.names[j]!) !== undefined) return { reason: `${kept.names[j]}, removed, has a view count` };
  }
  const content: Content = { dir, profiles: new Map<string, PublicProfile>(), creators: new Map(), decorations, views };
  const ctx = { siteUrl, builtAt: inputs.builtAt };
  const avatarsDir = path.join(dir, 'avatars');

  // The served columns, each profile at its place in this build's names (an added one's filled below).
  const column = <T,>(served: T[], empty: T): T[] => {
    const c = new Array<T>(names.length);
    for (let i = 0; i < names.length; i++) c[i] = servedAt[i]! < 0 ? empty : served[servedAt[i]!]!;
    return c;
  };
  const namesChanged = added.length > 0 || removed.length > 0;
  const next: KeptIndex = namesChanged
    ? {
      ...kept, builtAt, names, stamps: column(kept.stamps, null), digests: column(kept.digests, null), avatars: column(kept.avatars, null), decorations: column(kept.decorations, null),
      domains: column(kept.domains, null), suspended: column(kept.suspended, 0), previews: column(kept.previews, null),
    }
    : { ...kept, builtAt };
  // With the same names, a column stays the served one until a value of it changes, then a copy
  // changes: the record's writer compares no column that is the served one (record.ts `sameRows`).
  const own = new Set<Written>(namesChanged ? ['stamps', 'digests', 'suspended', 'previews'] : []);
  const put = <K extends Written>(key: K, i: number, value: KeptIndex[K][number]): void => {
    if (next[key][i] === value) return;
    if (!own.has(key)) {
      (next as Pick<KeptIndex, Written>)[key] = [...next[key]] as KeptIndex[K];
      own.add(key);
    }
    (next[key] as KeptIndex[K][number][])[i] = value;
  };
  // The same bytes: proved by its stamp now, or still by its digest.
  for (const [i, digest] of same) {
    const trusted = stamps.changedMs[i]! < scannedAt - settleMs;
    put('stamps', i, trusted ? stamps.stamps[i]! : null);
    put('digests', i, trusted ? null : digest);
  }
  const changed: PublicUser[] = [];
  const changedStamps = new Map<string, string>();
  /** The changed creators' list entries (null: suspended, so not in the list). */
  const creatorRows = new Map<string, CreatorRow | null>();
  for (const i of changedAt) {
    const name = names[i]!;
    const file = profileFile(name);
    const read = reader.read(file, YAML_LIMIT);
    if (!read.ok) return { reason: `profiles/${name}.yaml has a problem` };
    const text = decodeText(file, read.bytes);
    if (!text.ok) return { reason: `profiles/${name}.yaml has a problem` };
    const parsed = parseProfileFile(name, file, text.text);
    if (!parsed.ok) return { reason: `profiles/${name}.yaml has a problem` };
    const p = parsed.profile;
    if ((p.avatar ?? null) !== next.avatars[i] || (p.decoration ?? null) !== next.decorations[i] || (p.customDomain ?? null) !== next.domains[i]) {
      return { reason: `the avatar, decoration or custom domain of ${name} changed` };
    }
    if (servedAt[i]! < 0 && creatorFiles.has(`${name}.yaml`)) return { reason: `${name}, added, has a creator file` };
    const user = toPublicUser(name, p, content, ctx);
    changed.push(user);
    const stamp = stamps.stamps[i];
    const trusted = stamp !== null && stamps.changedMs[i]! < scannedAt - settleMs;
    if (trusted) changedStamps.set(name, stamp!);
    put('stamps', i, trusted ? stamp! : null);
    put('digests', i, trusted ? null : hash('sha1', read.bytes, 'base64url'));
    const suspended = user.status === 'suspended' ? 1 : 0;
    put('suspended', i, suspended);
    put('previews', i, previewFileOf(avatarsDir, user, p.avatar));
    if (creatorFiles.has(`${name}.yaml`)) {
      const creator = storedFor(creatorsCache, `creators/${name}.yaml`);
      if (!creator) return { reason: `the creator file of ${name} is not in the validation cache` };
      creatorRows.set(name, user.status === 'active' ? { summary: toCreatorSummary(user, creator.category, creator.featured), createdAt: Date.parse(user.createdAt) } : null);
    }
  }

  // Whether the sitemap's profiles (active, no custom domain) are others: one came, went or changed state.
  const listedIn = (suspended: number, domain: string | null) => suspended === 0 && domain === null;
  let sitemapChanged = false;
  for (const j of removed) sitemapChanged ||= listedIn(kept.suspended[j]!, kept.domains[j]!);
  for (const i of changedAt) {
    const j = servedAt[i]!;
    sitemapChanged ||= j < 0 ? listedIn(next.suspended[i]!, next.domains[i]!) : listedIn(kept.suspended[j]!, kept.domains[j]!) !== listedIn(next.suspended[i]!, next.domains[i]!);
  }

  const example = exampleOf(kept, changed, changedAt.filter((i) => servedAt[i]! < 0).map((i) => names[i]!), inputs.readServed);
  if ('reason' in example) return example;
  next.example = { name: example.user.username, full: example.full };

  // The creators list: the served one's rows, the changed creators' replaced, in the list's order.
  let listed = rows.rows;
  if (creatorRows.size) {
    listed = listed.filter((r) => !creatorRows.has(r.summary.username));
    for (const row of creatorRows.values()) if (row) listed.push(row);
    listed.sort((a, b) => compareCreators(a.summary, b.summary));
  }

  // The example first: the API description shows the first user that shows every part (openapi.ts).
  const users = [example.user, ...changed.filter((u) => u !== example.user)];
  // The avatars of those and of the creators (the home page shows theirs).
  const avatarOf = new Set([...users.map((u) => u.username), ...listed.map((r) => r.summary.username)]);
  // In names' order; found by their place, not by looking at every name (a million at 1,000,000 profiles).
  const avatarAt: number[] = [];
  for (const name of avatarOf) {
    const i = sortedIndexOf(names, name);
    if (i >= 0 && next.avatars[i]) avatarAt.push(i);
  }
  const avatars = avatarAt.sort((a, b) => a - b).map((i): [string, string] => [names[i]!, next.avatars[i]!]);
  const index: SiteIndex = {
    builtAt, siteUrl, users, profileCount: names.length, avatars,
    decorationFiles: [...new Set(kept.decorationEntries.map(([, , file]) => file))].sort(),
    creators: listed.map((r) => r.summary),
    creatorRows: listed,
    // The whole site's, for the files made from the whole index (src/build/derived.ts).
    columns: { siteUrl, builtAt, names, suspended: next.suspended, domains: next.domains, avatars: next.avatars, creatorRows: listed },
  };
  // Where this release's browse pages and sitemap files start, from the served release's. The same
  // column objects as derived.ts is handed: what the sitemap lists of each is made once (sitemap.ts).
  const before = { names: kept.names, suspended: kept.suspended, domains: kept.domains, runs: kept.runs };
  next.runs = siteRuns(index.columns!, { columns: before, runs: kept.runs }, { names: namesChanged, listed: sitemapChanged });
  return {
    index, changed, servedAt, servedNames: kept.names, removed: removed.map((j) => kept.names[j]!), stamps: changedStamps, kept: next, digests,
    // An avatar or a custom domain that changed, came or went made this build read every profile (above).
    changes: { names: namesChanged, listed: sitemapChanged, media: false, creators: creatorRows.size > 0, before, runs: next.runs },
    meanwhile,
  };
}

/**
 * What an edit build takes of the validation cache (`cacheFile`): the view counts and the creator
 * files as the last whole read parsed them. Read only, so shared with the edit builds before this
 * one in the same process while the files are the same (`npm start`'s builder reads them between builds).
 */
export function readCachedInputs(cacheFile: string): { views: StampedFileCache<ViewCounts>; creators: StampedFileCache<Creator> } {
  return { views: new StampedFileCache(cacheFile, 'views', false, true), creators: new StampedFileCache(cacheFile, 'creators', false, true) };
}

/** The example user of this build, as exampleUser would choose it among every user. */
function exampleOf(kept: KeptIndex, changed: PublicUser[], added: string[], readServed: (file: string) => Buffer | undefined): { user: PublicUser; full: boolean } | { reason: string } {
  const before = kept.example;
  if (!before) return { reason: 'the last build had no profiles' };
  // The users before the example show every part only if they changed: the first of those now leads.
  const leader = exampleUser(changed.filter((u) => !before.full || u.username < before.name));
  if (leader?.full) return leader;
  // Without one that shows every part, the example is the first user: an added one may be first now.
  if (!before.full && added.length && added[0]! < before.name) return { user: changed.find((u) => u.username === added[0])!, full: false };
  const edited = changed.find((u) => u.username === before.name);
  if (edited) {
    if (before.full && !showsEveryPart(edited)) return { reason: `the API description's example, ${edited.username}, changed` };
    return { user: edited, full: before.full };
  }
  const answer = parseJson<{ data: PublicUser }>(readServed(`${USERS_PATH.slice(1)}/${before.name}`));
  return answer?.data ? { user: answer.data, full: before.full } : { reason: `the served release has no answer for ${before.name}` };
}

/**
 * When the first of the files outside `profiles/` that differ from the served release's changed (ms,
 * by `stamped`, in `now`'s order): -Infinity for one removed or unreadable (nothing tells when), or
 * when the served digests are unknown.
 */
function firstChange(now: FileDigests, served: FileDigests | undefined, stamped: StampList): number {
  if (!served) return -Infinity;
  const before = digestMap(served);
  let first = Infinity;
  for (let i = 0; i < now.files.length; i++) {
    if (before.get(now.files[i]!) === now.digests[i]) continue;
    first = Math.min(first, stamped.stamps[i] === null ? -Infinity : stamped.changedMs[i]!);
  }
  const present = new Set(now.files);
  for (const file of served.files) if (!present.has(file)) return -Infinity;
  return first;
}

/** The digest of a profile file's bytes as the loader makes it (profile-files.ts), or undefined when it cannot be read. */
function digestOf(reader: ContentReader, file: string): string | undefined {
  const read = reader.read(file, YAML_LIMIT);
  return read.ok ? hash('sha1', read.bytes, 'base64url') : undefined;
}

function parseJson<T>(bytes: Buffer | undefined): T | undefined {
  try {
    return bytes ? JSON.parse(bytes.toString('utf8')) as T : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The profiles `changedFiles` (paths relative to the content folder, as `fs.watch` names them) may
 * have changed, or why the list cannot say: a file in `profiles/` that is not a profile file and
 * is there, or the folder itself. `listedOthers`: whether it names a file outside `profiles/`
 * (then every such file is stamped; else they are taken to be as the served release read them).
 */
export function changedProfiles(dir: string, changedFiles: readonly string[]): { names: string[]; listedOthers: boolean } | { reason: string } {
  const names = new Set<string>();
  let listedOthers = false;
  for (const raw of changedFiles) {
    const file = path.normalize(raw);
    // `.`: the watcher could not name the file.
    if (file === '.' || path.isAbsolute(file) || file.startsWith('..')) return { reason: `the changed file ${raw} is not one in the content folder` };
    const parts = file.split(path.sep);
    if (parts[0] !== 'profiles') { listedOthers = true; continue; }
    const name = parts.length === 2 && parts[1]!.endsWith('.yaml') ? parts[1]!.slice(0, -5) : '';
    if (isUsername(name)) names.add(name);
    // An editor's or git's temporary file, gone now, changed nothing; anything else there is for the whole read to report.
    else if (parts.length !== 2 || fs.lstatSync(path.join(dir, file), { throwIfNoEntry: false })) return { reason: `the changed files include ${raw}, not a profile file` };
  }
  return { names: [...names], listedOthers };
}

/**
 * The sorted names `served` without those `gone`, with those that `come` (not among them), still
 * sorted: one pass, not a sort of a million names (`served` is a read record's frozen column, where
 * `filter` is slow too).
 */
export function mergeNames(served: readonly string[], come: readonly string[], gone: ReadonlySet<string>): string[] {
  const added = [...come].sort();
  // Where each added name goes (before the served name at that place) and where each gone one was.
  const addAt = added.map((name) => lowerBound(served, name));
  const goneAt = [...gone].map((name) => sortedIndexOf(served, name)).filter((i) => i >= 0).sort((a, b) => a - b);
  const out: string[] = [];
  let [from, a, g] = [0, 0, 0];
  for (;;) {
    const at = Math.min(addAt[a] ?? Infinity, goneAt[g] ?? Infinity);
    for (let i = from, end = Math.min(at, served.length); i < end; i++) out.push(served[i]!);
    if (at === Infinity) return out;
    if (addAt[a] === at) {
      out.push(added[a++]!);
      from = at;
    } else {
      g++;
      from = at + 1;
    }
  }
}

/** Whether two columns of stamps are the same, value for value (a loop: a read record's columns are frozen, where `every` is slow). */
function sameStamps(a: readonly (string | null)[], b: readonly (string | null)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The files directly in folder `dir` of `files` (relative to the content folder, with `/`), by name. */
function filesIn(files: readonly string[], dir: string): string[] {
  const prefix = `${dir}/`;
  return files.filter((f) => f.startsWith(prefix) && !f.includes('/', prefix.length)).map((f) => f.slice(prefix.length));
}

/**
 * The stamps of a build told which files changed: each profile's kept stamp, taken as proved (the
 * list says its file is as the served release read it), but those the list names, added ones and
 * those whose kept stamp proved nothing, stamped now; then the files outside `profiles/`, stamped
 * now, or with `trusted` (the list named none of them) their served stamps, those that proved nothing stamped now.
 */
function hintedStamps(
  names: readonly string[], servedAt: Int32Array, kept: KeptIndex, named: ReadonlySet<string>, profileFile: (name: string) => string, otherPaths: string[],
  trusted?: FileDigests,
): StampList {
  const count = names.length;
  const stamps: (string | null)[] = new Array(count + otherPaths.length);
  const changedMs = new Float64Array(count + otherPaths.length);
  const stampedAt: number[] = [];
  // The named profiles' places, found in the sorted names: no lookup of a million names in a Set.
  const isNamed = new Uint8Array(count);
  for (const name of named) {
    const i = sortedIndexOf(names, name);
    if (i >= 0) isNamed[i] = 1;
  }
  for (let i = 0; i < count; i++) {
    const j = servedAt[i]!;
    stamps[i] = j >= 0 ? kept.stamps[j]! : null;
    if (j < 0 || stamps[i] === null || isNamed[i] === 1) stampedAt.push(i);
  }
  // A trusted stamp counts as taken long ago (changedMs 0): it proved the bytes when it was recorded.
  for (let k = 0; k < otherPaths.length; k++) {
    stamps[count + k] = trusted ? trusted.stamps[k]! : null;
    if (stamps[count + k] === null) stampedAt.push(count + k);
  }
  const now = stampList(stampedAt.map((i) => (i < count ? profileFile(names[i]!) : otherPaths[i - count]!)));
  for (let k = 0; k < stampedAt.length; k++) {
    stamps[stampedAt[k]!] = now.stamps[k]!;
    changedMs[stampedAt[k]!] = now.changedMs[k]!;
  }
  return { stamps, changedMs };
}
