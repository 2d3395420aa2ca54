// Usage: npm run build            (CONTENT_DIR, SITE_URL, SOURCE_DATE_EPOCH from the environment)
//
// Validates the content, builds the pages with Astro and writes the API files into a fresh folder,
// and swaps it in as dist/ only when every step succeeded: bad content never replaces the last
// good build.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as astroBuild } from 'astro';
import { buildTimeFromEnv, distDirFromEnv, siteUrlFromEnv } from '../src/lib/config.ts';
import { contentDirFromEnv, loadContent } from '../src/lib/content.ts';
import { formatProblem } from '../src/lib/content-problems.ts';
import { SITE_INDEX_ENV } from '../src/lib/build-data.ts';
import { buildSiteIndex } from '../src/lib/site.ts';
import { swapInBuild, writeApiFiles } from '../src/lib/write-build.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);

let siteUrl: string;
try {
  siteUrl = siteUrlFromEnv();
} catch (e) {
  console.error(`build: ${(e as Error).message}`);
  process.exit(2);
}
const contentDir = contentDirFromEnv();
const distDir = distDirFromEnv();
const builtAt = buildTimeFromEnv();

const { content, problems, warnings } = loadContent(contentDir);
for (const w of warnings) console.warn(`warning: ${formatProblem(w)}`);
if (problems.length) {
  for (const p of problems) console.error(formatProblem(p));
  console.error(`\n${problems.length} problem(s) in ${path.relative(process.cwd(), contentDir) || contentDir}. Nothing was built; ${path.relative(process.cwd(), distDir)}/ is untouched.`);
  console.error('Fix each line above (the hint says how), then run `npm run check` to try again quickly.');
  process.exit(1);
}

const index = buildSiteIndex(content, { siteUrl, builtAt });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'profiles-build-'));
const indexFile = path.join(work, 'site-index.json');
fs.writeFileSync(indexFile, JSON.stringify(index));
process.env[SITE_INDEX_ENV] = indexFile;
process.env.SITE_URL = siteUrl;
process.env.ASTRO_TELEMETRY_DISABLED = '1';

const fresh = `${distDir}.next-${process.pid}`;
fs.rmSync(fresh, { recursive: true, force: true });
try {
  await astroBuild({ root, outDir: fresh, logLevel: process.env.ASTRO_LOG_LEVEL as 'info' | undefined ?? 'warn' });
  const stats = writeApiFiles(fresh, index, content);
  swapInBuild(fresh, distDir);
  const suspended = index.users.filter((u) => u.status === 'suspended').length;
  console.log(
    `Built ${index.users.length} profiles (${suspended} suspended), ${index.creators.length} active creators, ` +
    `${stats.userFiles} API files and ${stats.mediaFiles} images into ${path.relative(process.cwd(), distDir) || distDir}/ in ${seconds()} s.`,
  );
} catch (e) {
  fs.rmSync(fresh, { recursive: true, force: true });
  console.error(`build failed: ${(e as Error).stack ?? e}`);
  console.error(`${path.relative(process.cwd(), distDir)}/ is untouched.`);
  process.exitCode = 1;
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
