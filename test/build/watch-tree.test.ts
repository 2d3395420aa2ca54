// `npm start`'s watcher (src/build/watch-tree.ts): every change to a file under the content
// folder is reported, however the file was written, in folders made after the watch began too.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { watchTree, type TreeWatcher } from '../../src/build/watch-tree.ts';
import { workDir } from '../support/built-server.ts';

const open: TreeWatcher[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const w of open.splice(0)) w.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A content folder with `profiles/bob.yaml`, watched; `seen` holds what was reported, `reported(file)` waits for the next report of it. */
function watched(name: string) {
  const root = workDir(name);
  dirs.push(root);
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(path.join(root, 'profiles'), { recursive: true });
  fs.mkdirSync(path.join(root, '.git'));
  fs.writeFileSync(path.join(root, 'profiles', 'bob.yaml'), 'displayName: Bob\n');
  const seen: (string | null)[] = [];
  const waiting: { file: string; resolve: () => void }[] = [];
  const w = watchTree(root, (file) => {
    seen.push(file);
    for (const x of waiting.splice(0)) if (x.file === file) x.resolve(); else waiting.push(x);
  }, (rel) => path.basename(rel).startsWith('.'), (e) => { throw e; });
  open.push(w);
  /** Resolves at the next report of `file` (relative, `/`-separated), or fails after 10 s with what was seen. */
  const reported = (file: string) => new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${file} not reported; seen: ${JSON.stringify(seen)}`)), 10_000);
    waiting.push({ file: file.split('/').join(path.sep), resolve: () => { clearTimeout(t); resolve(); } });
  });
  const at = (file: string) => path.join(root, ...file.split('/'));
  let markers = 0;
  /**
   * Returns once every report of what was written in `folder` before has arrived: a folder's events
   * come in order, so a marker file written there comes last. A write's reports may be several.
   */
  const drained = async (folder: string) => {
    const marker = `${folder}/marker-${++markers}.tmp`;
    const done = reported(marker);
    fs.writeFileSync(at(marker), '');
    await done;
  };
  return { root, seen, reported, at, drained };
}

describe('watchTree', () => {
  test('a file replaced by a rename (sed -i, an editor\'s atomic save) is reported then, and at every edit after', async () => {
    const { reported, at, drained } = watched('watch-replace');
    for (let i = 0; i < 3; i++) {
      let next = reported('profiles/bob.yaml');
      fs.writeFileSync(at('profiles/bob.yaml.tmp'), `displayName: Bob ${i}\n`);
      fs.renameSync(at('profiles/bob.yaml.tmp'), at('profiles/bob.yaml'));
      await next;
      await drained('profiles');
      // In place, into the inode the rename put there: what Node's recursive watch missed.
      next = reported('profiles/bob.yaml');
      fs.writeFileSync(at('profiles/bob.yaml'), `displayName: Bob ${i} again\n`);
      await next;
    }
  });

  test('a folder made after the watch began: its files are reported, and their edits after', async () => {
    const { reported, at, drained } = watched('watch-new-folder');
    // Made with a file in it at once (as `git pull` or `cp -r` does): the file is reported with the folder.
    let next = reported('avatars/bob.png');
    fs.mkdirSync(at('avatars/sub'), { recursive: true });
    fs.writeFileSync(at('avatars/bob.png'), 'x');
    await next;
    await drained('avatars');
    next = reported('avatars/bob.png');
    fs.writeFileSync(at('avatars/bob.png'), 'y');
    await next;
    next = reported('avatars/sub/deep.png');
    fs.writeFileSync(at('avatars/sub/deep.png'), 'z');
    await next;
  });

  test('a folder removed and made again is watched again', async () => {
    const { reported, at, drained } = watched('watch-again');
    let next = reported('profiles');
    fs.rmSync(at('profiles'), { recursive: true });
    await next;
    next = reported('profiles/carol.yaml');
    fs.mkdirSync(at('profiles'));
    fs.writeFileSync(at('profiles/carol.yaml'), 'displayName: Carol\n');
    await next;
    await drained('profiles');
    next = reported('profiles/carol.yaml');
    fs.writeFileSync(at('profiles/carol.yaml'), 'displayName: Carol 2\n');
    await next;
  });

  test('hidden folders (.git) are not watched; their own name is reported, not what is written in them', async () => {
    const { seen, reported, at } = watched('watch-hidden');
    fs.writeFileSync(at('.git/index'), 'x');
    fs.mkdirSync(at('.git/objects'));
    fs.writeFileSync(at('.git/objects/ab'), 'x');
    // A change after them: once it is reported, theirs would have been too.
    const next = reported('profiles/bob.yaml');
    fs.writeFileSync(at('profiles/bob.yaml'), 'displayName: Later\n');
    await next;
    expect(seen.filter((f) => f !== null && f.startsWith(`.git${path.sep}`))).toEqual([]);
  });
});
