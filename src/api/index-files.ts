// A release's files made in memory from a site index, for `astro dev` and the handler's tests: the
// bytes the build would write (src/build/files/write-build.ts), and the images read from the content
// folder with the checks the build makes when it copies them.
import path from 'node:path';
import type { MediaDirs } from '../release/layout.ts';
import { readRegularFile } from '../content/read-file.ts';
import { MAX_IMAGE_BYTES } from '../schemas/limits.ts';
import { SIGNATURE_BYTES, imageSignatureProblem } from '../schemas/image-signature.ts';
import { columnsOf, type SiteIndex } from '../model/site-index.ts';
import type { PublicUser } from '../schemas/api.ts';
import { CREATORS_FILE, USER_PREFIX } from './handler.ts';
import { prerenderedCreators, prerenderedUserBody, userData } from './prerendered.ts';
import { imageTypeOf, lookupFiles, type ReleaseFiles } from './release-files.ts';

const USERS_DIR = USER_PREFIX.slice(1);

export class IndexFiles implements ReleaseFiles {
  readonly #index: SiteIndex;
  readonly #users: Map<string, PublicUser>;
  readonly #lookups: Map<string, string | Uint8Array>;
  readonly #avatarFiles: Set<string>;
  readonly #decorationFiles: Set<string>;
  readonly #media: MediaDirs;
  #creators: Uint8Array | undefined;

  constructor(index: SiteIndex, media: MediaDirs) {
    this.#index = index;
    this.#users = new Map(index.users.map((u) => [u.username, u]));
    this.#lookups = lookupFiles(columnsOf(index));
    this.#avatarFiles = new Set(index.avatars.map(([, f]) => f));
    this.#decorationFiles = new Set(index.decorationFiles);
    this.#media = media;
  }

  async read(file: string): Promise<Uint8Array | undefined> {
    if (file.startsWith(USERS_DIR)) {
      const user = this.#users.get(file.slice(USERS_DIR.length));
      return user && Buffer.from(prerenderedUserBody(this.#index.builtAt, userData(user)));
    }
    if (file === CREATORS_FILE) return (this.#creators ??= Buffer.from(prerenderedCreators(columnsOf(this.#index)).body as string));
    const table = this.#lookups.get(file);
    if (table !== undefined) return typeof table === 'string' ? Buffer.from(table) : table.slice();
    const [, kind, name] = /^media\/(avatars|decorations)\/([^/]+)$/.exec(file) ?? [];
    if (!kind || !name || !imageTypeOf(name)) return undefined;
    // Only the files the content declares, as the build copies only those.
    if (!(kind === 'avatars' ? this.#avatarFiles : this.#decorationFiles).has(name)) return undefined;
    const bytes = await readRegularFile(path.join(this.#media[kind as keyof MediaDirs], name), MAX_IMAGE_BYTES);
    return bytes && !imageSignatureProblem(name, bytes.subarray(0, SIGNATURE_BYTES)) ? bytes : undefined;
  }
}
