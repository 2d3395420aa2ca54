// What the build copies into a release: content images, read as content is (no links, limits,
// signatures), even when the folder changed after it was checked.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { writeApiFiles } from '../../src/build/files/write-build.ts';
import { AnswerTimes } from '../../src/build/reuse/answer-times.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { FIXTURE, copyFixture, fixtureSite } from '../support/helpers.ts';

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
