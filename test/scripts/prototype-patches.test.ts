// The prototypes docs/design.md measured (scripts/bench/prototypes/*.patch, applied by
// scripts/bench/astro-mechanisms.ts) still apply to the committed code, so their measurements stay
// reproducible: checked against HEAD's tree in a throwaway index, whatever the working tree holds.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { workDir } from '../support/built-server.ts';
import { ROOT } from '../support/helpers.ts';

const PATCHES = path.join(ROOT, 'scripts/bench/prototypes');
const patches = fs.readdirSync(PATCHES).filter((f) => f.endsWith('.patch')).sort();
const WORK = workDir('prototype-patches');
const INDEX = path.join(WORK, 'index');
afterAll(() => fs.rmSync(WORK, { recursive: true, force: true }));

const git = (args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, GIT_INDEX_FILE: INDEX } });
const inGit = spawnSync('git', ['rev-parse', '--verify', 'HEAD'], { cwd: ROOT }).status === 0;
if (!inGit) console.warn('prototype-patches.test.ts: skipped, this checkout has no git history to apply the patches to');

describe.skipIf(!inGit)('scripts/bench/prototypes', () => {
  test('holds the endpoint prototype', () => {
    expect(patches).toContain('endpoint.patch');
  });

  test.each(patches)('%s applies to HEAD and changes only source files', (patch) => {
    fs.mkdirSync(WORK, { recursive: true });
    expect(git(['read-tree', 'HEAD']).status).toBe(0);
    const check = git(['apply', '--check', '--cached', path.join(PATCHES, patch)]);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
    // No new dependency, lock file or content: the script installs nothing and builds the same content.
    const files = git(['apply', '--numstat', path.join(PATCHES, patch)]).stdout.trim().split('\n').map((l) => l.split('\t')[2]);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => !f!.startsWith('src/'))).toEqual([]);
  });
});
