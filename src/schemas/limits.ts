// The size limits of the content folder, in one place: the loader enforces them before a file is
// read whole (src/content/read-file.ts), and docs/reliability.md quotes them. Content arrives by
// pull request from strangers, so every size the build reads is bounded.

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/**
 * One profile, creator or decoration YAML file. The largest profile the schema allows (32 links at
 * their 2,048-character limit, a 1,000-character bio and suspension notice in 4-byte characters) is
 * about 80 KB; this is that with room for `private:` notes, and ~100x the largest profile in
 * content/. It bounds a file's validation to well under a second.
 */
export const MAX_YAML_FILE_BYTES = 128 * KiB;

/**
 * `stats/views.yaml`: one `username: count` line (~25 bytes) per profile, so it grows with the
 * folder; 16 MiB holds the counts of over 600,000 profiles.
 */
export const MAX_VIEWS_FILE_BYTES = 16 * MiB;

/**
 * One avatar or decoration image. Shown at most a few hundred pixels wide; GitHub's own avatar
 * upload limit is 1 MB. The server keeps up to 512 images in memory, so this also bounds that cache.
 */
export const MAX_IMAGE_BYTES = 1 * MiB;

/**
 * Every file of the content folder the build reads, added up: the 100,000-profile scale the build is
 * designed for, with a 10 KB avatar for each profile, is about 1.1 GB.
 */
export const MAX_CONTENT_BYTES = 2 * GiB;

/** `131072` -> `128 KiB`, for messages. */
export function formatBytes(n: number): string {
  if (n >= GiB) return n % GiB === 0 ? `${n / GiB} GiB` : `${(n / GiB).toFixed(1)} GiB`;
  if (n >= MiB) return n % MiB === 0 ? `${n / MiB} MiB` : `${(n / MiB).toFixed(1)} MiB`;
  if (n >= KiB) return n % KiB === 0 ? `${n / KiB} KiB` : `${(n / KiB).toFixed(1)} KiB`;
  return `${n} bytes`;
}
