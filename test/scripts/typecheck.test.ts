// `npm run typecheck` covers `.astro` files: tsc alone reads none, so its `astro check` step is run,
// exactly as package.json writes it, on a small project with the repository's tsconfig and one
// deliberate type error in a page.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import { workDir } from '../support/built-server.ts';
import { ROOT } from '../support/helpers.ts';

const WORK = workDir('typecheck');
afterAll(() => fs.rmSync(WORK, { recursive: true, force: true }));

const typecheckScript: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.typecheck;
const steps = typecheckScript.split('&&').map((s) => s.trim());

describe('npm run typecheck', () => {
  test('runs tsc and astro check, each of which must pass', () => {
    expect(steps.some((s) => /^tsc\b/.test(s))).toBe(true);
    expect(steps.filter((s) => /\bastro check\b/.test(s))).toHaveLength(1);
  });

  test('fails on a type error in an .astro page, naming its file and line', () => {
    fs.rmSync(WORK, { recursive: true, force: true });
    fs.mkdirSync(path.join(WORK, 'src', 'pages'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(WORK, 'tsconfig.json'));
    fs.writeFileSync(path.join(WORK, 'astro.config.mjs'), "import { defineConfig } from 'astro/config';\nexport default defineConfig({});\n");
    fs.writeFileSync(path.join(WORK, 'src', 'pages', 'fine.astro'), '---\nconst count: number = 3;\n---\n<p>{count}</p>\n');
    fs.writeFileSync(path.join(WORK, 'src', 'pages', 'broken.astro'), '---\nconst count: number = "three";\n---\n<p>{count}</p>\n');
    const astroCheck = steps.find((s) => /\bastro check\b/.test(s))!;
    // As npm runs a script: through sh, the project's node_modules/.bin (and so its Node) first.
    const r = spawnSync('sh', ['-c', `${astroCheck} --root "$1"`, 'sh', WORK], {
      cwd: ROOT, encoding: 'utf8',
      env: { ...process.env, PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` },
    });
    const out = stripVTControlCharacters(r.stdout + r.stderr);
    expect(out).toMatch(/src\/pages\/broken\.astro:2:7 - error ts\(2322\): Type 'string' is not assignable to type 'number'\./);
    expect(out).not.toMatch(/fine\.astro/);
    expect(out).toMatch(/Result \(\d+ files\): \n- 1 error\n/);
    expect(r.status).toBe(1);
  }, 120_000);
});
