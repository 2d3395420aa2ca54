import os from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { WORK_ENV, runScratch } from './test/support/scratch.ts';

// The run's folders on the RAM disk, named by this (the main) process, which global-setup.ts makes.
const scratch = runScratch();

/**
 * Test files that count V8's operations (test/support/operation-count.ts): each needs a process of
 * its own, where the counters start before the code they count is compiled, and stop with it.
 */
const OWN_PROCESS = ['test/content/scaling.test.ts', 'test/content/yaml-file.test.ts'];

export default defineConfig({
  test: {
    // Most tests take milliseconds; those that build or start servers take seconds, more on a busy
    // machine (two files at once on two cores). Here rather than on `npm test`'s command line, so
    // that `npx vitest run <file>` gives a test the same time.
    testTimeout: 30_000,
    // One build of test/fixtures/content and one server for the whole run.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/files-run.ts', 'test/support/equality.ts'],
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
    // Every other file runs in a worker process that ran files before it (isolate: false): a fresh
    // process per file, importing vitest and our modules again, was 40 of the suite's 284 s of CPU
    // (146 s against 135 s of wall time on 2 cores). Files leave no state behind: they run their
    // builds and servers in processes of their own, and restore what they set (process.env).
    projects: [
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS } },
      { extends: true, test: { name: 'shared', exclude: [...configDefaults.exclude, ...OWN_PROCESS], isolate: false } },
    ],
  },
});
