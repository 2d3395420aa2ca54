import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // One build of test/fixtures/content and one server for the whole run.
    globalSetup: ['test/support/global-setup.ts'],
    // The slow tests mostly wait on other processes (builds, servers, scripts, chromium), so two
    // files at once pay off even on two cores, where vitest's default (cores - 1) runs one.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
  },
});
