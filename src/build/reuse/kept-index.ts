// What the next build needs of this one to rebuild after an edit without reading every profile
// again (edit-path.ts): per user, in columns in username order, the stamp of its profile file and
// the few fields the files made from the whole index depend on (avatar, decoration, custom domain,
// status, generated preview); and a digest of the bytes of every content file outside `profiles/`.
// Each node release keeps it in its one record (record.ts), beside its page keys and answer times.
import path from 'node:path';
import type { PublicUser } from '../../schemas/api.ts';
import { columnsOf, type SiteIndex } from '../../model/site-index.ts';
import { siteRuns, type SiteRuns } from '../derived.ts';
import { RACY_MS } from '../../content/file-stamps.ts';
import { walkContent, type ContentTree } from '../../content/content-tree.ts';
import { digestFiles, type FileDigests } from '../../content/file-digests.ts';

// 2: `others` is a digest of bytes (file-digests.ts folderDigest), no longer of stamps. 3: `runs`.
const VERSION = 3;

export interface KeptIndex {
  version: number;
  /** renderFingerprint of the code and SITE_URL that built it. */
  fingerprint: string;
  /** The build time: `accountAgeDays` of every answer follows its UTC date. */
  builtAt: string;
  /** folderDigest (file-digests.ts) of the content files outside `profiles/` as that build read them. */
  others: string;
  names: string[];
  /** The stamp of each profile file where it proved the bytes built (else null: read again next time). */
  stamps: (string | null)[];
  /** Where the stamp is null, the digest of the bytes built (else null): a file read again with these bytes is unchanged. */
  digests: (string | null)[];
  avatars: (string | null)[];
  /** Decoration ids. */
  decorations: (string | null)[];
  domains: (string | null)[];
  /** 1 for a suspended profile. */
  suspended: number[];
  /** The generated preview image the page names (src/ui/og-image.ts), or null: its avatar is the preview. */
  previews: (string | null)[];
  /** The declared decorations, [id, name, file]: what a public user takes of one. */
  decorationEntries: [string, string, string][];
  /** The profile the API description's examples show (openapi.ts `exampleUser`), and whether it has every part. */
  example: { name: string; full: boolean } | null;
  /** Where its browse pages and sitemap files start (derived.ts `siteRuns`): an edit build finds the next ones from them. */
  runs: SiteRuns;
  /** The warnings the content had, as printed: an edit build prints them again. */
  warnings: string[];
}

/** The content files outside `profiles/` in a walk of the content folder (content-tree.ts), relative to it with `/`. */
export function otherFiles(tree: ContentTree): string[] {
  const files: string[] = [];
  for (const [sub, names] of tree.files) {
    if (sub === 'profiles') continue;
    const dir = sub.split(path.sep).join('/');
    for (const f of names) files.push(dir ? `${dir}/${f}` : f);
  }
  return files;
}

/**
 * The digests of the content files outside `profiles/` now, for a build that reads every file:
 * called before it reads them, so a file changed after only looks changed. `previous`: the served
 * release's record, whose digests are taken for the files its stamps prove unchanged. Undefined
 * when the folder cannot be walked cleanly (that build reports why).
 */
export function otherDigestsNow(contentDir: string, previous: FileDigests | undefined, settleMs = RACY_MS): FileDigests | undefined {
  const scannedAt = Date.now();
  const dir = path.resolve(contentDir);
  const tree = walkContent(dir, 'profiles');
  if (tree.problems.length) return undefined;
  return digestFiles(dir, otherFiles(tree), previous, scannedAt, settleMs);
}

/** The kept index of a whole build. `stampOf`: the proving stamp of each user's profile file. */
export function keptIndexOf(
  index: SiteIndex, fingerprint: string, others: string, stampOf: (username: string) => string | undefined, digestOf: (username: string) => string | undefined,
  previewOf: (user: PublicUser, avatar: string | undefined) => string | null, decorationEntries: [string, string, string][],
  example: KeptIndex['example'], warnings: string[],
): KeptIndex {
  // The columns' avatars, not a map of a million names (columnsOf).
  const columns = columnsOf(index);
  const n = index.users.length;
  const kept: KeptIndex = {
    version: VERSION, fingerprint, builtAt: index.builtAt, others, names: new Array(n), stamps: new Array(n), digests: new Array(n), avatars: new Array(n),
    decorations: new Array(n), domains: new Array(n), suspended: new Array(n), previews: new Array(n), decorationEntries, example, warnings,
    runs: siteRuns(columns),
  };
  for (let i = 0; i < n; i++) {
    const user = index.users[i]!;
    const avatar = columns.avatars[i] ?? undefined;
    kept.names[i] = user.username;
    kept.stamps[i] = stampOf(user.username) ?? null;
    kept.digests[i] = kept.stamps[i] === null ? digestOf(user.username) ?? null : null;
    kept.avatars[i] = avatar ?? null;
    kept.decorations[i] = user.avatarDecoration?.id ?? null;
    kept.domains[i] = user.customDomain;
    kept.suspended[i] = user.status === 'suspended' ? 1 : 0;
    kept.previews[i] = previewOf(user, avatar);
  }
  return kept;
}

/** The kept index of a record (record.ts), or undefined (none, another version, or columns of other lengths). */
export function validKeptIndex(k: KeptIndex | undefined): KeptIndex | undefined {
  const n = Array.isArray(k?.names) ? k.names.length : -1;
  const column = (c: unknown) => Array.isArray(c) && c.length === n;
  return k && k.version === VERSION && typeof k.fingerprint === 'string' && typeof k.builtAt === 'string' && typeof k.others === 'string'
    && [k.stamps, k.digests, k.avatars, k.decorations, k.domains, k.suspended, k.previews].every(column)
    && Array.isArray(k.decorationEntries) && Array.isArray(k.warnings) && Array.isArray(k.runs?.browse) && Array.isArray(k.runs.sitemap) ? k : undefined;
}
