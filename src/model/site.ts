// The public data of one build, and lookups on it. `buildSiteIndex` makes it from validated
// content; the build writes it to `dist/server/site-index.json` and the server loads it back,
// so on-demand answers carry exactly the data of the pre-rendered files of the same build.
import fs from 'node:fs';
import path from 'node:path';
import { IMAGE_TYPES } from '../schemas/common.ts';
import type { CreatorSummary, PublicUser } from '../schemas/api.ts';
import type { Content } from '../content/load.ts';
import { etagOf } from '../http/response.ts';
import { sortedCreators, type CreatorRow, type CreatorSort } from './creators-list.ts';
import { compareCreators, toCreatorSummary, toPublicUser, type PublicContext } from './public-user.ts';

export const SITE_INDEX_FILE = 'site-index.json';

/** Serialisable; arrays rather than objects keyed by username, so a user named `constructor` is only data. */
export interface SiteIndex {
  builtAt: string;
  siteUrl: string;
  /** Every profile's public object, by username. */
  users: PublicUser[];
  /** [username, avatar file] for profiles with an avatar image. */
  avatars: [string, string][];
  /** Decoration image files: the only files `/api/decoration` serves. */
  decorationFiles: string[];
  /** Active creators, in list order. */
  creators: CreatorSummary[];
}

export function buildSiteIndex(content: Content, ctx: PublicContext): SiteIndex {
  const users: PublicUser[] = [];
  const avatars: [string, string][] = [];
  const byName = new Map<string, PublicUser>();
  for (const [username, profile] of content.profiles) {
    const user = toPublicUser(username, profile, content, ctx);
    users.push(user);
    byName.set(username, user);
    if (profile.avatar) avatars.push([username, profile.avatar]);
  }
  const creators: CreatorSummary[] = [];
  for (const [username, creator] of content.creators) {
    const user = byName.get(username);
    if (user && user.status === 'active') creators.push(toCreatorSummary(user, creator.category, creator.featured));
  }
  creators.sort(compareCreators);
  return {
    builtAt: ctx.builtAt.toISOString(),
    siteUrl: ctx.siteUrl,
    users,
    avatars,
    decorationFiles: [...new Set([...content.decorations.values()].map((d) => d.file))].sort(),
    creators,
  };
}

/** Where the avatar and decoration image files of a build are. */
export interface MediaDirs {
  avatars: string;
  decorations: string;
}

/**
 * What the server keeps of each profile: its answer's bytes and what the generated avatar needs.
 * Not the parsed public object: at 100,000 profiles those objects were ~120 MB of heap.
 */
interface UserEntry {
  username: string;
  displayName: string;
  /**
   * `data` serialised once, as UTF-8 bytes, and its ETag: a lookup copies bytes instead of
   * encoding a string on every answer (a third of a lookup's time), and the bytes sit outside the
   * JS heap, so 100,000 profiles add nothing for the garbage collector to walk.
   */
  data: Buffer;
  etag: string;
  /** The strong ETag of the pre-rendered answer's bytes, made on its first request (`prerenderedUser` in api.ts). */
  fileEtag?: string;
}

export interface Media {
  bytes: Uint8Array;
  type: string;
  etag: string;
}

const MEDIA_CACHE_ENTRIES = 512;

export class Site {
  readonly builtAt: string;
  readonly siteUrl: string;
  readonly creators: readonly CreatorSummary[];
  /** The creators in each list order, for the creators list API. */
  readonly sortedCreators: Record<CreatorSort, CreatorRow[]>;
  readonly #users = new Map<string, UserEntry>();
  readonly #avatars: Map<string, string>;
  readonly #decorationFiles: Set<string>;
  readonly #media: MediaDirs;
  readonly #mediaCache = new Map<string, Media>();

  constructor(index: SiteIndex, media: MediaDirs) {
    this.builtAt = index.builtAt;
    this.siteUrl = index.siteUrl;
    const createdAt = new Map<string, string>();
    const creatorNames = new Set(index.creators.map((c) => c.username));
    for (const user of index.users) {
      const data = Buffer.from(JSON.stringify(user));
      this.#users.set(user.username, { username: user.username, displayName: user.displayName, data, etag: `W/${etagOf(data)}` });
      if (creatorNames.has(user.username)) createdAt.set(user.username, user.createdAt);
    }
    this.#avatars = new Map(index.avatars);
    this.#decorationFiles = new Set(index.decorationFiles);
    this.creators = index.creators;
    this.sortedCreators = sortedCreators(index.creators.map((summary) => ({
      summary,
      createdAt: Date.parse(createdAt.get(summary.username)!),
    })));
    this.#media = media;
  }

  /** Exact lookup by a username already folded to lowercase. */
  user(username: string): UserEntry | undefined {
    return this.#users.get(username);
  }

  get userCount() {
    return this.#users.size;
  }

  users(): IterableIterator<UserEntry> {
    return this.#users.values();
  }

  /** The avatar image file of a profile, or undefined when it has none. */
  avatarFile(username: string): string | undefined {
    return this.#avatars.get(username);
  }

  hasDecorationFile(file: string): boolean {
    return this.#decorationFiles.has(file);
  }

  /** Bytes of a declared media file. Callers check the name against the index first: no other path reaches the disk. */
  async media(kind: keyof MediaDirs, file: string): Promise<Media | undefined> {
    const key = `${kind}/${file}`;
    const hit = this.#mediaCache.get(key);
    if (hit) return hit;
    const ext = file.slice(file.lastIndexOf('.') + 1).toLowerCase();
    const type = IMAGE_TYPES[ext];
    if (!type || file.includes('/') || file.includes('\\') || file.startsWith('.')) return undefined;
    let bytes: Uint8Array;
    try {
      bytes = await fs.promises.readFile(path.join(this.#media[kind], file));
    } catch {
      return undefined;
    }
    const media = { bytes, type, etag: etagOf(bytes) };
    if (this.#mediaCache.size >= MEDIA_CACHE_ENTRIES) this.#mediaCache.delete(this.#mediaCache.keys().next().value!);
    this.#mediaCache.set(key, media);
    return media;
  }
}

/** Layout of a build folder (`dist/`), shared by the build that writes it and the server that reads it. */
export const buildLayout = (distDir: string) => ({
  client: path.join(distDir, 'client'),
  server: path.join(distDir, 'server'),
  siteIndex: path.join(distDir, 'server', SITE_INDEX_FILE),
  pageManifest: path.join(distDir, 'server', 'page-manifest.json'),
  pages: path.join(distDir, 'client', 'p'),
  media: {
    avatars: path.join(distDir, 'client', 'media', 'avatars'),
    decorations: path.join(distDir, 'client', 'media', 'decorations'),
  } satisfies MediaDirs,
});

export function loadBuiltSite(distDir: string): Site {
  const layout = buildLayout(distDir);
  const index = JSON.parse(fs.readFileSync(layout.siteIndex, 'utf8')) as SiteIndex;
  return new Site(index, layout.media);
}
