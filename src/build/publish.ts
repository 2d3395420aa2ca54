// The publish step: a complete release is named (one rename), then served (one more: the `dist`
// link, src/release/releases.ts). Then the lock goes, so the next build may start, while this one
// removes the releases it pruned.
import fs from 'node:fs';
import { releasePath, releasesDir, switchRelease, syncDir } from '../release/releases.ts';
import { pointWranglerAtServedRelease } from './astro/wrangler-deploy-config.ts';
import { faultPoint } from './faults.ts';
import type { Build } from './pipeline.ts';
import type { ReleasePlan } from './plan.ts';
import type { Background } from './write.ts';

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
