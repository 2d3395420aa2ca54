// scripts/bench/measure-sizes.ts (docs/scale.md "A million profiles"): the figures it prints are
// what the folder holds, by group and kind, with a hard-linked file counted once on disk.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ROOT } from '../support/helpers.ts';

const SCRIPT = path.join(ROOT, 'scripts', 'bench', 'measure-sizes.ts');
let dir = '';

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'measure-sizes-'));
  const write = (rel: string, bytes: number) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), Buffer.alloc(bytes, 97));
  };
  write('client/p/alice.html', 5000);
  write('client/p/alice.html.br', 700);
  write('client/p/alice.html.gz', 900);
  write('client/api/v1/users/alice', 800);
  write('server/record.ndjson', 300);
  write('top.txt', 10);
  // A page reused from an earlier release is a hard link: its bytes are in the folder twice, on disk once.
  fs.mkdirSync(path.join(dir, 'older/p'), { recursive: true });
  fs.linkSync(path.join(dir, 'client/p/alice.html'), path.join(dir, 'older/p/alice.html'));
  fs.symlinkSync('client', path.join(dir, 'current'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Row { group: string; kind: string; files: number; bytes: number; blocks: number; inodes: number; directories: number; links: number }
function measure(...args: string[]): { total: Omit<Row, 'group' | 'kind'>; rows: Row[] } {
  const run = spawnSync(process.execPath, [SCRIPT, dir, '--json', ...args], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout);
}

test('groups by the longest prefix given, else the first folder; kinds by suffix', () => {
  const { rows } = measure('--group', 'client/p', '--group', 'client/api/v1/users', '--group', 'client');
  const files = (group: string, kind: string) => rows.find((r) => r.group === group && r.kind === kind)?.files;
  const bytes = (group: string, kind: string) => rows.find((r) => r.group === group && r.kind === kind)?.bytes;
  expect([files('client/p', 'plain'), files('client/p', '.br'), files('client/p', '.gz')]).toEqual([1, 1, 1]);
  expect([bytes('client/p', 'plain'), bytes('client/p', '.br'), bytes('client/p', '.gz')]).toEqual([5000, 700, 900]);
  expect(bytes('client/api/v1/users', 'plain')).toBe(800);
  expect(bytes('server', 'plain')).toBe(300);
  expect(bytes('.', 'plain')).toBe(10);
  expect(bytes('older', 'plain')).toBe(5000);
  expect(rows.find((r) => r.group === '.')?.links).toBe(1); // `current`, not followed
});

test('a hard-linked file counts its bytes at each name, its blocks and inode once', () => {
  const { total } = measure();
  expect(total.files).toBe(7);
  expect(total.bytes).toBe(5000 + 700 + 900 + 800 + 300 + 10 + 5000);
  expect(total.links).toBe(1);
  // Six distinct files, the symbolic link, and the folders: client, client/p, client/api, client/api/v1,
  // client/api/v1/users, server, older, older/p.
  expect(total.directories).toBe(8);
  expect(total.inodes).toBe(6 + 1 + 8);
  const du = spawnSync('du', ['-s', '-B1', dir], { encoding: 'utf8' });
  const rootBlocks = fs.statSync(dir).blocks * 512;
  expect(total.blocks + rootBlocks).toBe(Number(du.stdout.split('\t')[0]));
});

test('wrong usage is one line on stderr and exit code 2', () => {
  const run = spawnSync(process.execPath, [SCRIPT, path.join(dir, 'missing')], { encoding: 'utf8' });
  expect(run.status).toBe(2);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
});
