// Usage: node scripts/bench/build-floor.ts <content-dir> <out-dir>
//
// The benchmark floor: the least work any build of this service must do, in plain Node. Parses each
// profile's YAML, writes its JSON and a small HTML page. No validation, no Astro. `npm run bench`
// runs it beside the real build in the same run, so the ratio means something on a shared machine.
// Prints one `BENCH {"ms":…,"maxRssKb":…,"files":…}` line.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const [contentDir, outDir] = process.argv.slice(2);
if (!contentDir || !outDir) {
  console.error('Usage: node scripts/bench/build-floor.ts <content-dir> <out-dir>');
  process.exit(2);
}
// The last run's output is removed before the clock starts, as the bench does for Hugo and our build.
fs.rmSync(outDir, { recursive: true, force: true });
const started = performance.now();
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.codePointAt(0)};`);
const usersDir = path.join(outDir, 'api', 'v1', 'users');
const pagesDir = path.join(outDir, 'p');
fs.mkdirSync(usersDir, { recursive: true });
fs.mkdirSync(pagesDir, { recursive: true });
let files = 0;
for (const name of fs.readdirSync(path.join(contentDir, 'profiles'))) {
  if (!name.endsWith('.yaml')) continue;
  const username = name.slice(0, -5);
  const data = parse(fs.readFileSync(path.join(contentDir, 'profiles', name), 'utf8')) as Record<string, unknown>;
  delete data.private;
  fs.writeFileSync(path.join(usersDir, username), JSON.stringify({ success: true, data: { username, ...data } }));
  fs.writeFileSync(path.join(pagesDir, `${username}.html`),
    `<!doctype html><html lang="en"><meta charset="utf-8"><title>${esc(String(data.displayName))}</title><h1>${esc(String(data.displayName))}</h1><p>${esc(String(data.bio ?? ''))}</p></html>`);
  files += 2;
}
console.log(`BENCH ${JSON.stringify({ ms: Math.round(performance.now() - started), maxRssKb: process.resourceUsage().maxRSS, files })}`);
