// Our incremental build for profile pages. A profile page is a pure function of the code and of
// what `profilePageKey` hashes, so when neither changed since the build being served, its HTML
// file is hard-linked from that build instead of rendered again. Not Astro's
// `experimental.incrementalBuild`, which copies every unchanged page and was slower than a cold
// build at 100,000 profiles (docs/scale.md).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PublicUser } from '../../schemas/api.ts';
import type { SiteIndex } from '../../model/site-index.ts';
import { ENCODINGS } from '../../http/headers.ts';
import { rowKey } from './record.ts';
import { KeyColumn } from './key-column.ts';

// 3: page keys hash the avatar's bytes (avatarKey).
export const MANIFEST_VERSION = 3;

/**
 * What a profile page is made from: the public object and the avatar's bytes (its size decides
 * the link preview), as `avatarKey` names them. Not `accountAgeDays`, which moves daily while the
 * page shows only the month joined.
 */
export function profilePageKey(user: PublicUser, avatar: string | undefined, json = JSON.stringify(user)): string {
  // The user's JSON text with its age as 0: the key `"accountAgeDays":` can only be the top-level
  // one, since quotes inside a JSON string are escaped. A rebuild hashes the same text for the answer.
  return rowKey(`${json.replace(AGE, '"accountAgeDays":0')}\0${avatar ?? ''}`);
}

/**
 * An avatar file by name and bytes (`digestOf`: the digest of a file of `avatars/`, file-digests.ts):
 * another image under the same name is another key.
 */
export const avatarKey = (file: string | null | undefined, digestOf: (file: string) => string | undefined): string | undefined =>
  file == null ? undefined : `${file}\0${digestOf(file) ?? ''}`;

const AGE = /"accountAgeDays":\d+/;

/**
 * What a build rendered, in columns: `names[i]`'s page key is `pages[i]` and its input key `inputs[i]`.
 * Columns in username order rather than objects keyed by username: at 100,000 profiles they parse,
 * compare (a merge of two sorted lists, no dictionary look-ups) and write in a fraction of the time.
 */
export interface PageManifest {
  version: number;
  /** A hash of everything but the profile that can change a page's bytes. */
  fingerprint: string;
  /** Every username, in code-unit order (as load.ts sorts the profiles). */
  names: string[];
  /** `profilePageKey` of the page written for each name. */
  pages: KeyColumn;
  /**
   * `userInputKey` of the public user that key was made from, where its file's stamp proved its
   * bytes, else null: a later build with the same code and the same input key has the same public
   * user, so it takes the key (and the answer's hash, answer-times.ts) without making the user's
   * JSON and hashing it, twice, for each of 100,000 users.
   */
  inputs?: KeyColumn;
}

/** username → page key of a manifest (tests, and anything that wants one user's key). */
export function manifestPages(manifest: PageManifest): Map<string, string> {
  return new Map(manifest.names.map((name, i) => [name, manifest.pages.get(i)!]));
}

/**
 * What a public user and its page are made of, besides the code and SITE_URL (the fingerprint) and
 * the build's date (`accountAgeDays`): its profile file, by a stamp that proves its bytes (load.ts
 * `stamps`), what toPublicUser takes from elsewhere (the view count and the decoration), and its
 * avatar by name and bytes (`avatarKey`).
 */
export function userInputKey(stamp: string, user: PublicUser, avatar: string | undefined): string {
  const d = user.avatarDecoration;
  // A key, not the text (a stamp and an avatar's digest among its parts): the record keeps one for each profile.
  return rowKey(`${stamp}|${user.views}|${d ? `${d.id}\0${d.name}\0${d.file}` : ''}|${avatar ?? ''}`);
}

/**
 * The code and settings every page depends on: the source, the config, the exact dependency tree
 * and `SITE_URL`. Any change renders every page again: conservative, and cheap to be.
 */
export function renderFingerprint(root: string, siteUrl: string, salt = process.env.BUILD_CODE_SALT ?? ''): string {
  // BUILD_CODE_SALT: a test hook (test/build/incremental-equals-full.test.ts), new code without changing any.
  const hash = createHash('sha1').update(`v${MANIFEST_VERSION}\0${siteUrl}\0${salt}\0`);
  const files = ['astro.config.mjs', 'package-lock.json', 'tsconfig.json'];
  for (const dir of ['src', 'public']) {
    const abs = path.join(root, dir);
    if (!fs.existsSync(abs)) continue;
    for (const entry of fs.readdirSync(abs, { recursive: true, withFileTypes: true })) {
      // Folder READMEs describe the code and change no page.
      if (entry.isFile() && !/^_?README\.md$/.test(entry.name)) files.push(path.relative(root, path.join(entry.parentPath, entry.name)));
    }
  }
  for (const file of files.sort()) {
    const abs = path.join(root, file);
    if (fs.existsSync(abs)) hash.update(`${file}\0`).update(fs.readFileSync(abs)).update('\0');
  }
  return hash.digest('base64url');
}

export interface PagePlan {
  /** Usernames whose page Astro renders. */
  render: Set<string>;
  /** Usernames whose page is linked from the previous build. */
  reuse: string[];
  manifest: PageManifest;
  /** The previous build's names, when it was built by the same code; else undefined. */
  previousNames: readonly string[] | undefined;
  /** Users whose input key (userInputKey) is the previous build's, by the same code: the same public user. */
  sameInputs: Set<string>;
}

