// A lock between the test files of one run, for what the project keeps in one place for every build
// and that two files at once would move under each other: `.wrangler/deploy/config.json`, which
// every Cloudflare build points at its own release (src/build/astro/wrangler-deploy-config.ts).
import fs from 'node:fs';
import path from 'node:path';
import { processRuns } from '../../src/release/lock.ts';
import { workRoot } from './scratch.ts';

/** The project's `wrangler deploy` redirect: held while a file builds for Cloudflare, or checks where it points. */
export const WRANGLER_REDIRECT_LOCK = 'wrangler-redirect';

/**
 * Runs `fn` while no other test file of this run holds `name`, waiting for one that does. A lock
 * left by a process that is gone (a worker killed mid-test) is taken over.
 */
export function exclusively<T>(name: string, fn: () => T): T {
  fs.mkdirSync(workRoot(), { recursive: true });
  const lock = path.join(workRoot(), `${name}.lock`);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // Empty for the instant between its creation and its pid: held.
      const holder = Number(fs.readFileSync(lock, 'utf8'));
      if (holder && !processRuns(holder)) fs.rmSync(lock, { force: true });
      else Atomics.wait(pause, 0, 0, 50);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}
