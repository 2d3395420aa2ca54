// Usage: node test/support/keep-renderer-build.ts <content-dir> <out-dir> <renderer-dir>
//
// `astro build` of a content folder as scripts/build-site.ts runs it (the public index handed over,
// every page rendered), keeping its pre-render code in <renderer-dir> (src/build/astro/keep-renderer.ts):
// the pages the kept renderer must reproduce byte for byte (test/build/page-renderer.test.ts).
// SITE_URL and SOURCE_DATE_EPOCH come from the environment; DEPLOY_TARGET too (default node).
// Prints one `BUILT {"profilePagesWritten":…}` line: the profile pages Astro rendered.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as astroBuild } from 'astro';
import { buildTimeFromEnv, deployTargetFromEnv, siteUrlFromEnv } from '../../src/config.ts';
import { loadContent } from '../../src/content/load.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { handOverSiteIndex, pagesRendered } from '../../src/build/astro/page-data.ts';
import { keepRendererIn } from '../../src/build/astro/keep-renderer.ts';
import { renderFingerprint } from '../../src/build/reuse/page-reuse.ts';

const [contentDir, outDir, rendererDir] = process.argv.slice(2);
if (!contentDir || !outDir || !rendererDir) {
  console.error('Usage: node test/support/keep-renderer-build.ts <content-dir> <out-dir> <renderer-dir>');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const siteUrl = siteUrlFromEnv();
const { content, problems } = loadContent(contentDir, { siteUrl });
if (problems.length) throw new Error(`${contentDir} has ${problems.length} problem(s)`);
handOverSiteIndex(buildSiteIndex(content, { siteUrl, builtAt: buildTimeFromEnv() }));
keepRendererIn({ dir: rendererDir, fingerprint: renderFingerprint(root, siteUrl), target: deployTargetFromEnv() });
// As the build script: a production build, none of vitest's `import.meta.env` names inherited.
process.env.CONTENT_DIR = contentDir;
process.env.SITE_URL = siteUrl;
process.env.NODE_ENV = 'production';
for (const name of ['DEV', 'PROD', 'SSR', 'MODE', 'BASE_URL']) delete process.env[name];
process.env.ASTRO_TELEMETRY_DISABLED = '1';
await astroBuild({ root, outDir, cacheDir: path.join(outDir, '..', 'astro-cache'), logLevel: 'warn' });
console.log(`BUILT ${JSON.stringify({ profilePagesWritten: pagesRendered() })}`);
