// Usage: npm run check [-- <content-dir>] [--format text|github]
//
// Validates the whole content folder (default CONTENT_DIR, else ./content) with the same code the
// build runs, and reports every problem at once: file, line and column, key, what is wrong and how
// to fix it. Under GitHub Actions (or with --format github) it prints `::error` annotations so a
// pull request shows each problem on its line. Exits 1 when there is any problem.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { incrementalFromEnv, siteUrlFromEnv, validationCacheFile } from '../src/config.ts';
import { contentDirFromEnv, loadContentFast } from '../src/content/load.ts';
import { formatProblem, formatProblemGithub } from '../src/content/problems.ts';
import { checkCommand, parseCli, shownPath, step } from '../src/cli.ts';

const cli = parseCli({
  name: 'check',
  usage: 'Usage: npm run check [-- <content-dir>] [--format text|github]',
  args: { '<content-dir>': 'the content folder to check (default: CONTENT_DIR, else ./content)' },
  options: { format: { type: 'string', value: 'text|github', help: 'how problems are printed (default: github under GitHub Actions, else text)' } },
  env: {
    CONTENT_DIR: 'the content folder when none is given (default ./content)',
    GITHUB_ACTIONS: '`true`: print ::error annotations (--format github)',
    PROFILES_INCREMENTAL: '`0`: parse every file, ignoring the validation cache',
    SITE_URL: 'the site\'s public address, as the build has it: a custom domain that is its own host is a problem (not checked without it)',
  },
});
const { values, positionals } = cli;
if (positionals.length > 1) cli.usageError(`give one content folder, not ${positionals.length}`);
const format = values.format ?? (process.env.GITHUB_ACTIONS === 'true' ? 'github' : 'text');
if (format !== 'text' && format !== 'github') cli.usageError(`--format must be \`text\` or \`github\`, not \`${format}\``);

const started = performance.now();
const dir = positionals[0] ? path.resolve(positionals[0]) : contentDirFromEnv();
// The build's own loading, its validation cache included: a check after editing one file of a big
// folder parses that file only.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A line every 5 s only when it takes that long: 100,000 files parse for half a minute.
const { content, problems, warnings } = await step(`Checking ${shownPath(dir)}`,
  () => loadContentFast(dir, { cacheFile: validationCacheFile(root, dir), ignoreCache: !incrementalFromEnv(), siteUrl: process.env.SITE_URL ? siteUrlFromEnv() : undefined }), { quiet: true });
const print = format === 'github' ? formatProblemGithub : formatProblem;

for (const w of warnings) console.warn(format === 'github' ? print(w).replace('::error', '::warning') : `warning: ${print(w)}`);
for (const p of problems) console.error(print(p));

const ms = Math.round(performance.now() - started);
const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const counted = `${count(content.profiles.size, 'profile')}, ${count(content.creators.size, 'creator')}, ${count(content.decorations.size, 'decoration')}`;
if (problems.length) {
  const files = new Set(problems.map((p) => p.file)).size;
  console.error(`\n${problems.length} problem(s) in ${files} file(s) of ${shownPath(dir)} (${ms} ms). Fix each (as its hint says, where it has one), then run \`${checkCommand(dir, process.env.SITE_URL)}\` again.`);
  process.exit(1);
}
console.log(`Content OK: ${counted}${warnings.length ? `, ${warnings.length} warning(s)` : ''} (${ms} ms).`);
// The build refuses a custom domain that is the site's own host; without SITE_URL that is unknown here.
if (!process.env.SITE_URL && [...content.profiles.values()].some((p) => p.customDomain)) {
  console.log('Custom domains were not checked against the site\'s own host: SITE_URL is not set (the build checks them).');
}
