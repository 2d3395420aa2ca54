import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // One build of test/fixtures/content and one server for the whole run.
    globalSetup: ['test/support/global-setup.ts'],
  },
});
