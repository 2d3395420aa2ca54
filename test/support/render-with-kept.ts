// Usage: node test/support/render-with-kept.ts <renderer-dir> <content-dir> <client-dir>
//
// Renders every profile page of a content folder, and the other pre-rendered files, with a kept
// renderer (src/build/page-renderer.ts) in a fresh process, as an edit build would: what
// test/build/page-renderer.test.ts compares with `astro build`. SITE_URL, SOURCE_DATE_EPOCH and
// DEPLOY_TARGET come from the environment. Prints one `RENDERED {...}` line.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTimeFromEnv, deployTargetFromEnv, siteUrlFromEnv } from '../../src/config.ts';
import { loadContent } from '../../src/content/load.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { openRenderer } from '../../src/build/page-renderer.ts';
import { renderFingerprint } from '../../src/build/page-reuse.ts';

const [rendererDir, contentDir, clientDir] = process.argv.slice(2);
if (!rendererDir || !contentDir || !clientDir) {
  console.error('Usage: node test/support/render-with-kept.ts <renderer-dir> <content-dir> <client-dir>');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const siteUrl = siteUrlFromEnv();
process.env.CONTENT_DIR = contentDir;
const { content, problems } = loadContent(contentDir, { siteUrl });
if (problems.length) throw new Error(`${contentDir} has ${problems.length} problem(s)`);
const index = buildSiteIndex(content, { siteUrl, builtAt: buildTimeFromEnv() });
const renderer = await openRenderer(rendererDir, { fingerprint: renderFingerprint(root, siteUrl), target: deployTargetFromEnv() });
const profiles = await renderer.renderChangedPages(index, index.users.map((u) => u.username), clientDir);
const others = await renderer.renderPaths(index, ['/', '/404', '/docs', '/sitemap.xml', '/robots.txt', '/openapi.json'], clientDir);
console.log(`RENDERED ${JSON.stringify({ profiles, others: others.map((f) => path.relative(clientDir, f)) })}`);