/**
 * Which pages to render and which to take from the previous build, given its manifest file and
 * its page files (`<name>.html`; a folder to read, or a list for a layered release).
 */
export function planPages(
  index: SiteIndex, fingerprint: string, previousManifest: PageManifest | undefined, previousPages: string | (() => Iterable<string>), enabled = true,
  /** Each user's JSON text, when the caller has it: the key hashes it (profilePageKey). */
  jsonOf?: (user: PublicUser) => string,
  /** Each user's input key (userInputKey), where its file's stamp proves its bytes. */
  inputKeyOf?: (user: PublicUser) => string | undefined,
  /** The digest of each avatar file's bytes (avatarKey). */
  avatarDigest: (file: string) => string | undefined = () => undefined,
): PagePlan {
  const previous = enabled ? validManifest(previousManifest) : undefined;
  const usable = previous?.fingerprint === fingerprint ? previous : undefined;
  // One directory read instead of a stat per page: a page missing from the previous build (deleted
  // by hand, say) is rendered again.
  const existing = usable ? new Set(typeof previousPages === 'string' ? safeReaddir(previousPages) : previousPages()) : new Set<string>();
  let avatars: Map<string, string> | undefined;
  const users = index.users;
  const names: string[] = new Array(users.length);
  const pages = new KeyColumn(users.length);
  const inputs = new KeyColumn(users.length);
  const sameInputs = new Set<string>();
  const render = new Set<string>();
  const reuse: string[] = [];
  const before = usable?.names ?? [];
  // Both lists are in username order: one pass over each finds every user's previous entry. A list
  // out of order only misses entries, and a user without one is rendered: slower, never wrong.
  let j = 0;
  for (let i = 0; i < users.length; i++) {
    const user = users[i]!;
    const name = user.username;
    names[i] = name;
    while (j < before.length && before[j]! < name) j++;
    const at = j < before.length && before[j] === name ? j : -1;
    const input = inputKeyOf?.(user);
    if (input !== undefined) inputs.set(i, input);
    if (at >= 0 && input !== undefined && usable!.inputs?.has(at, input)) {
      pages.setFrom(i, usable!.pages, at);
      sameInputs.add(name);
    } else {
      avatars ??= new Map(index.avatars);
      pages.set(i, profilePageKey(user, avatarKey(avatars.get(name), avatarDigest), jsonOf?.(user)));
    }
    if (at >= 0 && pages.sameAs(i, usable!.pages, at) && existing.has(`${name}.html`)) reuse.push(name);
    else render.add(name);
  }
  const manifest: PageManifest = { version: MANIFEST_VERSION, fingerprint, names, pages, ...(inputKeyOf && { inputs }) };
  return { render, reuse, manifest, previousNames: usable?.names, sameInputs };
}

/** The names of `before` that are not in `now`; both in code-unit order (a name out of order only costs a Set). */
export function goneNames(before: readonly string[], now: readonly string[]): string[] {
  const gone: string[] = [];
  let j = 0;
  for (const name of before) {
    while (j < now.length && now[j]! < name) j++;
    if (now[j] !== name) gone.push(name);
  }
  if (gone.length * 2 < before.length) return gone;
  // Most of the names look gone: either they are, or a list is out of order. A Set answers both.
  const present = new Set(now);
  return before.filter((name) => !present.has(name));
}

/**
 * Links each reused page into the new build (a copy where links are not possible), with its
 * compressed siblings where it has them (`siblings`: the layout keeps them beside it, compress.ts);
 * returns how many pages. `fromDir`: the previous build's page folder, or where each page is (a layered release).
 */
export function linkPages(names: readonly string[], fromDir: string | ((file: string) => string), toDir: string, siblings = true): number {
  if (!names.length) return 0;
  fs.mkdirSync(toDir, { recursive: true });
  let linked = 0;
  const link = (file: string, optional: boolean) => {
    const from = typeof fromDir === 'string' ? path.join(fromDir, file) : fromDir(file);
    const to = path.join(toDir, file);
    try {
      fs.linkSync(from, to);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || (optional && code === 'ENOENT')) return;
      // Another file system, or one without hard links: the bytes are the same either way.
      fs.copyFileSync(from, to);
    }
  };
  for (const name of names) {
    link(`${name}.html`, false);
    if (siblings) for (const e of ENCODINGS) link(`${name}.html${e.suffix}`, true);
    linked++;
  }
  return linked;
}

/** The manifest a build kept (record.ts), or undefined (none, one of another version, or columns of other lengths). */
export function validManifest(m: PageManifest | undefined): PageManifest | undefined {
  return m && m.version === MANIFEST_VERSION && typeof m.fingerprint === 'string' && Array.isArray(m.names) && KeyColumn.is(m.pages, m.names.length)
    && (m.inputs === undefined || KeyColumn.is(m.inputs, m.names.length)) ? m : undefined;
}

function safeReaddir(dir: string): string[] {
  try { return fs.readdirSync(dir); } catch { return []; }
}
