// package.json's scripts preload scripts/support/compile-cache.mjs, so Node keeps the compiled code of
// every module in node_modules/.cache/node-compile-cache and the next process starts without
// compiling it again; the processes they start inherit it through the environment.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../support/helpers.ts';

const PRELOAD = './scripts/support/compile-cache.mjs';
const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** What a process started with the preload reports: its compile cache folder and what it gives its children. */
function withPreload(env: Record<string, string | undefined>) {
  const { NODE_COMPILE_CACHE: _, NODE_DISABLE_COMPILE_CACHE: __, ...rest } = process.env;
  const r = spawnSync(process.execPath, ['--import', PRELOAD, '-e', 'console.log(JSON.stringify({ dir: require("node:module").getCompileCacheDir() ?? null, inherited: process.env.NODE_COMPILE_CACHE ?? null }))'], {
    cwd: ROOT, encoding: 'utf8', env: { ...rest, ...env },
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { dir: string | null; inherited: string | null };
}

describe('the compile cache', () => {
  test('the builds, the server, npm start and the content CLIs preload it', () => {
    for (const name of ['build', 'serve', 'start', 'check', 'rollback', 'new:profile', 'views:import', 'schemas']) {
      expect(scripts[name]!.split(/\s+/).slice(0, 3), name).toEqual(['node', '--import', PRELOAD]);
    }
  });

  test('kept in node_modules/.cache, given to the processes it starts; the environment may move it or turn it off', () => {
    // Node keeps each version's code in a folder of its own inside it.
    const own = path.join(ROOT, 'node_modules', '.cache', 'node-compile-cache');
    const ours = withPreload({});
    expect(ours.inherited).toBe(own);
    expect(ours.dir?.startsWith(own + path.sep), ours.dir ?? 'none').toBe(true);
    const elsewhere = path.join(ROOT, 'node_modules', '.cache', 'compile-cache-elsewhere');
    expect(withPreload({ NODE_COMPILE_CACHE: elsewhere }).dir?.startsWith(elsewhere + path.sep)).toBe(true);
    fs.rmSync(elsewhere, { recursive: true, force: true });
    expect(withPreload({ NODE_DISABLE_COMPILE_CACHE: '1' }).dir).toBeNull();
  });

  test('the preload itself is JavaScript: a process started with it and no cache loads no TypeScript stripper', () => {
    const { NODE_COMPILE_CACHE: _, ...env } = process.env;
    // process.moduleLoadList: the internal modules Node loaded, its stripper (amaro) among them once a .ts file is read.
    const r = spawnSync(process.execPath, ['--import', PRELOAD, '-e', 'console.log(JSON.stringify(process.moduleLoadList))'], { cwd: ROOT, encoding: 'utf8', env });
    expect(r.status, r.stderr).toBe(0);
    const loaded = JSON.parse(r.stdout) as string[];
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((m) => m.includes('amaro'))).toEqual([]);
    // The same for a TypeScript preload: the stripper loads, as it did for this one when it was a .ts file.
    const preload = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'preload-')), 'preload.ts');
    fs.writeFileSync(preload, 'const on: boolean = true;\nexport default on;\n');
    const typescript = spawnSync(process.execPath, ['--import', preload, '-e', 'console.log(JSON.stringify(process.moduleLoadList))'], { cwd: ROOT, encoding: 'utf8', env });
    expect(typescript.status, typescript.stderr).toBe(0);
    fs.rmSync(path.dirname(preload), { recursive: true, force: true });
    expect((JSON.parse(typescript.stdout) as string[]).some((m) => m.includes('amaro'))).toBe(true);
  });
});
