// `npm run dev` (astro dev) on the test content serves what the built site serves: the same API
// answer, and the same profile page but for where its images come from (the API routes, since
// there is no media folder), which are the same bytes.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BUILD_EPOCH, TEST_SITE_URL, sharedBuild } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

const outsideVitest = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_ENV'));

let dev: ChildProcess;
let base: string;

beforeAll(async () => {
  expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.dev).toBe('astro dev');
  dev = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'astro', 'bin', 'astro.mjs'), 'dev', '--host', '127.0.0.1', '--port', '0'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    // Without vitest's variables: Astro's dev server serves no route when it sees VITEST.
    env: { ...outsideVitest(), CONTENT_DIR: FIXTURE, SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(BUILD_EPOCH), DEPLOY_TARGET: 'node', ASTRO_TELEMETRY_DISABLED: '1' },
  });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const read = (d: Buffer) => {
      out += stripVTControlCharacters(d.toString());
      const local = /Local\s+(http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (local) resolve(local[1]);
    };
    dev.stdout!.on('data', read);
    dev.stderr!.on('data', read);
    dev.once('exit', (code) => reject(new Error(`astro dev exited (${code}) before listening:\n${out}`)));
  });
}, 60_000);

afterAll(async () => {
  if (!dev || dev.exitCode !== null) return;
  dev.kill('SIGTERM');
  await once(dev, 'exit');
});

/** The page's `<main>`, with each image address replaced by a mark, and those addresses. */
function mainOf(html: string): { main: string; images: string[] } {
  const main = /<main[\s\S]*<\/main>/.exec(html)?.[0] ?? '';
  const images: string[] = [];
  return { main: main.replace(/ src="([^"]+)"/g, (_, src: string) => { images.push(src.replaceAll('&amp;', '&')); return ' src="(image)"'; }), images };
}

describe('astro dev on the test content', () => {
  test('answers /api/v1/users/alice as the built site does', async () => {
    const [fromDev, built] = await Promise.all([fetch(`${base}/api/v1/users/alice`), fetch(`${sharedBuild().base}/api/v1/users/alice`)]);
    expect(fromDev.status).toBe(200);
    expect(fromDev.headers.get('content-type')).toBe(built.headers.get('content-type'));
    expect(await fromDev.json()).toEqual(await built.json());
  }, 60_000);

  test('serves /p/alice as the built site does, its images from the API routes with the same bytes', async () => {
    const [fromDev, built] = await Promise.all([fetch(`${base}/p/alice`), fetch(`${sharedBuild().base}/p/alice`)]);
    expect(fromDev.status).toBe(200);
    expect(fromDev.headers.get('content-type')).toMatch(/^text\/html/);
    const d = mainOf(await fromDev.text());
    const b = mainOf(await built.text());
    expect(d.main).toContain('Alice Liddell');
    expect(d.main).toBe(b.main);
    // Alice has an avatar and a decoration: two images, each the same file on both.
    expect(d.images).toHaveLength(2);
    expect(b.images).toHaveLength(2);
    for (const [i, src] of d.images.entries()) {
      const [a, c] = await Promise.all([fetch(new URL(src, base)), fetch(new URL(b.images[i], sharedBuild().base))]);
      expect([a.status, a.headers.get('content-type')]).toEqual([200, 'image/png']);
      expect(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(await c.arrayBuffer()))).toBe(true);
    }
  }, 60_000);
});
