// `npm run dev` (astro dev) on the test content serves what the built site serves: the same API
// answer, and the same profile page but for where its images come from (the API routes, since
// there is no media folder), which are the same bytes. Its file watcher watches the code, not the
// content folder or a build's output (src/build/astro/dev-watch.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BUILD_EPOCH, TEST_SITE_URL, sharedBuild } from '../support/built-server.ts';
import { FIXTURE, ROOT, copyFixture } from '../support/helpers.ts';

const outsideVitest = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_ENV'));

let dev: ChildProcess;
let base: string;
/** A folder named as a build names its releases (`DIST_DIR=dist-…`), in the project while the dev server runs. */
const OUTPUT = path.join(ROOT, `dist-astro-dev-test-${process.pid}.releases`);

/** `astro dev` on `content`, and the address it listens on. */
async function startDev(content: string, env: NodeJS.ProcessEnv = {}): Promise<{ dev: ChildProcess; base: string }> {
  const dev = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'astro', 'bin', 'astro.mjs'), 'dev', '--host', '127.0.0.1', '--port', '0'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    // Without vitest's variables: Astro's dev server serves no route when it sees VITEST.
    env: { ...outsideVitest(), CONTENT_DIR: content, SITE_URL: TEST_SITE_URL, SOURCE_DATE_EPOCH: String(BUILD_EPOCH), DEPLOY_TARGET: 'node', ASTRO_TELEMETRY_DISABLED: '1', ...env },
  });
  const base = await new Promise<string>((resolve, reject) => {
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
  return { dev, base };
}

async function stopDev(dev: ChildProcess | undefined): Promise<void> {
  if (!dev || dev.exitCode !== null) return;
  dev.kill('SIGTERM');
  await once(dev, 'exit');
}

/** The inodes `pid` holds inotify watches on (Linux: /proc/<pid>/fdinfo of its inotify descriptors). */
function watchedInodes(pid: number): Set<number> {
  const inodes = new Set<number>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let info: string;
    try {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue;
      info = fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
    } catch {
      continue; // closed meanwhile
    }
    for (const m of info.matchAll(/^inotify wd:\S+ ino:([0-9a-f]+) /gm)) inodes.add(Number.parseInt(m[1]!, 16));
  }
  return inodes;
}

/** The inodes of `dir` and of every file and folder below it. */
function inodesUnder(dir: string): Map<number, string> {
  const out = new Map<number, string>([[fs.statSync(dir).ino, dir]]);
  for (const entry of fs.readdirSync(dir, { recursive: true })) {
    const p = path.join(dir, String(entry));
    out.set(fs.statSync(p).ino, p);
  }
  return out;
}

/** The page's `<main>`, with each image address replaced by a mark, and those addresses. */
function mainOf(html: string): { main: string; images: string[] } {
  const main = /<main[\s\S]*<\/main>/.exec(html)?.[0] ?? '';
  const images: string[] = [];
  return { main: main.replace(/ src="([^"]+)"/g, (_, src: string) => { images.push(src.replaceAll('&amp;', '&')); return ' src="(image)"'; }), images };
}

