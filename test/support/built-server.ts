// Builds a content folder with the real build script and starts the real server on a free port:
// what `npm run build` and `npm run serve` do, in a temp folder inside the project (so the server
// bundle resolves its packages from node_modules).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.ts';

export const TEST_SITE_URL = 'https://profiles.example.net';
/** 2026-01-15T12:00:00Z, so ages in answers are exact. */
export const BUILD_EPOCH = 1768478400;

export interface BuiltServer {
  base: string;
  dist: string;
  work: string;
  build(contentDir: string): ReturnType<typeof spawnSync>;
  stop(): void;
}

export async function buildAndServe(contentDir: string, { name = 'run', siteUrl = TEST_SITE_URL } = {}): Promise<BuiltServer> {
  const work = path.join(ROOT, 'node_modules', '.cache', 'profile-tests', `${name}-${process.pid}`);
  const dist = path.join(work, 'dist');
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  const build = (dir: string) => spawnSync(process.execPath, ['scripts/build-site.ts'], {
    cwd: ROOT, encoding: 'utf8',
    env: { ...process.env, CONTENT_DIR: dir, SITE_URL: siteUrl, DIST_DIR: dist, SOURCE_DATE_EPOCH: String(BUILD_EPOCH) },
  });
  const b = build(contentDir);
  if (b.status !== 0) throw new Error(`build failed: ${b.stderr}${b.stdout}`);
  const server = spawn(process.execPath, ['src/server/main.ts'], { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DIST_DIR: dist } });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    server.stderr!.on('data', (d) => { out += d; });
    server.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return {
    base, dist, work, build,
    stop() {
      server.kill();
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
}
