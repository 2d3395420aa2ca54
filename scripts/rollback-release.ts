// Usage: npm run rollback [-- --list | --to <id> | --help]      (DIST_DIR from the environment)
//
// Switches DIST_DIR back to the release served before the current one, in one atomic step (the
// same link rename as a build: src/build/releases.ts). A running server picks it up at once.
// Again goes further back; `--to <id>` goes to any kept release, newer ones included.
import path from 'node:path';
import { distDirFromEnv } from '../src/config.ts';
import { BuildLockHeld, acquireBuildLock } from '../src/build/build-lock.ts';
import { LOCK_FILE, listReleases, readReleaseInfo, releasesDir, servedRelease, switchRelease } from '../src/build/releases.ts';

const USAGE = `Usage: npm run rollback [-- --list | --to <id> | --help]

Switches DIST_DIR (default dist) back to the release served before the current one.
  --list       the kept releases, newest last; * marks the one served
  --to <id>    switch to that release instead
Exit codes: 0 switched (or listed), 1 nothing to switch to, 2 bad arguments, 75 a build is running.`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const toAt = args.indexOf('--to');
const known = new Set(['--list', '--to']);
if (args.some((a, i) => !known.has(a) && (toAt < 0 || i !== toAt + 1)) || (toAt >= 0 && !args[toAt + 1])) {
  console.error(`rollback: unknown arguments \`${args.join(' ')}\`\n\n${USAGE}`);
  process.exit(2);
}

const distDir = distDirFromEnv();
const shown = path.relative(process.cwd(), distDir) || distDir;
const releases = listReleases(distDir);
const served = servedRelease(distDir);

if (args.includes('--list')) {
  if (!releases.length) console.log(`No releases beside ${shown}: run \`npm run build\`.`);
  for (const id of releases) {
    const info = readReleaseInfo(distDir, id);
    console.log(`${id === served ? '*' : ' '} ${id}  built ${info?.builtAt ?? '?'}${info?.previous ? `  after ${info.previous}` : ''}`);
  }
  process.exit(0);
}

// Not while a build runs: it may be about to switch, or to prune the release rolled back to.
let lock;
try {
  lock = acquireBuildLock(path.join(releasesDir(distDir), LOCK_FILE), 'rollback');
} catch (e) {
  if (!(e instanceof BuildLockHeld)) throw e;
  console.error(`rollback: ${e.message}`);
  process.exit(75);
}
try {
  const target = toAt >= 0 ? args[toAt + 1]! : previousOf(served);
  if (!target) {
    console.error(`rollback: no release to go back to from ${served ?? `${shown} (not a release)`}; kept: ${releases.join(', ') || 'none'}.`);
    process.exitCode = 1;
  } else if (!releases.includes(target)) {
    console.error(`rollback: no release \`${target}\`; kept: ${releases.join(', ') || 'none'} (\`npm run rollback -- --list\`).`);
    process.exitCode = 1;
  } else {
    switchRelease(distDir, target);
    console.log(`${shown} now serves release ${target} (was ${served ?? 'none'}). \`npm run rollback\` again goes further back.`);
  }
} finally {
  lock.release();
}

/** The release served before `id` (recorded when it was built), else the newest older one kept. */
function previousOf(id: string | undefined): string | undefined {
  if (!id) return undefined;
  const recorded = readReleaseInfo(distDir, id)?.previous;
  if (recorded && releases.includes(recorded)) return recorded;
  return releases.filter((r) => r < id).at(-1);
}
