// `npm run bundle:server`: the folder the Docker image runs (scripts/deploy/Dockerfile), run here the
// way the image runs it, since these machines cannot run `docker build`: the bundle, the release and
// a copy of the node binary in a temporary folder with no node_modules reachable, started with the
// Dockerfile's own CMD, probed with its own HEALTHCHECK, and compared answer by answer with the
// server running from src/.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SERVE_NODE_FLAGS } from '../../scripts/support/serve-build.ts';
import { RELEASE_INFO_FILE, type ReleaseInfo } from '../../src/release/releases.ts';
import { ownBuild, sharedBuild } from '../support/built-server.ts';
import { PRIVATE_MARKERS, ROOT } from '../support/helpers.ts';

const DOCKERFILE = fs.readFileSync(path.join(ROOT, 'scripts', 'deploy', 'Dockerfile'), 'utf8');

/** The runtime stage's instructions, continuation lines joined, comments dropped. */
function runtimeStage(): string[] {
  const lines = DOCKERFILE.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  const from = lines.findIndex((l) => /^FROM \S+ AS runtime$/i.test(l));
  expect(from, 'a stage named runtime').toBeGreaterThan(0);
  return lines.slice(from);
}
const execForm = (instruction: string, line: string) => JSON.parse(line.slice(line.indexOf(`${instruction} [`) + instruction.length + 1)) as string[];
const dockerCmd = () => execForm('CMD', runtimeStage().find((l) => l.startsWith('CMD '))!);
const healthCmd = () => execForm('CMD', runtimeStage().find((l) => l.startsWith('HEALTHCHECK '))!);

const bundle = (dist: string, out: string) => spawnSync(process.execPath, ['scripts/deploy/bundle-server.ts', '--out', out], {
  cwd: ROOT, encoding: 'utf8', env: { ...process.env, DIST_DIR: dist },
});

/** Every `node_modules` folder in `dir`, or beside any folder above it (where Node would look for a package). */
function reachableNodeModules(dir: string): string[] {
  const found = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => path.basename(f) === 'node_modules');
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'node_modules'))) found.push(path.join(d, 'node_modules'));
    if (path.dirname(d) === d) return found;
  }
}

function sizeOf(dir: string): number {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile()).reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0);
}

interface Runtime {
  /** The folder standing for the image's root: bin/node and app/. */
  root: string;
  app: string;
  bundleOut: string;
}

/** The image's files in a new temporary folder: `<root>/bin/node` and `<root>/app` (what the runtime stage copies). */
function makeRuntime(dist: string, made: string[]): Runtime {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-image-'));
  made.push(root);
  const app = path.join(root, 'app');
  const r = bundle(dist, app);
  expect(r.status, r.stderr + r.stdout).toBe(0);
  fs.mkdirSync(path.join(root, 'bin'));
  fs.copyFileSync(process.execPath, path.join(root, 'bin', 'node'));
  fs.chmodSync(path.join(root, 'bin', 'node'), 0o755);
  return { root, app, bundleOut: r.stdout };
}

interface Started { child: ChildProcess; base: string; port: string; output: () => string; exited: Promise<number | null> }

/** The Dockerfile's CMD in `app`, with the image's environment only (PATH to the copied node, DIST_DIR in `app`). */
function startImage({ root, app }: Runtime): Promise<Started> {
  const [command, ...args] = dockerCmd();
  const child = spawn(command!, args, {
    cwd: app, stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: path.join(root, 'bin'), NODE_ENV: 'production', HOST: '127.0.0.1', PORT: '0', DIST_DIR: path.join(app, 'dist') },
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, base: m[0], port: m[1]!, output: () => out, exited });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    exited.then((code) => reject(new Error(`the bundled server exited (${code}) before listening:\n${out}`)));
  });
}

/** The Dockerfile's HEALTHCHECK command, as Docker runs it inside the image: its exit code. */
const healthcheck = ({ root, app }: Runtime, port: string) => new Promise<number | null>((resolve) => {
  const [command, ...args] = healthCmd();
  spawn(command!, args, { cwd: app, stdio: 'ignore', env: { PATH: path.join(root, 'bin'), PORT: port } }).once('exit', resolve);
});

