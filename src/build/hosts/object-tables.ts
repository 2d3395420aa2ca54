// The object tables of a release and the objects they name (src/api/object-tables.ts; a prototype
// of docs/scale.md "Past one host's file limit"): every profile page and user answer of a client
// folder hashed (SHA-256, base64url), the tables that name them by user, and where each object's
// bytes are. An uploader puts the objects the bucket lacks, then deploys the tables with the rest.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { OBJECT_TABLES_HEAD, SLOTS, objectSlot, slotFile, tableCount, tableFile, type ObjectRow } from '../../api/object-tables.ts';
import { bucketFiles } from '../../api/release-files.ts';
import { identityOf } from '../../release/coded-file.ts';

export interface ObjectTables {
  /** Table files by path in the client folder (`_lookup/objects/…`), the head included: JSON text. */
  tables: Map<string, string>;
  /** Digest → the path of a file with those bytes. */
  objects: Map<string, string>;
}

const digestOf = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64url');

export function objectTables(clientDir: string): ObjectTables {
  const rows = new Map<string, ObjectRow>();
  const objects = new Map<string, string>();
  for (let slot = 0; slot < SLOTS; slot++) {
    const dir = path.dirname(slotFile('x', slot));
    let names: string[];
    try { names = fs.readdirSync(path.join(clientDir, dir)); } catch { continue; }
    for (const entry of names) {
      const at = objectSlot(`${dir}/${entry}`);
      if (!at || at.slot !== slot) continue; // a compressed sibling, or another kind
      const file = path.join(clientDir, dir, entry);
      // Its bytes as served: out of a `node` release's file that holds its codings too (the edge compresses itself).
      const digest = digestOf(Buffer.from(identityOf(fs.readFileSync(file))));
      objects.set(digest, file);
      let row = rows.get(at.name);
      if (!row) rows.set(at.name, row = Array<string | null>(SLOTS).fill(null));
      row[slot] = digest;
    }
  }
  const count = tableCount(rows.size);
  const tables = new Map<string, string>([[OBJECT_TABLES_HEAD, JSON.stringify({ buckets: count })], ...bucketFiles([...rows.keys()], [...rows.values()], (name) => tableFile(name, count))]);
  return { tables, objects };
}
