import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { WORK_ENV, runScratch } from './test/support/scratch.ts';

// The run's folders on the RAM disk, named by this (the main) process, which global-setup.ts makes.
const scratch = runScratch();

export default defineConfig({
  test: {
    // One build of test/fixtures/content and one server for the whole run.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/equality.ts'],
    // The slow tests mostly wait on other processes (builds, servers, scripts, chromium), so two
    // files at once pay off even on two cores, where vitest's default (cores - 1) runs one. Three
    // gained nothing (146 s against 145 s on 2 cores).
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // Most of the suite's time is Node processes starting (builds, servers, CLIs), each compiling
    // the same TypeScript again: Node's compile cache keeps the compiled code for every one of them.
    env: {
      NODE_COMPILE_CACHE: path.resolve('node_modules/.cache/node-compile-cache'),
      ...(scratch && { [WORK_ENV]: scratch.work, TMPDIR: scratch.tmp }),
    },
  },
});
