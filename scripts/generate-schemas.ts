// Usage: npm run schemas [-- --dry-run] [--check]
//
// Writes the JSON Schema files editors use for the content (public/schemas/profile.schema.json,
// creator, decoration, views) from the Zod schemas in src/schemas. Run it after changing a schema
// and commit the result; a test fails while the files are stale. `--dry-run` lists what would
// change without writing; `--check` does the same and exits 1 when anything is stale (for CI).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JSON_SCHEMA_DIR, contentJsonSchemas } from '../src/tools/json-schemas.ts';
import { parseCli } from '../src/cli.ts';

const { values } = parseCli({
  name: 'schemas',
  usage: 'Usage: npm run schemas [-- --dry-run] [--check]',
  options: {
    'dry-run': { type: 'boolean', help: 'list the files that would change; write nothing' },
    check: { type: 'boolean', help: 'like --dry-run, and exit 1 when any file is stale (for CI)' },
  },
});

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, JSON_SCHEMA_DIR);
const writing = !values['dry-run'] && !values.check;
const changed: string[] = [];
const files = contentJsonSchemas();
for (const { file, text } of files) {
  const target = path.join(dir, file);
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : undefined;
  if (current === text) continue;
  changed.push(file);
  console.log(`${writing ? (current === undefined ? 'created' : 'updated') : current === undefined ? 'would create' : 'would update'} ${path.join(JSON_SCHEMA_DIR, file)}`);
  if (writing) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(target, text);
  }
}

const unchanged = files.length - changed.length;
if (writing) {
  console.log(`${changed.length} schema file(s) written, ${unchanged} already up to date, in ${JSON_SCHEMA_DIR}/.`);
} else {
  console.log(`${changed.length} schema file(s) out of date, ${unchanged} up to date${values['dry-run'] ? ' (dry run: nothing written)' : ''}.`);
  if (values.check && changed.length) {
    console.error('Run `npm run schemas` and commit the files.');
    process.exit(1);
  }
}
