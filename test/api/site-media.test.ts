// The media the on-demand image routes read (from the content folder under `astro dev`, from the
// build's copies when served): never through a link, only regular files, only real images.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { MEDIA_CACHE_BYTES } from '../../src/api/site.ts';
import { MAX_IMAGE_BYTES } from '../../src/schemas/limits.ts';
import { FIXTURE, copyFixture, fixtureSite } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

function siteWithAvatar(make: (file: string, parent: string) => void) {
  const { parent, content } = copyFixture('site-media');
  made.push(parent);
  const { site } = fixtureSite(content);
  const file = path.join(content, 'avatars', 'alice.png');
  fs.rmSync(file);
  make(file, parent);
  return site;
}

describe('media files', () => {
  test('a real image is read', async () => {
    const { site } = fixtureSite(FIXTURE);
    expect((await site.media('avatars', 'alice.png'))?.type).toBe('image/png');
  });

  test('a link, a FIFO, markup or an image over the limit is not served', async () => {
    const png = fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png'));
    const cases = {
      link: siteWithAvatar((file, parent) => { fs.writeFileSync(path.join(parent, 'secret'), 'x'); fs.symlinkSync(path.join(parent, 'secret'), file); }),
      fifo: siteWithAvatar((file) => { spawnSync('mkfifo', [file]); }),
      svg: siteWithAvatar((file) => fs.writeFileSync(file, '<svg xmlns="http://www.w3.org/2000/svg"/>')),
      big: siteWithAvatar((file) => fs.writeFileSync(file, Buffer.concat([png, Buffer.alloc(MAX_IMAGE_BYTES)]))),
    };
    const served: Record<string, boolean> = {};
    for (const [name, site] of Object.entries(cases)) served[name] = (await site.media('avatars', 'alice.png')) !== undefined;
    expect(served).toEqual({ link: false, fifo: false, svg: false, big: false });
  });

  test('image bytes held in memory stay within MEDIA_CACHE_BYTES, however many images are asked for', async () => {
    const { parent, content } = copyFixture('site-media');
    made.push(parent);
    const png = fs.readFileSync(path.join(FIXTURE, 'avatars', 'alice.png'));
    const image = Buffer.concat([png, Buffer.alloc(MAX_IMAGE_BYTES - png.length)]);
    const count = Math.ceil((2 * MEDIA_CACHE_BYTES) / image.length);
    for (let i = 0; i < count; i++) fs.writeFileSync(path.join(content, 'avatars', `big-${i}.png`), image);
    const { site } = fixtureSite(content);
    for (let i = 0; i < count; i++) {
      expect((await site.media('avatars', `big-${i}.png`))?.bytes.byteLength, `big-${i}.png`).toBe(image.length);
      expect(site.mediaCacheBytes).toBeLessThanOrEqual(MEDIA_CACHE_BYTES);
    }
    expect(site.mediaCacheBytes).toBeGreaterThan(MEDIA_CACHE_BYTES - 2 * image.length);
  });
});
