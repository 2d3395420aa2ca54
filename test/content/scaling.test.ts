// Validation of a whole content folder grows with the folder, not with its square: twice the
// profiles (and twice the lines of stats/views.yaml, the creators, the custom domains) is about
// twice the work, counted in operations, never timed.
// First: it starts V8's counters before the code it measures is compiled.
import { countOperations } from '../support/operation-count.ts';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { loadContent } from '../../src/content/load.ts';
import { buildSiteIndex, columnsOf } from '../../src/model/site-index.ts';
import { lookupFiles } from '../../src/api/release-files.ts';
import { ROOT } from '../support/helpers.ts';

const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'scaling-'));
afterAll(() => fs.rmSync(parent, { recursive: true, force: true }));

/** The benchmark's generator: views for 80% of profiles, creators, domains, suspensions. */
function generated(count: number): string {
  const dir = path.join(parent, String(count));
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'bench', 'generate-profiles.ts'), String(count), dir], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return dir;
}

describe('validating and indexing a content folder', () => {
  test('2x the profiles is under 2.5x the operations', () => {
    const work = (dir: string) => countOperations(() => {
      const { content, problems } = loadContent(dir);
      expect(problems).toEqual([]);
      const index = buildSiteIndex(content, { siteUrl: 'https://profiles.example.net', builtAt: new Date('2026-01-15T12:00:00Z') });
      expect(lookupFiles(columnsOf(index)).size).toBeGreaterThan(0);
    });
    const [small, large] = [generated(300), generated(600)];
    work(small); // compiled, and counted from here on
    const ratio = work(large) / work(small);
    // Linear is 2x (measured 2.05x); each entry checked against every earlier one would be 4x.
    expect(ratio).toBeGreaterThan(1.5);
    expect(ratio).toBeLessThan(2.5);
  }, 120_000);
});
