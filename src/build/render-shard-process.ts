// Usage (by the build, not by hand): node src/build/render-shard-process.ts <job.json> <out-dir> <shard>
//
// One shard of a big build's profile pages (src/build/render-shards.ts): reads the public index and
// its list of pages from the job file the build wrote, and runs the same Astro build as
// scripts/build-site.ts into <out-dir>, rendering only those profile pages. Prints
// `PROGRESS <pages rendered>` every second and one `SHARD {"maxRssKb":…}` line at the end.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as astroBuild } from 'astro';
import { handOverSiteIndex, pagesRendered } from './page-data.ts';
import type { ShardJob } from './render-shards.ts';

const [jobFile, outDir, shard] = process.argv.slice(2);
if (!jobFile || !outDir || !shard) {
  console.error('Usage: node src/build/render-shard-process.ts <job.json> <out-dir> <shard>');
  process.exit(2);
}
// Dies with the build: the build's end of the IPC channel closes when the build exits or is killed.
// Unreferenced, so the channel alone does not keep this process running.
if (process.send) {
  process.once('disconnect', () => {
    console.error(`render shard ${shard}: the build is gone; stopping`);
    process.exit(1);
  });
  process.channel?.unref();
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const job = JSON.parse(fs.readFileSync(jobFile, 'utf8')) as ShardJob;
handOverSiteIndex(job.index, new Set(job.render));
process.env.SITE_URL = job.index.siteUrl;
process.env.ASTRO_TELEMETRY_DISABLED = '1';
// The build sums these into its progress lines.
const progress = setInterval(() => console.log(`PROGRESS ${pagesRendered()}`), 1000);
// Its own cache folder: two Astro builds at once must not write the same files.
await astroBuild({
  root, outDir,
  cacheDir: path.join(root, 'node_modules', '.astro', `shard-${shard}`),
  logLevel: process.env.ASTRO_LOG_LEVEL as 'info' | undefined ?? 'warn',
});
clearInterval(progress);
console.log(`SHARD ${JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS })}`);
