// Watches a folder and every folder below it, one non-recursive `fs.watch` each: a folder's watch
// reports every write to the files in it, whatever inode the name has now. Node's
// `fs.watch(dir, { recursive: true })` on Linux watches each file's inode instead, so a file
// replaced by a rename (`sed -i`, `mv`, an editor's atomic save, rsync) was seen once and then never
// again: its later edits were not built.
import fs from 'node:fs';
import path from 'node:path';

export interface TreeWatcher {
  close(): void;
}

/**
 * Calls `onChange` with the changed entry's path relative to `root` (with the platform's separator),
 * or null when the platform does not say which; folders for which `skip(relative)` is true (`.git`)
 * are not watched. A folder that appears later (created, renamed or moved in) is watched from then
 * on and its files reported as changed; one that goes is no longer watched. `onError` gets an
 * error that stops the watch of `root` itself.
 */
export function watchTree(root: string, onChange: (file: string | null) => void, skip: (relative: string) => boolean, onError: (e: Error) => void): TreeWatcher {
  /** Watched folders by relative path ('' for `root`), with the inode each was when its watch began. */
  const watched = new Map<string, { watcher: fs.FSWatcher; ino: number }>();
  let closed = false;

  /** Stops watching `relative` and every folder below it. */
  const forget = (relative: string) => {
    for (const [dir, w] of watched) {
      if (relative === '' || dir === relative || dir.startsWith(`${relative}${path.sep}`)) {
        w.watcher.close();
        watched.delete(dir);
      }
    }
  };

  /** Watches `relative` and the folders below it; with `announce`, reports the files found in them. */
  const watchFolder = (relative: string, announce: boolean) => {
    if (closed || watched.has(relative) || (relative !== '' && skip(relative))) return;
    const at = path.join(root, relative);
    let watcher: fs.FSWatcher;
    let ino: number;
    try {
      ino = fs.lstatSync(at).ino;
      watcher = fs.watch(at, (_event, name) => {
        if (name === null) return onChange(relative || null);
        const file = path.join(relative, name);
        // A folder's entry changed: a new folder there is watched, one gone or replaced forgotten.
        const now = folderIno(path.join(root, file));
        const known = watched.get(file);
        if (known && known.ino !== now) forget(file);
        if (now !== undefined && !watched.has(file)) watchFolder(file, true);
        onChange(file);
      });
    } catch (e) {
      // Gone before it could be watched: there is nothing to watch there.
      if (relative !== '') return;
      throw e;
    }
    watcher.on('error', (e) => {
      forget(relative);
      if (relative === '') onError(e);
    });
    watched.set(relative, { watcher, ino });
    let entries: fs.Dirent[] = [];
    try { entries = fs.readdirSync(at, { withFileTypes: true }); } catch { /* removed meanwhile */ }
    for (const e of entries) {
      const child = path.join(relative, e.name);
      if (e.isDirectory()) watchFolder(child, announce);
      // Written before this folder's watch began, after it appeared: changes too.
      else if (announce) onChange(child);
    }
  };

  watchFolder('', false);
  return {
    close() {
      closed = true;
      forget('');
    },
  };
}

/** The inode of a folder (not a link to one), or undefined. */
function folderIno(p: string): number | undefined {
  try {
    const st = fs.lstatSync(p);
    return st.isDirectory() ? st.ino : undefined;
  } catch {
    return undefined;
  }
}
