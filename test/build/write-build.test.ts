// What the build copies into a release: content images, read as content is (no links, limits,
// signatures), even when the folder changed after it was checked.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { TREE_ENTRIES_IN_THIS_THREAD, atMostEntries, removeTrees, writeApiFiles } from '../../src/build/files/write-build.ts';
import { AnswerTimes } from '../../src/build/reuse/answer-times.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { FIXTURE, copyFixture, fixtureSite } from '../support/helpers.ts';
import { workDir } from '../support/built-server.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

/** A checked copy of the fixture, then `change` applied to it, then the build's copying step. */
function publish(change: (content: string, parent: string) => void) {
  const { parent, content } = copyFixture('write-build');
  made.push(parent);
  const { index } = fixtureSite(content);
  change(content, parent);
  const out = path.join(parent, 'out');
  const users = path.join(parent, 'users');
  fs.mkdirSync(users);
  return { out, write: () => writeApiFiles(out, index, users, content, new AnswerTimes(index.builtAt)) };
}

describe('copying images into the build', () => {
  test('the checked images are copied byte for byte', () => {
    const { out, write } = publish(() => {});
    expect(write().mediaFiles).toBe(2);
    expect(fs.readFileSync(path.join(buildLayout(out).media.avatars, 'alice.png'))).toEqual(fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png')));
  });

  test('an image replaced by a link after the check is refused, and its target never copied', () => {
    const { out, write } = publish((content, parent) => {
      fs.writeFileSync(path.join(parent, 'secret'), 'TOKEN=hunter2');
      fs.rmSync(path.join(content, 'avatars', 'alice.png'));
      fs.symlinkSync(path.join(parent, 'secret'), path.join(content, 'avatars', 'alice.png'));
    });
    expect(() => write()).toThrow(/^refused to publish .*avatars\/alice\.png: is a symbolic link: links in the content folder are never followed/);
    expect(fs.existsSync(path.join(buildLayout(out).media.avatars, 'alice.png'))).toBe(false);
  });

  test('an image replaced by SVG after the check is refused', () => {
    const { write } = publish((content) => fs.writeFileSync(path.join(content, 'decorations', 'sakura.png'), '<svg onload="alert(1)"/>'));
    expect(() => write()).toThrow(/decorations\/sakura\.png: is not a PNG image: its bytes are markup/);
  });
});

describe('removing old releases (removeTrees)', () => {
  /** `files` files in `dir`, half of them one folder down. */
  function tree(dir: string, files: number) {
    fs.mkdirSync(path.join(dir, 'p'), { recursive: true });
    for (let i = 0; i < files; i++) fs.writeFileSync(path.join(dir, i % 2 ? 'p' : '', `${i}.html`), 'x');
    return dir;
  }

  test('entries are counted through every level, up to the limit and no further', () => {
    const work = workDir('remove-trees-count');
    made.push(work);
    // 10 files and the folder p: 11 entries; a folder that is not there holds none.
    const dirs = [tree(path.join(work, 'a'), 10), path.join(work, 'absent')];
    expect(atMostEntries(dirs, 11)).toBe(true);
    expect(atMostEntries(dirs, 10)).toBe(false);
    expect(atMostEntries([tree(path.join(work, 'b'), 6), ...dirs], 18)).toBe(true);
    expect(atMostEntries([path.join(work, 'b'), ...dirs], 17)).toBe(false);
  });

  test('small trees and large ones (in a thread) are removed, and absent ones ignored', async () => {
    const work = workDir('remove-trees');
    made.push(work);
    const small = tree(path.join(work, 'small'), 20);
    const large = tree(path.join(work, 'large'), TREE_ENTRIES_IN_THIS_THREAD + 1);
    expect(atMostEntries([large], TREE_ENTRIES_IN_THIS_THREAD)).toBe(false);
    await removeTrees([small, path.join(work, 'absent')]);
    expect(fs.existsSync(small)).toBe(false);
    await removeTrees([large]);
    expect(fs.readdirSync(work)).toEqual([]);
  });
});
