// Once per test run (vitest.config.ts globalSetup): builds test/fixtures/content with the real
// build script and starts the real server on it, for every test file to read (built-server.ts
// sharedBuild). Both are gone when the run ends.
import fs from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { serve } from '../../scripts/support/serve-build.ts';
import { buildFixture, workDir } from './built-server.ts';
import { FIXTURE } from './helpers.ts';
import { WORK_ENV, makeRunScratch, runScratch } from './scratch.ts';
import { processRuns } from '../../src/release/lock.ts';

export default async function setup(project: TestProject) {
  // As vitest.config.ts sets for the test files: the shared build starts Node with the compile cache too.
  process.env.NODE_COMPILE_CACHE ??= path.resolve('node_modules/.cache/node-compile-cache');
  // The run's own folder on the RAM disk (vitest.config.ts gives the test files its name).
  const scratch = runScratch();
  if (scratch) {
    makeRunScratch(scratch, processRuns);
    process.env[WORK_ENV] = scratch.work;
  }
  const work = workDir('shared');
  const dist = path.join(work, 'dist');
  fs.rmSync(work, { recursive: true, force: true });
  const build = buildFixture(FIXTURE, dist);
  if (build.status !== 0) throw new Error(`the build of ${FIXTURE} failed:\n${build.stderr}${build.stdout}`);
  const server = await serve({ env: { DIST_DIR: dist } });
  project.provide('sharedBuild', { dist, base: server.base });
  return async () => {
    await server.stop();
    fs.rmSync(work, { recursive: true, force: true });
    if (scratch) fs.rmSync(scratch.dir, { recursive: true, force: true });
  };
}