describe('astro dev on the test content', () => {
  // Astro runs one dev server per project at a time: each describe starts its own and stops it.
  beforeAll(async () => {
    fs.mkdirSync(path.join(OUTPUT, '000001', 'client', 'p'), { recursive: true });
    for (const name of ['alice', 'bob']) fs.writeFileSync(path.join(OUTPUT, '000001', 'client', 'p', `${name}.html`), `<p>${name}</p>`);
    expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.dev).toBe('astro dev');
    ({ dev, base } = await startDev(FIXTURE));
  }, 60_000);

  afterAll(async () => {
    fs.rmSync(OUTPUT, { recursive: true, force: true });
    await stopDev(dev);
  });

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

  // Vite's watcher holds a watch per file: a 100,000-profile content folder or release in the
  // project took 100,000 or more of the machine's watches, and 10-28 s before the server listened.
  test.skipIf(process.platform !== 'linux')('watches the pages and the content folder\'s folders, not its files or a build\'s releases', async () => {
    const page = fs.statSync(path.join(ROOT, 'src', 'pages', 'p', '[username].astro')).ino;
    // The watcher is set up beside the server's start: until it holds the page's watch.
    let watched = watchedInodes(dev.pid!);
    for (const deadline = Date.now() + 20_000; !watched.has(page) && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      watched = watchedInodes(dev.pid!);
    }
    expect(watched.has(page)).toBe(true);
    // The content folder's folders are watched once each, as `npm start` watches them (src/build/watch-tree.ts): none of its files.
    const files = [...inodesUnder(FIXTURE)].filter(([, p]) => fs.statSync(p).isFile());
    const unwanted = [...files, ...inodesUnder(OUTPUT)].filter(([ino]) => watched.has(ino)).map(([, p]) => path.relative(ROOT, p));
    expect(unwanted).toEqual([]);
    expect(watched.has(fs.statSync(path.join(FIXTURE, 'profiles')).ino)).toBe(true);
  }, 60_000);
});

// The default sends Astro's `astro:content-changed` (its route cache holds each page's props); its
// fallback restarts the dev server (src/build/astro/dev-watch.ts).
describe.each([['default', ''], ['fallback', 'content-changed']])('astro dev on a content folder being edited (%s)', (_, fallback) => {
  let edited: { dev: ChildProcess; base: string } | undefined;
  let parent: string;
  let content: string;
  beforeAll(async () => {
    ({ parent, content } = copyFixture('astro-dev-edits'));
    edited = await startDev(content, { ASTRO_FALLBACK: fallback });
  }, 60_000);
  afterAll(async () => {
    await stopDev(edited?.dev);
    fs.rmSync(parent, { recursive: true, force: true });
  });

  /** What `fetch` of `address` gives once `done` holds for it, or the last answer after 20 s. */
  async function until(address: string, done: (text: string) => boolean): Promise<string> {
    let text = '';
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      // A restarting server refuses a connection for a moment.
      text = await fetch(new URL(address, edited!.base)).then((r) => r.text(), () => '');
      if (done(text)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return text;
  }

  // The dev server read the content once: an edit showed only after a restart.
  test('shows an edited profile and a new one without a restart, in the API and on the page', async () => {
    // Both rendered before the edit: what the server keeps of them must not outlive it.
    expect((await (await fetch(`${edited!.base}/api/v1/users/alice`)).json()).data.displayName).toContain('Alice Liddell');
    expect(await (await fetch(`${edited!.base}/p/alice`)).text()).toContain('<title>Alice Liddell');
    const file = path.join(content, 'profiles', 'alice.yaml');
    // As an editor saves: a new file renamed over the old one.
    fs.writeFileSync(`${file}.tmp`, fs.readFileSync(file, 'utf8').replace(/^displayName: .*$/m, 'displayName: "Alice, edited"'));
    fs.renameSync(`${file}.tmp`, file);
    const answer = await until('/api/v1/users/alice', (t) => t.includes('Alice, edited'));
    expect(JSON.parse(answer).data.displayName).toBe('Alice, edited');
    expect(await until('/p/alice', (t) => t.includes('<title>Alice, edited (@alice)'))).toContain('<title>Alice, edited (@alice)');
    fs.writeFileSync(path.join(content, 'profiles', 'zed.yaml'), 'displayName: Zed\ncreatedAt: 2026-01-02T00:00:00Z\n');
    expect(JSON.parse(await until('/api/v1/users/zed', (t) => t.includes('"success":true'))).data).toMatchObject({ username: 'zed', displayName: 'Zed' });
    expect(await until('/p/zed', (t) => t.includes('<title>Zed (@zed)'))).toContain('<title>Zed (@zed)');
  }, 60_000);
});
