// The publish step: a complete release is named (one rename), then served (one more: the `dist`
// link, src/release/releases.ts). Then the lock goes, so the next build may start, while this one
// removes the releases it pruned.
import fs from 'node:fs';
import path from 'node:path';
import { LOCK_FILE, readReleaseInfo, releasePath, releasesDir, servedRelease, switchRelease, syncDir } from '../release/releases.ts';
import { acquireBuildLock } from '../release/lock.ts';
import { pointWranglerAtServedRelease } from './astro/wrangler-deploy-config.ts';
import { faultPoint } from './faults.ts';
import type { Build } from './pipeline.ts';
import type { ReleasePlan } from './plan.ts';
import type { Background } from './write.ts';
import { shownPath } from '../cli.ts';

/** Serves the new release; returns the seconds after which it was served. `unlock` saves the validation cache and releases the lock. */
export async function publishRelease(build: Build, release: ReleasePlan, background: Background, unlock: () => void): Promise<string> {
  const { o } = build;
  await build.step('Switching to the new release', async () => {
    fs.renameSync(release.fresh, releasePath(o.distDir, release.id));
    syncDir(releasesDir(o.distDir));
    await faultPoint('sealed');
    let killAt: Promise<void> | undefined;
    switchRelease(o.distDir, release.id, () => { killAt = faultPoint('switching'); });
    await killAt;
  });
  const servedAfter = build.seconds();
  await faultPoint('switched');
  if (o.target === 'cloudflare') console.log(`Deploy the served release with \`${pointWranglerAtServedRelease(o.root, o.distDir)}\`.`);
  // Served. The validation cache, when written late, goes before the lock, so the next build reads
  // it; that build may then start, while this one deletes the releases pruned (at 100,000 profiles
  // tens of seconds for a whole one), which the next would finish if this one died.
  unlock();
  // Removing old releases is housekeeping: a failure here is worth a line, not a failed build.
  await background.clearing.catch((e: unknown) => console.warn(`build: ${(e as Error).message}; the next build tries again.`));
  return servedAfter;
}

/**
 * Serves again the release served before `id`, if `id` is still the one served: a build that
 * trusted a list of changed files published `id`, then the check after it found content that does
 * not build, in a file the list left out (a pull after a failed build, whose list starts at the
 * pull before). A full build of that content publishes nothing; neither does this one, in the end.
 * Under the build lock; says what it did. Returns the release served afterwards.
 */
export function withdrawRelease(distDir: string, id: string): string | undefined {
  const previous = readReleaseInfo(distDir, id)?.previous;
  const shown = `${shownPath(distDir)}/`;
  let lock;
  try {
    lock = acquireBuildLock(path.join(releasesDir(distDir), LOCK_FILE));
  } catch (e) {
    console.error(`build: release ${id} was published from a list of changed files that left out a problem, and could not be withdrawn: ${(e as Error).message}`);
    return servedRelease(distDir);
  }
  try {
    if (!previous || servedRelease(distDir) !== id) return servedRelease(distDir);
    switchRelease(distDir, previous);
    console.error(`build: release ${id}, built from the list of changed files, is withdrawn: the content has the problem above, which the list left out. ${shown} serves release ${previous} again, as before this build.`);
    return previous;
  } finally {
    lock.release();
  }
}
