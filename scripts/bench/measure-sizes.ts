// Usage: node scripts/bench/measure-sizes.ts <dir> [--group <prefix>]... [--json]
//
// Files, bytes and inodes of a folder (a release, a content folder, a cache), per group and per
// kind, for docs/scale.md "A million profiles". A file's group is the longest `--group` prefix its
// path starts with, else its first folder; its kind is `.br`, `.gz` or `plain`. Bytes are the
// files' lengths (`du --apparent-size`) and the blocks they hold (`du`); a file hard-linked from
// several places (a reused page of an earlier release) is counted once in the blocks and inodes,
// as `du` does, so the figures say what the folder adds to the disk. Symbolic links are not
// followed. Reads only.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { group: { type: 'string', multiple: true, default: [] }, json: { type: 'boolean', default: false } },
});
const root = positionals[0];
if (!root || positionals.length > 1 || !fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
  console.error('Usage: node scripts/bench/measure-sizes.ts <dir> [--group <prefix>]... [--json]');
  process.exit(2);
}

interface Tally { files: number; bytes: number; blocks: number; inodes: number; directories: number; links: number }
const tally = (): Tally => ({ files: 0, bytes: 0, blocks: 0, inodes: 0, directories: 0, links: 0 });
const KINDS = ['plain', '.br', '.gz'] as const;
type Kind = (typeof KINDS)[number];

// Longest prefix first, so `client/api/v1/users` wins over `client/api`.
const prefixes = [...new Set(values.group.map((g) => g.replace(/^\/+|\/+$/g, '')))].sort((a, b) => b.length - a.length);
/** A folder at the top is its own group; a file there is in `.`. */
const groupOf = (rel: string, isDirectory: boolean) =>
  prefixes.find((p) => rel === p || rel.startsWith(`${p}/`)) ?? (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : isDirectory ? rel : '.');
const kindOf = (name: string): Kind => (name.endsWith('.br') ? '.br' : name.endsWith('.gz') ? '.gz' : 'plain');

const groups = new Map<string, Record<Kind, Tally>>();
const total = tally();
/** Inodes met so far (dev:ino): a hard link met again adds neither blocks nor an inode. */
const seen = new Set<string>();

function count(group: string, kind: Kind | undefined, st: fs.Stats, isDirectory: boolean) {
  let byKind = groups.get(group);
  if (!byKind) groups.set(group, byKind = { plain: tally(), '.br': tally(), '.gz': tally() });
  const t = byKind[kind ?? 'plain'];
  const first = !seen.has(`${st.dev}:${st.ino}`);
  if (first) seen.add(`${st.dev}:${st.ino}`);
  for (const x of [t, total]) {
    if (isDirectory) x.directories++;
    else if (st.isSymbolicLink()) x.links++;
    else { x.files++; x.bytes += st.size; }
    if (first) { x.inodes++; x.blocks += st.blocks * 512; }
  }
}

// Depth first with an explicit stack: a folder of a million files is one readdir, not a million frames.
const stack = [''];
while (stack.length) {
  const rel = stack.pop()!;
  for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    const st = fs.lstatSync(path.join(root, child));
    if (entry.isDirectory()) {
      count(groupOf(child, true), undefined, st, true);
      stack.push(child);
    } else {
      count(groupOf(child, false), kindOf(entry.name), st, false);
    }
  }
}

const rows = [...groups].sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([group, byKind]) =>
  KINDS.filter((k) => byKind[k].files + byKind[k].directories + byKind[k].links > 0).map((kind) => ({ group, kind, ...byKind[kind] })));

if (values.json) {
  console.log(JSON.stringify({ dir: path.resolve(root), total, rows }, null, 2));
} else {
  const n = (x: number) => x.toLocaleString('en-US');
  const mb = (x: number) => (x < 1e6 ? `${(x / 1e3).toFixed(1)} KB` : `${(x / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 })} MB`);
  console.log(`${path.resolve(root)}\n`);
  console.log('| group | kind | files | bytes (apparent) | on disk (du) | inodes |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.group} | ${r.kind} | ${n(r.files)} | ${mb(r.bytes)} | ${mb(r.blocks)} | ${n(r.inodes)} |`);
  console.log(`| all | | ${n(total.files)} | ${mb(total.bytes)} | ${mb(total.blocks)} | ${n(total.inodes)} (${n(total.directories)} folders${total.links ? `, ${n(total.links)} symbolic links` : ''}) |`);
}
