// Our incremental build for profile pages. A profile page is a pure function of the code and of
// what `profilePageKey` hashes, so when neither changed since the build being served, its HTML
// file is hard-linked from that build instead of rendered again. Not Astro's
// `experimental.incrementalBuild`, which copies every unchanged page and was slower than a cold
// build at 100,000 profiles (docs/scale.md).
import { createHash, hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PublicUser } from '../schemas/api.ts';
import type { SiteIndex } from '../model/site-index.ts';

const MANIFEST_VERSION = 1;

/**
 * What a profile page shows: the public object and the avatar file. Not `accountAgeDays`, which
 * moves daily while the page shows only the month joined.
 */
export function profilePageKey(user: PublicUser, avatarFile: string | undefined, json = JSON.stringify(user)): string {
  // The user's JSON text with its age as 0: the key `"accountAgeDays":` can only be the top-level
  // one, since quotes inside a JSON string are escaped. A rebuild hashes the same text for the answer.
  return hash('sha1', `${json.replace(AGE, '"accountAgeDays":0')}\0${avatarFile ?? ''}`, 'base64url');
}

const AGE = /"accountAgeDays":\d+/;

export interface PageManifest {
  version: number;
  /** A hash of everything but the profile that can change a page's bytes. */
  fingerprint: string;
  /** username → `profilePageKey` of the page written for it. */
  pages: Record<string, string>;
}

/**
 * The code and settings every page depends on: the source, the config, the exact dependency tree
 * and `SITE_URL`. Any change renders every page again: conservative, and cheap to be.
 */
export function renderFingerprint(root: string, siteUrl: string): string {
  const hash = createHash('sha1').update(`v${MANIFEST_VERSION}\0${siteUrl}\0`);
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
  /** The previous build's pages (username → key) when it was built by the same code; else undefined. */
  previousPages: Record<string, string> | undefined;
}

/**
 * Which pages to render and which to take from the previous build, given its manifest file and
 * its page files (`<name>.html`; a folder to read, or a list for a layered release).
 */
export function planPages(
  index: SiteIndex, fingerprint: string, previousManifestFile: string, previousPages: string | (() => Iterable<string>), enabled = true,
  /** Each user's JSON text, when the caller has it: the key hashes it (profilePageKey). */
  jsonOf?: (user: PublicUser) => string,
): PagePlan {
  const avatars = new Map(index.avatars);
  const pages: Record<string, string> = Object.create(null);
  for (const user of index.users) pages[user.username] = profilePageKey(user, avatars.get(user.username), jsonOf?.(user));
  const manifest: PageManifest = { version: MANIFEST_VERSION, fingerprint, pages };

  const previous = enabled ? readPageManifest(previousManifestFile) : undefined;
  const usable = previous?.fingerprint === fingerprint ? previous.pages : undefined;
  // One directory read instead of a stat per page: a page missing from the previous build (deleted
  // by hand, say) is rendered again.
  const existing = usable ? new Set(typeof previousPages === 'string' ? safeReaddir(previousPages) : previousPages()) : new Set<string>();
  const render = new Set<string>();
  const reuse: string[] = [];
  for (const user of index.users) {
    const name = user.username;
    if (usable && Object.hasOwn(usable, name) && usable[name] === pages[name] && existing.has(`${name}.html`)) reuse.push(name);
    else render.add(name);
  }
  return { render, reuse, manifest, previousPages: usable };
}

/**
 * Links each reused page into the new build (a copy where links are not possible); returns how
 * many. `fromDir`: the previous build's page folder, or where each page is (a layered release).
 */
export function linkPages(names: readonly string[], fromDir: string | ((file: string) => string), toDir: string): number {
  if (!names.length) return 0;
  fs.mkdirSync(toDir, { recursive: true });
  let linked = 0;
  for (const name of names) {
    const from = typeof fromDir === 'string' ? path.join(fromDir, `${name}.html`) : fromDir(`${name}.html`);
    const to = path.join(toDir, `${name}.html`);
    try {
      fs.linkSync(from, to);
    } catch (e) {
      // Another file system, or one without hard links: the bytes are the same either way.
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      fs.copyFileSync(from, to);
    }
    linked++;
  }
  return linked;
}

/** The manifest a build wrote, or undefined (none, or one of another version). */
export function readPageManifest(file: string): PageManifest | undefined {
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as PageManifest;
    return m && m.version === MANIFEST_VERSION && typeof m.fingerprint === 'string' && m.pages && typeof m.pages === 'object' ? m : undefined;
  } catch {
    return undefined; // no previous build, or one from an older version: render everything
  }
}

function safeReaddir(dir: string): string[] {
  try { return fs.readdirSync(dir); } catch { return []; }
}
