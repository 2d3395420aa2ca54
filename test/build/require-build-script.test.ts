// Only `npm run build` makes a build the server can start; `astro build` on its own says so and stops.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { FIXTURE, ROOT } from '../support/helpers.ts';
import { workDir } from '../support/built-server.ts';

const WORK = workDir('bare-build');
afterAll(() => fs.rmSync(WORK, { recursive: true, force: true }));

describe('astro build on its own', () => {
  test('stops at once with one sentence naming npm run build, and writes nothing', () => {
    const outDir = path.join(WORK, 'dist');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'astro', 'bin', 'astro.mjs'), 'build', '--outDir', outDir], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, CONTENT_DIR: FIXTURE, ASTRO_TELEMETRY_DISABLED: '1' },
    });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toMatchInlineSnapshot(`"Build with \`npm run build\`: \`astro build\` alone makes only the pages, not the API files and site index the server needs."`);
    expect(fs.existsSync(outDir)).toBe(false);
  });
});
