// Lists the content folder once, every folder in it, without following links: a symbolic link
// anywhere under it, or anything that is neither a regular file nor a folder (a FIFO, a socket, a
// device), is a problem naming the file. Only what this walk lists is ever read (read-file.ts).
import fs from 'node:fs';
import path from 'node:path';
import { LINK_PROBLEM, fileKind, notRegularProblem } from './read-file.ts';
import type { ContentProblem } from './problems.ts';

export interface ContentTree {
  /** The regular files of each folder by its path relative to the root (`''`, `profiles`), sorted; hidden files left out. */
  files: Map<string, string[]>;
  problems: ContentProblem[];
}

/**
 * Walks `root` (already checked to be a real folder: ContentReader.rootProblem). `.git` is not
 * walked: nothing in it is ever read, and a content folder that is a repository of its own has
 * thousands of files there. `skip`: a top-level folder not walked (the profiles, for a build that
 * wants the other files only).
 */
export function walkContent(root: string, skip?: string): ContentTree {
  const files = new Map<string, string[]>();
  const problems: ContentProblem[] = [];
  const walk = (rel: string) => {
    const dir = path.join(root, rel);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      problems.push({ file: dir, message: `cannot be listed: ${(e as Error).message}` });
      return;
    }
    const here: string[] = [];
    for (const e of entries) {
      // Dirent types come from the folder listing (lstat where the file system does not say): a link is a link.
      // The common case first, and no path made for it: a folder may list 100,000 profiles.
      if (e.isFile()) { if (!e.name.startsWith('.')) here.push(e.name); }
      else if (e.isSymbolicLink()) problems.push({ file: path.join(dir, e.name), ...LINK_PROBLEM });
      else if (e.isDirectory()) { if (e.name !== '.git' && !(rel === '' && e.name === skip)) walk(path.join(rel, e.name)); }
      else problems.push({ file: path.join(dir, e.name), ...notRegularProblem(fileKind(e)) });
    }
    files.set(rel, here.sort());
  };
  walk('');
  return { files, problems };
}
