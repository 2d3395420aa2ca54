// `astro preview` under the node adapter's middleware mode serves only Astro's on-demand routes (a
// 404 for every page), so for the node and static targets it stops and names what serves a build.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { FIXTURE, ROOT } from '../support/helpers.ts';

const astroPreview = (target: string) => spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'astro', 'bin', 'astro.mjs'), 'preview', '--host', '127.0.0.1', '--port', '0'], {
  cwd: ROOT, encoding: 'utf8', env: { ...process.env, CONTENT_DIR: FIXTURE, DEPLOY_TARGET: target, ASTRO_TELEMETRY_DISABLED: '1' },
});

describe('astro preview', () => {
  test('for the node target, stops at once with one sentence naming npm run serve', () => {
    const r = astroPreview('node');
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toMatchInlineSnapshot(`"Preview a build with \`npm run serve\` (after \`npm run build\`): \`astro preview\` would serve only Astro's on-demand routes, not the pages, API answers and headers of our server."`);
    expect(r.stdout).not.toMatch(/listening/i);
  }, 60_000);

  test('for the static target, stops at once with one sentence naming the nginx preview', () => {
    const r = astroPreview('static');
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toMatchInlineSnapshot(`"Preview a static build with \`npm run preview:nginx -- --recipe static\`: \`astro preview\` would serve only Astro's on-demand routes, not the files a static host serves."`);
    expect(r.stdout).not.toMatch(/listening/i);
  }, 60_000);
});
