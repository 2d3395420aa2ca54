// The data the on-demand handler answers from: one build's public index, kept as each answer's
// bytes, with lookups by username and the media files the build declared.
import fs from 'node:fs';
import path from 'node:path';
import { IMAGE_TYPES } from '../schemas/common.ts';
import { MAX_IMAGE_BYTES } from '../schemas/limits.ts';
import { SIGNATURE_BYTES, imageSignatureProblem } from '../schemas/image-signature.ts';
import { etagOf } from '../http/response.ts';
import { sortedCreators, type CreatorRow, type CreatorSort } from '../model/creators-list.ts';
import type { SiteIndex } from '../model/site-index.ts';
import { buildLayout, type MediaDirs } from '../build/layout.ts';

/** What is kept of each profile: its answer's bytes and what the generated avatar needs, not the parsed object (docs/scale.md). */
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
  /** The strong ETag of the pre-rendered answer's bytes, made on its first request (`prerenderedUser` in handler.ts). */
  fileEtag?: string;
}

export interface Media {
  bytes: Uint8Array;
  type: string;
  etag: string;
}

/** Image bytes kept in memory, the most recently read first out of it: a bound whatever the images. */
export const MEDIA_CACHE_BYTES = 32 << 20;

export class Site {
  readonly builtAt: string;
  readonly siteUrl: string;
  /** The creators in each list order, for the creators list API. */
  readonly sortedCreators: Record<CreatorSort, CreatorRow[]>;
  readonly #users = new Map<string, UserEntry>();
  readonly #avatars: Map<string, string>;
  readonly #decorationFiles: Set<string>;
  readonly #media: MediaDirs;
  readonly #mediaCache = new Map<string, Media>();
  #mediaCacheBytes = 0;

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
  /** Bytes of image files held in memory now: at most MEDIA_CACHE_BYTES. */
  get mediaCacheBytes(): number {
    return this.#mediaCacheBytes;
  }

  async media(kind: keyof MediaDirs, file: string): Promise<Media | undefined> {
    const key = `${kind}/${file}`;
    const hit = this.#mediaCache.get(key);
    if (hit) return hit;
    const ext = file.slice(file.lastIndexOf('.') + 1).toLowerCase();
    const type = IMAGE_TYPES[ext];
    if (!type || file.includes('/') || file.includes('\\') || file.startsWith('.')) return undefined;
    const bytes = await readMediaFile(path.join(this.#media[kind], file));
    if (!bytes) return undefined;
    const media = { bytes, type, etag: etagOf(bytes) };
    this.#mediaCache.set(key, media);
    this.#mediaCacheBytes += bytes.byteLength;
    for (const [oldKey, old] of this.#mediaCache) {
      if (this.#mediaCacheBytes <= MEDIA_CACHE_BYTES) break;
      this.#mediaCache.delete(oldKey);
      this.#mediaCacheBytes -= old.bytes.byteLength;
    }
    return media;
  }
}

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

/**
 * An image's bytes, or undefined: never through a link as the file itself (O_NOFOLLOW), only a
 * regular file (checked on the open descriptor, so a FIFO cannot hang a request), at most
 * MAX_IMAGE_BYTES, and starting with the signature its name promises. Under `astro dev` these are
 * the content folder's own files; in a build, the copies the build checked.
 */
async function readMediaFile(file: string): Promise<Uint8Array | undefined> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > MAX_IMAGE_BYTES) return undefined;
    // One byte more than fstat said, at most: a file that grew since is refused, never read whole.
    const buf = Buffer.allocUnsafe(st.size + 1);
    let length = 0;
    for (let n; length < buf.length && (n = (await handle.read(buf, length, buf.length - length, length)).bytesRead) > 0;) length += n;
    if (length > st.size) return undefined;
    const bytes = buf.subarray(0, length);
    return imageSignatureProblem(file, bytes.subarray(0, SIGNATURE_BYTES)) ? undefined : bytes;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

export function loadBuiltSite(distDir: string): Site {
  const layout = buildLayout(distDir);
  const index = JSON.parse(fs.readFileSync(layout.siteIndex, 'utf8')) as SiteIndex;
  return new Site(index, layout.media);
}
