// `ReleaseFiles` past the static-asset file limit (docs/scale.md, "Past one host's file limit"; a
// prototype, not yet wired into worker.ts): profile pages and user answers are objects of an R2
// bucket, named by the object tables of the release's own static assets (src/api/object-tables.ts);
// every other file is read through `ASSETS` as before. The tables come with the Worker version, so
// deploying a version switches pages, answers and every static file at once.
import type { ReleaseFiles } from '../api/release-files.ts';
import { OBJECT_TABLES_HEAD, objectKey, objectSlot, tableFile, type ObjectRow } from '../api/object-tables.ts';
import { assetFiles, type AssetsBinding } from './asset-files.ts';

/** The part of an R2 binding (`R2Bucket`) the reader uses. */
export interface ObjectBucket {
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
}

/** Parsed tables kept per reader: 64 of ~25 KB, so a reader's memory does not grow with the profiles. */
const KEPT_TABLES = 64;
const decoder = new TextDecoder();

export function r2Files(assets: AssetsBinding, bucket: ObjectBucket): ReleaseFiles {
  const files = assetFiles(assets);
  let tables: Promise<number> | undefined;
  const kept = new Map<string, Promise<Record<string, ObjectRow>>>();

  const tableCount = () => (tables ??= Promise.resolve(files.read(OBJECT_TABLES_HEAD)).then((bytes) => {
    const n = bytes && (JSON.parse(decoder.decode(bytes)) as { buckets?: unknown }).buckets;
    if (!Number.isInteger(n) || (n as number) < 1) throw new Error(`${OBJECT_TABLES_HEAD}: no table count`);
    return n as number;
  }).catch((error: unknown) => { tables = undefined; throw error; }));

  const table = (file: string) => {
    let rows = kept.get(file);
    if (rows) {
      kept.delete(file); // to the end: the map is in order of use
    } else {
      rows = Promise.resolve(files.read(file)).then((bytes) => (bytes ? JSON.parse(decoder.decode(bytes)) as Record<string, ObjectRow> : {}));
      rows.catch(() => kept.delete(file));
      if (kept.size >= KEPT_TABLES) kept.delete(kept.keys().next().value!);
    }
    kept.set(file, rows);
    return rows;
  };

  return {
    runtimeEncodes: files.runtimeEncodes,
    async read(file) {
      const at = objectSlot(file);
      if (!at) return files.read(file);
      const rows = await table(tableFile(at.name, await tableCount()));
      const digest = Object.hasOwn(rows, at.name) ? rows[at.name]![at.slot] : null;
      if (!digest) return undefined; // no such user in this release: the handler's 404
      const object = await bucket.get(objectKey(digest));
      // The table names it, so it was uploaded before this version was deployed: missing is a fault, not a 404.
      if (!object) throw new Error(`R2: no object ${objectKey(digest)} for ${file}`);
      return new Uint8Array(await object.arrayBuffer());
    },
  };
}
