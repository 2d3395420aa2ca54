// What `astro dev`'s file watcher leaves alone: the content folder and the builds' outputs. Vite's
// watcher (chokidar 3) holds one inotify watch per file under the project, and neither is code a
// page imports: the dev server reads the content itself (page-data.ts) and serves no build. With a
// 100,000-profile release in the project, `npm run dev` took 28 s to listen and used up all of the
// machine's 192,536 watches, so that other programs' `fs.watch` failed with ENOSPC; with a
// 100,000-profile content folder in it, 9.7 s and 102,534 watches (docs/scale.md, "astro dev").
import path from 'node:path';
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
