// The object tables of a release served from object storage (docs/scale.md, "Past one host's file
// limit"; a prototype): the files that grow with the number of profiles are objects keyed by the
// SHA-256 of their bytes, and the release names them in tables of its own static assets, one file
// per bucket of user names, so a lookup reads one small table and one object. Shared by the build
// side (src/build/hosts/object-tables.ts writes them) and the edge reader (src/edge/r2-files.ts).
import { USERNAME_PATTERN } from '../schemas/common.ts';
import { LOOKUP_DIR, fnv1a } from './release-files.ts';

export const OBJECT_TABLES_DIR = `${LOOKUP_DIR}/objects`;
/** `{ "buckets": n }`: how many tables the release has, read once per reader. */
export const OBJECT_TABLES_HEAD = `${OBJECT_TABLES_DIR}/head.json`;
/** The object of a key in the bucket. */
export const objectKey = (digest: string) => `o/${digest}`;

/** The kinds of file kept as objects, and their slot in a table's row. */
const KINDS = [
  { slot: 0, prefix: 'p/', suffix: '.html' },
  { slot: 1, prefix: 'api/v1/users/', suffix: '' },
] as const;
export const SLOTS = KINDS.length;

/** A table's row: per kind, the digest of that user's file, or null when the release has none. */
export type ObjectRow = (string | null)[];

/** The user and slot of a file kept as an object (`p/alice.html` → alice, 0), else undefined. */
export function objectSlot(file: string): { name: string; slot: number } | undefined {
  for (const { slot, prefix, suffix } of KINDS) {
    if (!file.startsWith(prefix) || !file.endsWith(suffix)) continue;
    const name = file.slice(prefix.length, file.length - suffix.length);
    // A user name, so `alice.br` (a compressed sibling) is none.
    if (USERNAME_PATTERN.test(name)) return { name, slot };
  }
  return undefined;
}

/** The file of `name` in `slot`: the inverse of `objectSlot`. */
export const slotFile = (name: string, slot: number) => `${KINDS[slot]!.prefix}${name}${KINDS[slot]!.suffix}`;

/** Tables for `profiles`, so one holds about 250 names: a power of two from 16 to 65,536. */
export function tableCount(profiles: number): number {
  let n = 16;
  while (n < 65_536 && profiles / n > 250) n *= 2;
  return n;
}

/** The table of a user name: its FNV-1a hash (as the lookup tables' buckets), modulo `tables`. */
export const tableFile = (name: string, tables: number): string =>
  `${OBJECT_TABLES_DIR}/${(fnv1a(name) % tables).toString(16).padStart(4, '0')}.json`;
