// Usage: npm run rollback [-- --list | --to <id>]      (DIST_DIR from the environment)
//
// Switches DIST_DIR back to the release served before the current one, in one atomic step (the
// same link rename as a build: src/release/releases.ts). A running server picks it up at once.
// Again goes further back; `--to <id>` goes to any kept release, newer ones included.
import path from 'node:path';
import { parseCli, shownPath } from '../src/cli.ts';
import { distDirFromEnv } from '../src/config.ts';
import { BuildLockHeld, acquireBuildLock } from '../src/release/lock.ts';
import { LOCK_FILE, listReleases, readReleaseInfo, releasesDir, servedRelease, switchRelease } from '../src/release/releases.ts';

const cli = parseCli({
  name: 'rollback',
  usage: 'Usage: npm run rollback [-- --list | --to <id>]      (DIST_DIR from the environment)',
  options: {
    list: { type: 'boolean', help: 'the kept releases, newest last; * marks the one served' },
    to: { type: 'string', value: '<id>', help: 'switch to that release instead of the one served before' },
  },
  env: { DIST_DIR: 'the link to the served release (default ./dist)' },
});
const { values } = cli;
// Either lists or switches: `--list --to x` would list and leave `--to` unsaid.
if (values.list && values.to !== undefined) cli.usageError('give --list or --to, not both');

const distDir = distDirFromEnv();
const shown = shownPath(distDir);
const releases = listReleases(distDir);
const served = servedRelease(distDir);

if (values.list) {
  if (!releases.length) console.log(`No releases beside ${shown}: run \`npm run build\`.`);
  for (const id of releases) {
    const info = readReleaseInfo(distDir, id);
    console.log(`${id === served ? '*' : ' '} ${id}  built ${info?.builtAt ?? '?'}${info?.previous ? `  after ${info.previous}` : ''}`);
  }
  process.exit(0);
}

// Nothing built yet: nothing to go back to, and no folder to take the lock in.
if (!releases.length) {
  console.error(`rollback: no releases beside ${shown}: run \`npm run build\` first.`);
  process.exit(1);
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
  const target = values.to ?? previousOf(served);
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
