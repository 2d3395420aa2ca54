// The test content built with the real build script and served by the real server. One build and
// one server are shared by the whole run (test/support/global-setup.ts): tests only read them. A
// test that changes a build (a rebuild, a swap, a file removed) takes a copy of its own.
import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { buildSite, serve, type RunningServer } from '../../scripts/support/serve-build.ts';
import { releasePath, servedRelease, switchRelease } from '../../src/release/releases.ts';
import { FIXTURE, ROOT } from './helpers.ts';
import { workRoot } from './scratch.ts';

export const TEST_SITE_URL = 'https://profiles.example.net';
/** 2026-01-15T12:00:00Z, so ages in answers are exact. */
export const BUILD_EPOCH = 1768478400;

/** A build of the test content into `distDir`, with the tests' SITE_URL and build time. */
export const buildFixture = (contentDir: string, distDir: string, env: Record<string, string> = {}) =>
  buildSite({ contentDir, distDir, siteUrl: TEST_SITE_URL, env: { SOURCE_DATE_EPOCH: String(BUILD_EPOCH), ...env } });

/** Where a test file keeps its own builds: below a folder whose node_modules is the project's, so the server bundle finds its packages (scratch.ts). */
export const workDir = (name: string) => path.join(workRoot(), `${name}-${process.pid}`);

export interface SharedBuild {
  /** The build folder of test/fixtures/content; never change it. */
  dist: string;
  /** The server serving it. */
  base: string;
}

declare module 'vitest' {
  interface ProvidedContext {
    sharedBuild: SharedBuild;
  }
}

/** The run's one build of test/fixtures/content and its server. */
export const sharedBuild = (): SharedBuild => inject('sharedBuild');

export interface OwnBuild {
  base: string;
  dist: string;
  /** The folder around `dist`, for content copies and what the build leaves beside it. */
  work: string;
  server: RunningServer;
  /** A copy of test/fixtures/content in `work/<name>`, with `files` (paths inside it) written over. */
  fixtureWith(name: string, files: Record<string, string>): string;
  /** Builds `contentDir` into this build's folder (the server notices and switches). */
  rebuild(contentDir: string): ReturnType<typeof buildFixture>;
  stop(): Promise<void>;
}

/** A copy of the shared build (the same files, no build needed) served by a server of its own, with `env` added to its environment. */
export async function ownBuild(name: string, env: Record<string, string> = {}): Promise<OwnBuild> {
  const work = workDir(name);
  const dist = path.join(work, 'dist');
  fs.rmSync(work, { recursive: true, force: true });
  // The shared build's served release, copied as this build's only release.
  const shared = sharedBuild().dist;
  const release = servedRelease(shared)!;
  fs.cpSync(releasePath(shared, release), releasePath(dist, release), { recursive: true });
  switchRelease(dist, release);
  const server = await serve({ env: { DIST_DIR: dist, ...env } });
  return {
    base: server.base, dist, work, server,
    fixtureWith(name, files) {
      const dir = path.join(work, name);
      fs.cpSync(FIXTURE, dir, { recursive: true });
      for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
      return dir;
    },
    rebuild: (contentDir) => buildFixture(contentDir, dist),
    async stop() {
      await server.stop();
      fs.rmSync(work, { recursive: true, force: true });
    },
  };
}
