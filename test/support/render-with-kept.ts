// Usage: node test/support/render-with-kept.ts <renderer-dir> <content-dir> <client-dir> [--profiles-only] [--after <content-dir>]
//
// Renders every page of a content folder with a kept renderer (src/build/astro/page-renderer.ts) in a
// fresh process, as an edit build would: what test/build/page-renderer.test.ts compares with
// `astro build`. `renderSite` by default; with --profiles-only, `renderChangedPages` for every
// profile and `renderPaths` for the home page. With --after, the same renderer first renders every
// page of another content folder (into `<client-dir>.before`), as `npm start`'s builder renders build
// after build in one process. SITE_URL, SOURCE_DATE_EPOCH and DEPLOY_TARGET come
// from the environment. Prints one `RENDERED {"files":[...]}` line.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTimeFromEnv, deployTargetFromEnv, siteUrlFromEnv } from '../../src/config.ts';
import { loadContent } from '../../src/content/load.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';
import { openRenderer } from '../../src/build/astro/page-renderer.ts';
import { renderFingerprint } from '../../src/build/reuse/page-reuse.ts';

const [rendererDir, contentDir, clientDir, ...rest] = process.argv.slice(2);
const mode = rest.includes('--profiles-only') ? '--profiles-only' : undefined;
const after = rest.includes('--after') ? rest[rest.indexOf('--after') + 1] : undefined;
if (!rendererDir || !contentDir || !clientDir || (rest.includes('--after') && !after)) {
  console.error('Usage: node test/support/render-with-kept.ts <renderer-dir> <content-dir> <client-dir> [--profiles-only] [--after <content-dir>]');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const siteUrl = siteUrlFromEnv();
const indexOf = (dir: string) => {
  process.env.CONTENT_DIR = dir;
  const { content, problems } = loadContent(dir, { siteUrl });
  if (problems.length) throw new Error(`${dir} has ${problems.length} problem(s)`);
  return buildSiteIndex(content, { siteUrl, builtAt: buildTimeFromEnv() });
};
const renderer = await openRenderer(rendererDir, { fingerprint: renderFingerprint(root, siteUrl), target: deployTargetFromEnv() });
if (after) {
  const before = indexOf(after);
  await renderer.renderSite(before, before.users.map((u) => u.username), `${clientDir}.before`);
}
const index = indexOf(contentDir);
const usernames = index.users.map((u) => u.username);
const files = mode === '--profiles-only'
  ? [...await renderer.renderChangedPages(index, usernames, clientDir), ...await renderer.renderPaths(index, ['/'], clientDir)]
  : await renderer.renderSite(index, usernames, clientDir);
console.log(`RENDERED ${JSON.stringify({ files: files.map((f) => path.relative(clientDir, f)) })}`);