/**
 * What must be the same from both servers: status, headers, and the body with the per-request `meta`
 * fields blanked (so also without Date and Content-Length, which the time taken changes by a digit).
 */
async function answerOf(base: string, target: string, init: RequestInit = {}) {
  const res = await fetch(base + target, { redirect: 'manual', ...init });
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date' && name !== 'content-length'));
  const body = (await res.text()).replace(/"timestamp":"[^"]*"/g, '"timestamp":""').replace(/"executionTimeMs":[\d.]+/g, '"executionTimeMs":0');
  return { status: res.status, headers, body };
}

const made: string[] = [];
afterAll(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

describe('the Docker runtime folder (npm run bundle:server)', () => {
  let runtime: Runtime;
  let server: Started;
  beforeAll(async () => {
    runtime = makeRuntime(sharedBuild().dist, made);
    server = await startImage(runtime);
  }, 60_000);
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
  });

  test('holds the bundle and the release only: no node_modules anywhere Node would look, no sources, nothing private', () => {
    expect(fs.readdirSync(runtime.app).sort()).toEqual(['dist', 'server.mjs']);
    expect(fs.readdirSync(path.join(runtime.app, 'dist')).sort()).toEqual(['client', RELEASE_INFO_FILE]);
    expect(reachableNodeModules(runtime.root)).toEqual([]);
    const files = fs.readdirSync(runtime.app, { recursive: true, encoding: 'utf8' });
    expect(files.filter((f) => /\.(ts|ya?ml)$/.test(f))).toEqual([]);
    const code = fs.readFileSync(path.join(runtime.app, 'server.mjs'), 'utf8');
    // Every import of the bundle is one of Node's own modules.
    const specifiers = [...code.matchAll(/^\s*(?:import|export)\b[^'"]*?['"]([^'"]+)['"]/gm), ...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    expect(specifiers.length).toBeGreaterThan(3);
    expect(specifiers.filter((s) => !s.startsWith('node:'))).toEqual([]);
    for (const marker of PRIVATE_MARKERS) {
      for (const f of files) {
        const file = path.join(runtime.app, f);
        if (fs.statSync(file).isFile()) expect(fs.readFileSync(file, 'utf8').includes(marker), `${marker} in ${f}`).toBe(false);
      }
    }
  });

  test('is small: the bundle under 1.5 MB, against 367 MB of production node_modules before', () => {
    const bundleBytes = fs.statSync(path.join(runtime.app, 'server.mjs')).size;
    expect(bundleBytes).toBeLessThan(1.5e6);
    // The script says what it made, in the same figures.
    expect(runtime.bundleOut).toContain(`server.mjs: ${(bundleBytes / 1000).toFixed(0)} kB`);
    expect(runtime.bundleOut).toMatch(/\d+ modules of src\/ and \d+ of astro, zod,/);
    const distBytes = sizeOf(path.join(runtime.app, 'dist'));
    expect(runtime.bundleOut).toContain(`${(distBytes / 1e6).toFixed(1)} MB`);
  });

  test('starts with the Dockerfile CMD: npm run serve\'s node flags, on the bundle', () => {
    expect(dockerCmd()).toEqual(['node', ...SERVE_NODE_FLAGS, 'server.mjs']);
    expect(server.output()).toMatch(/^Serving the build of 2026-01-15T12:00:00\.000Z on http:\/\/127\.0\.0\.1:\d+$/m);
  });

  test('answers as the server running from src/ does: lookups, pages, redirects, errors', async () => {
    const source = sharedBuild().base;
    const requests: [string, RequestInit?][] = [
      ['/api/v1/users/alice'],
      ['/api/v1/users?username=ALICE'],
      ['/api/v1/users/nobody-here'],
      ['/api/v1/users?username='],
      ['/api/v1/users/alice', { method: 'POST' }],
      ['/api/v1/users/alice', { method: 'OPTIONS', headers: { Origin: 'https://x.example', 'Access-Control-Request-Method': 'GET' } }],
      ['/service-api/v1/creators?limit=2&sort=views'],
      ['/api/avatar?u=alice'],
      ['/p/alice'],
      ['/p/ALICE'],
      ['/'],
      ['/no/such/page'],
      ['/api/v1/users/alice', { headers: { 'If-None-Match': (await fetch(`${source}/api/v1/users/alice`)).headers.get('etag')! } }],
    ];
    for (const [target, init] of requests) {
      expect(await answerOf(server.base, target, init), `${init?.method ?? 'GET'} ${target}`).toEqual(await answerOf(source, target, init));
    }
    // And those answers are the right ones, not two equal failures.
    const lookup = await fetch(`${server.base}/api/v1/users/alice`);
    expect(lookup.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((await lookup.json()).data).toMatchObject({ username: 'alice', displayName: expect.stringContaining('Alice') });
    const page = await fetch(`${server.base}/p/alice`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('Alice Liddell');
    const missing = await fetch(`${server.base}/api/v1/users/nobody-here`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('USER_NOT_FOUND');
    const bad = await fetch(`${server.base}/api/v1/users?username=`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).success).toBe(false);
  });

  test('the Dockerfile HEALTHCHECK passes on a running server and fails on none', async () => {
    // A server of its own to stop: the other tests here ask the shared one, in any order.
    const own = await startImage(runtime);
    try {
      expect(await healthcheck(runtime, own.port)).toBe(0);
    } finally {
      own.child.kill('SIGTERM');
    }
    expect(await own.exited).toBe(0);
    expect(own.output()).toContain('Stopped: every request finished.');
    expect(await healthcheck(runtime, own.port)).toBe(1);
  });
});

describe('bundle:server on a layered release', () => {
  test('copies the files the release reads from its base, so the folder serves every profile', async () => {
    const own = await ownBuild('bundle-layered');
    try {
      const content = own.fixtureWith('content', {});
      const profile = path.join(content, 'profiles', 'bob.yaml');
      const yaml = fs.readFileSync(profile, 'utf8');
      fs.writeFileSync(profile, yaml.replace(/^displayName: .*$/m, 'displayName: Bob Rebuilt'));
      const r = own.rebuild(content);
      expect(r.status, r.stderr + r.stdout).toBe(0);
      const info = JSON.parse(fs.readFileSync(path.join(own.dist, RELEASE_INFO_FILE), 'utf8')) as ReleaseInfo;
      expect(info.layers, 'the rebuild wrote a layered release').toBeDefined();

      const runtime = makeRuntime(own.dist, made);
      expect(runtime.bundleOut).toContain('(layered: made whole)');
      const copied = JSON.parse(fs.readFileSync(path.join(runtime.app, 'dist', RELEASE_INFO_FILE), 'utf8')) as ReleaseInfo;
      expect(copied).toEqual({ id: info.id, previous: info.previous, builtAt: info.builtAt });
      const server = await startImage(runtime);
      try {
        for (const target of ['/p/bob', '/api/v1/users/bob', '/p/alice', '/api/v1/users/alice', '/api/avatar?u=alice']) {
          expect(await answerOf(server.base, target), target).toEqual(await answerOf(own.base, target));
        }
        expect(await (await fetch(`${server.base}/p/bob`)).text()).toContain('Bob Rebuilt');
        expect((await fetch(`${server.base}/p/alice`)).status).toBe(200);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    } finally {
      await own.stop();
    }
  }, 120_000);
});

describe('bundle:server refuses', () => {
  test('a folder it did not make, and a missing build', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bundle-refuse-'));
    made.push(dir);
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'mine');
    const r = bundle(sharedBuild().dist, dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('was not made by this script');
    expect(fs.readFileSync(path.join(dir, 'keep.txt'), 'utf8')).toBe('mine');
    const none = bundle(path.join(dir, 'no-dist'), path.join(dir, 'out'));
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/^bundle:server: no build in /);
  });
});
