// Usage: node test/support/render-with-kept.ts <renderer-dir> <content-dir> <client-dir> [--profiles-only]
//
// Renders every page of a content folder with a kept renderer (src/build/astro/page-renderer.ts) in a
// fresh process, as an edit build would: what test/build/page-renderer.test.ts compares with
// `astro build`. `renderSite` by default; with --profiles-only, `renderChangedPages` for every
// profile and `renderPaths` for the home page. SITE_URL, SOURCE_DATE_EPOCH and DEPLOY_TARGET come
// from the environment. Prints one `RENDERED {"files":[...]}` line.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTimeFromEnv, deployTargetFromEnv, siteUrlFromEnv } from '../../src/config.ts';
import { loadContent } from '../../src/content/load.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { openRenderer } from '../../src/build/astro/page-renderer.ts';
import { renderFingerprint } from '../../src/build/reuse/page-reuse.ts';

const [rendererDir, contentDir, clientDir, mode] = process.argv.slice(2);
if (!rendererDir || !contentDir || !clientDir) {
  console.error('Usage: node test/support/render-with-kept.ts <renderer-dir> <content-dir> <client-dir> [--profiles-only]');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const siteUrl = siteUrlFromEnv();
process.env.CONTENT_DIR = contentDir;
const { content, problems } = loadContent(contentDir, { siteUrl });
if (problems.length) throw new Error(`${contentDir} has ${problems.length} problem(s)`);
const index = buildSiteIndex(content, { siteUrl, builtAt: buildTimeFromEnv() });
const renderer = await openRenderer(rendererDir, { fingerprint: renderFingerprint(root, siteUrl), target: deployTargetFromEnv() });
const usernames = index.users.map((u) => u.username);
const files = mode === '--profiles-only'
  ? [...await renderer.renderChangedPages(index, usernames, clientDir), ...await renderer.renderPaths(index, ['/'], clientDir)]
  : await renderer.renderSite(index, usernames, clientDir);
console.log(`RENDERED ${JSON.stringify({ files: files.map((f) => path.relative(clientDir, f)) })}`);
