// Usage: npm run views:import -- <log>... [--content <dir>] [--dry-run]
//
// Counts profile page views in access logs in the nginx/Apache combined format (plain or gzip,
// read as streams line by line, so logs of any size work) and ADDS them to
// content/stats/views.yaml (or <dir>/stats/views.yaml; default CONTENT_DIR). A view is a
// `GET /p/<username>` answered 200, not from a bot, counted once per client address, profile and
// UTC day (see src/tools/access-log.ts). A profile not yet in the file starts from its own `views`.
// Import each log once: a second import of the same log counts its views again.
// `--dry-run` reports what would change without writing. Exits 0 when done, 1 when the content,
// the views file or a log cannot be used (nothing is written then), 2 on wrong usage.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ViewCounter, formatImportReport, formatReadProgress, formatViewsChanges, mergeViewCounts, showProgress, viewsFileHeader } from '../src/tools/access-log.ts';
import { contentDirFromEnv, loadContent } from '../src/content/load.ts';
import { formatProblem } from '../src/content/problems.ts';
import { JSON_SCHEMA_DIR } from '../src/tools/json-schemas.ts';
import { parseYamlFile } from '../src/content/yaml-file.ts';
import { ViewsStatsSchema } from '../src/schemas/index.ts';
import { failWith, parseCli, shownPath } from '../src/cli.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fail = failWith('views:import');

const cli = parseCli({
  name: 'views:import',
  usage: 'Usage: npm run views:import -- <log>... [--content <dir>] [--dry-run]',
  args: { '<log>...': 'access logs in the nginx/Apache combined format, plain or gzip' },
  options: {
    content: { type: 'string', value: '<dir>', help: 'the content folder whose stats/views.yaml gets the views (default: CONTENT_DIR)' },
    'dry-run': { type: 'boolean', help: 'report what would change; write nothing' },
  },
  env: { CONTENT_DIR: 'the content folder without --content (default ./content)' },
});
const { values, positionals: logs } = cli;
if (!logs.length) cli.usageError('which access logs?');

const contentDir = values.content ? path.resolve(values.content) : contentDirFromEnv();
const { content, problems } = loadContent(contentDir);
if (problems.length) {
  for (const p of problems) console.error(formatProblem(p));
  fail(1, `${problems.length} problem(s) in ${shownPath(contentDir)}: fix them first (\`npm run check\`). Nothing was imported.`);
}
for (const log of logs) {
  if (!fs.statSync(log, { throwIfNoEntry: false })?.isFile()) fail(1, `${log} is not a file. Nothing was imported.`);
}

const counter = new ViewCounter((username) => content.profiles.has(username));
// A big log takes minutes: on a terminal, say how far the reading has got.
const stopProgress = showProgress(process.stderr, () => counter.progress && `Reading ${formatReadProgress(counter.progress)}`);
for (const log of logs) {
  try {
    await counter.addFile(log, log);
  } catch (e) {
    stopProgress();
    fail(1, `could not read ${log}: ${(e as Error).message}. Nothing was written.`);
  }
}
stopProgress();
const report = counter.report;
console.log(formatImportReport(report));
if (report.lines > 0 && report.malformed === report.lines) {
  fail(1, 'no line is in the combined log format (`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`). Nothing was written.');
}

const statsFile = path.join(contentDir, 'stats', 'views.yaml');
const before = fs.existsSync(statsFile) ? fs.readFileSync(statsFile, 'utf8') : undefined;
const schemaPath = path.relative(path.dirname(statsFile), path.join(root, JSON_SCHEMA_DIR, 'views.schema.json')).split(path.sep).join('/');
const { text, changes } = mergeViewCounts(before, counter.views, (username) => content.profiles.get(username)!.views, viewsFileHeader(schemaPath));
if (!changes.length) {
  console.log(`No views to add: ${shownPath(statsFile)} is unchanged.`);
  process.exit(0);
}

// What is written must load as the build will load it.
const check = parseYamlFile(statsFile, text, ViewsStatsSchema);
if (!check.ok) fail(1, `the new ${shownPath(statsFile)} would not be valid (${check.problems.map((p) => p.message).join('; ')}). Nothing was written.`);

const total = changes.reduce((n, c) => n + c.after - c.before, 0);
console.log(`${shownPath(statsFile)}:\n${formatViewsChanges(changes)}`);
if (values['dry-run']) {
  console.log(`Dry run: would add ${total} view(s) to ${changes.length} profile(s); ${shownPath(statsFile)} was not written.`);
  process.exit(0);
}
fs.mkdirSync(path.dirname(statsFile), { recursive: true });
// Write beside it and rename: a crash never leaves a half-written file for the build to read.
const temp = `${statsFile}.${process.pid}.tmp`;
fs.writeFileSync(temp, text);
fs.renameSync(temp, statsFile);
console.log(`Added ${total} view(s) to ${changes.length} profile(s) in ${shownPath(statsFile)}. Commit it; the next build shows the counts.`);
