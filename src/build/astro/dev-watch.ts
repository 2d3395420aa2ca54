// What `astro dev` watches. Vite's watcher (chokidar 3) holds one inotify watch per file under the
// project: it leaves the content folder and the builds' outputs alone, which no page imports. With a
// 100,000-profile release in the project, `npm run dev` took 28 s to listen and used up all of the
// machine's 192,536 watches, so that other programs' `fs.watch` failed with ENOSPC; with a
// 100,000-profile content folder in it, 9.7 s and 102,534 watches (docs/scale.md, "astro dev").
// The content folder is watched as `npm start` watches it, one watch per folder, and an edit is
// shown: the dev server read the content once and showed no edit until it was restarted.
import path from 'node:path';
import type { Plugin } from 'vite';
import { watchTree, type TreeWatcher } from '../watch-tree.ts';
import { CONTENT_EDITED_EVENT } from './page-data.ts';
import { astroFallback } from './fallbacks.ts';
import { distDirFromEnv } from '../../config.ts';
import { contentDirFromEnv } from '../../content/load.ts';
import { releasesDir } from '../../release/releases.ts';

/**
 * The folders of the project `root` that builds write, by name, as .gitignore lists them: `dist`
 * (the link to the served release) and `dist.*` (its releases, the build's scratch folders),
 * `dist-*` (other `DIST_DIR`s and their releases, the server bundle), `.wrangler` (wrangler's state).
 */
const BUILD_OUTPUT = /^(dist|dist\..+|dist-.+|\.wrangler)$/;

/**
 * Vite's `server.watch.ignored` for a project at `root`: true for a path inside the content folder,
 * the build's output (`DIST_DIR` and its releases, wherever they are) or a folder named as builds
 * name theirs at the top of the project. A content folder that holds the project is watched as before.
 */
export function unwatchedByDev(root: string, env: NodeJS.ProcessEnv = process.env): (file: string) => boolean {
  const top = path.resolve(root);
  const content = contentDirFromEnv(env);
  const dist = distDirFromEnv(env);
  const folders = [dist, releasesDir(dist), ...(inside(top, content) ? [] : [content])];
  return (file) => {
    const at = path.resolve(top, file);
    if (folders.some((folder) => inside(at, folder))) return true;
    const rel = path.relative(top, at);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) && BUILD_OUTPUT.test(rel.split(path.sep)[0]!);
  };
}

/** Whether `file` is `folder` or below it. */
const inside = (file: string, folder: string) => file === folder || file.startsWith(folder + path.sep);

/** How long the content folder must be quiet before the pages reload: a `git pull` writes its files within this. */
const QUIET_MS = 100;

/**
 * The event Astro's dev server clears its route cache on (`getStaticPaths`' results, which hold each
 * profile page's props): Astro sends it when its own content layer changes
 * (astro/dist/content/vite-plugin-content-virtual-mod.js). An internal: README.md here.
 */
const ASTRO_CONTENT_CHANGED = 'astro:content-changed';

/** The content folder's watch of the dev server now running: a restart of the server configures it again. */
let watching: TreeWatcher | undefined;

/**
 * A Vite plugin (public API but for one event, above) for `astro dev`: after an edit under the
 * content folder the server reads the content again (page-data.ts) and renders every page from it,
 * and every open page reloads. Hidden folders (`.git`) are not watched.
 */
export const reloadOnContentEdits = (env: NodeJS.ProcessEnv = process.env): Plugin => ({
  name: 'profile-lookup:reload-on-content-edits',
  apply: 'serve',
  configureServer(server) {
    const dir = contentDirFromEnv(env);
    let timer: NodeJS.Timeout | undefined;
    const reload = async () => {
      if (astroFallback('content-changed', env)) {
        // Public API: a new dev server, new modules, nothing cached (a second or two).
        await server.restart();
        return;
      }
      for (const [name, environment] of Object.entries(server.environments)) {
        if (name === 'client') continue;
        environment.hot.send(CONTENT_EDITED_EVENT, {});
        environment.hot.send(ASTRO_CONTENT_CHANGED, {});
      }
      server.environments.client?.hot.send({ type: 'full-reload', path: '*' });
    };
    let watcher: TreeWatcher | undefined;
    try {
      watcher = watchTree(dir, () => {
        clearTimeout(timer);
        timer = setTimeout(() => reload().catch((e: Error) => server.config.logger.error(`reloading after an edit of ${dir}: ${e.message}`)), QUIET_MS);
      }, (folder) => path.basename(folder).startsWith('.'), (e) => server.config.logger.warn(`stopped watching ${dir}: ${e.message}; restart to see edits.`));
    } catch (e) {
      server.config.logger.warn(`not watching ${dir} (${(e as Error).message}): restart to see edits.`);
    }
    // A restart configures the new server before it closes this one.
    watching?.close();
    watching = watcher;
    server.httpServer?.once('close', () => {
      clearTimeout(timer);
      watcher?.close();
      if (watching === watcher) watching = undefined;
    });
  },
});
