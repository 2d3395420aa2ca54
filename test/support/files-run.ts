// A setup file (vitest.config.ts): counts the test files this worker process has run, this one
// included. Workers run file after file (`isolate: false`); operation-count.ts needs to be in the first.
const FILES_RUN = Symbol.for('profile-lookup.test-files-run');

const counts = globalThis as Record<symbol, number>;
counts[FILES_RUN] = (counts[FILES_RUN] ?? 0) + 1;

/** Test files this process has run, the one running included. */
export const filesRun = (): number => counts[FILES_RUN] ?? 1;
