// Every CLI in package.json (src/cli.ts): `--help` prints the usage and does nothing
// else; wrong usage is one line on stderr and exit code 2. The commands come from package.json,
// so a new script is covered the day it is added. All run at once: each is a Node start-up.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { checkCommand, helpText, shownPath, step } from '../../src/cli.ts';
import { ROOT } from '../support/helpers.ts';

/** `npm run <name>` → the file it runs, for every script that runs one of ours with node. */
const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const CLIS = Object.entries(scripts).flatMap(([name, command]) => {
  const file = /^node\b.*\s(\S+\.ts)$/.exec(command)?.[1];
  return file ? [{ name, file }] : [];
});

let work = '';
let env: Record<string, string> = {};
beforeAll(() => {
  // Inside the project, as a real build needs, so a build that ran would write here and show.
  fs.mkdirSync(path.join(ROOT, 'node_modules', '.cache'), { recursive: true });
  work = fs.mkdtempSync(path.join(ROOT, 'node_modules', '.cache', 'cli-test-'));
  const content = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-test-content-'));
  env = { DIST_DIR: path.join(work, 'dist'), CONTENT_DIR: content, HOST: '127.0.0.1', PORT: '0', GITHUB_ACTIONS: '' };
});
afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(env.CONTENT_DIR!, { recursive: true, force: true });
});

/** A dozen Node start-ups at once take 10-30 s on two shared cores. */
const SPAWNING_MS = 120_000;

interface Run { status: number | null; stdout: string; stderr: string }
/** Runs `file args` with the temp folders; a process still running after 90 s (a server, a build) is killed and shows as status null. */
function run(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d; });
    child.stderr.on('data', (d: Buffer) => { stderr += d; });
    const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('close', (status) => {
      clearTimeout(guard);
      resolve({ status, stdout, stderr });
    });
  });
}
const gitStatus = () => spawnSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).stdout;

describe('every CLI', () => {
  test('package.json has the CLIs this test expects to find', () => {
    expect(CLIS.map((c) => c.name)).toEqual(expect.arrayContaining(['build', 'serve', 'start', 'check', 'schemas', 'new:profile', 'views:import', 'bench', 'bench:load', 'check:edge', 'screenshots']));
  });

  test('--help and -h print the usage to stdout, exit 0 and write nothing', async () => {
    const before = gitStatus();
    // `-h` on the two whose mistake costs most (a full build, a server that keeps running); the helper treats both alike.
    const runs = await Promise.all(CLIS.flatMap(({ name, file }) => ['--help', ...(name === 'build' || name === 'serve' ? ['-h'] : [])]
      .map(async (flag) => ({ name, flag, ...(await run(file, [flag])) }))));
    for (const r of runs) {
      const what = `npm run ${r.name} -- ${r.flag}: ${r.stderr}`;
      expect(r.status, what).toBe(0);
      expect(r.stdout, what).toMatch(/^Usage: npm (run |start)/);
      expect(r.stdout, what).toContain('-h, --help');
      expect(r.stderr, what).toBe('');
    }
    // No build, no server, no new profile, no schema or benchmark file.
    expect(fs.readdirSync(work)).toEqual([]);
    expect(fs.readdirSync(env.CONTENT_DIR!)).toEqual([]);
    expect(gitStatus()).toBe(before);
  }, SPAWNING_MS);

  test('an unknown option is one line on stderr and exit code 2, also beside other arguments', async () => {
    const runs = await Promise.all(CLIS.map(async ({ name, file }) => ({ name, ...(await run(file, ['--no-such-option', 'someone'])) })));
    for (const r of runs) {
      expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }, r.name).toEqual({
        status: 2, stdout: '', stderr: `${r.name}: unknown option --no-such-option (see --help)\n`,
      });
    }
    expect(fs.readdirSync(work)).toEqual([]);
  }, SPAWNING_MS);

  test('a missing or bad argument is one line and exit code 2', async () => {
    const cases: [string, string[]][] = [
      ['scripts/check-content.ts', ['--format', 'xml']],
      ['scripts/check-content.ts', ['--format']],
      ['scripts/generate-schemas.ts', ['--check=yes']],
      ['scripts/generate-schemas.ts', ['extra']],
      ['scripts/new-profile.ts', []],
      ['scripts/import-views.ts', ['--dry-run']],
      ['scripts/capture-screenshots.ts', []],
      ['scripts/bench/bench-load.ts', ['--duration', 'soon']],
      ['scripts/bench/run-bench.ts', ['--sizes', '1000,lots']],
      ['src/server/main.ts', ['dist']],
    ];
    const runs = await Promise.all(cases.map(([file, args]) => run(file, args)));
    expect(runs.map((r) => `${r.status} ${r.stdout}${r.stderr}`)).toMatchInlineSnapshot(`
      [
        "2 check: --format must be \`text\` or \`github\`, not \`xml\` (see --help)
      ",
        "2 check: --format needs a value (see --help)
      ",
        "2 schemas: --check takes no value (see --help)
      ",
        "2 schemas: unexpected argument \`extra\` (see --help)
      ",
        "2 new:profile: which username? (see --help)
      ",
        "2 views:import: which access logs? (see --help)
      ",
        "2 screenshots: which usernames? (see --help)
      ",
        "2 bench:load: --duration must be a number above 0, not \`soon\` (see --help)
      ",
        "2 bench: --sizes must be a whole number above 0, not \`lots\` (see --help)
      ",
        "2 serve: unexpected argument \`dist\` (see --help)
      ",
      ]
    `);
  }, SPAWNING_MS);
});

describe('the check command a failed check or build prints', () => {
  test('checks the folder that failed, with the SITE_URL it was given, as one line to paste', () => {
    const here = process.cwd();
    expect(checkCommand(path.join(here, 'content'))).toBe('npm run check');
    expect(checkCommand(path.join(here, 'test', 'fixtures', 'content'))).toBe('npm run check -- test/fixtures/content');
    expect(checkCommand('/srv/profiles')).toBe('npm run check -- /srv/profiles');
    expect(checkCommand("/srv/my profiles/it's")).toBe(`npm run check -- '/srv/my profiles/it'\\''s'`);
    expect(checkCommand(path.join(here, 'content'), 'https://profiles.example')).toBe('SITE_URL=https://profiles.example npm run check');
    // The quoted folder is the folder to a shell.
    const echoed = spawnSync('sh', ['-c', `printf %s ${checkCommand("/srv/my profiles/it's").slice('npm run check -- '.length)}`], { encoding: 'utf8' });
    expect(echoed.stdout).toBe("/srv/my profiles/it's");
  });
});

describe('paths in messages', () => {
  test('relative inside the working folder, absolute outside it, where ../../.. would say less', () => {
    expect(shownPath('/work/app/dist', '/work/app')).toBe('dist');
    expect(shownPath('dist', '/work/app')).toBe('dist');
    expect(shownPath('/work/app/content/profiles/a.yaml', '/work/app')).toBe('content/profiles/a.yaml');
    expect(shownPath('/work/app', '/work/app')).toBe('.');
    expect(shownPath('/srv/profiles', '/work/app')).toBe('/srv/profiles');
    expect(shownPath('../other', '/work/app')).toBe('/work/other');
    expect(shownPath('/work', '/work/app')).toBe('/work');
    // A folder whose name starts with two dots is inside.
    expect(shownPath('/work/app/..drafts/x.yaml', '/work/app')).toBe('..drafts/x.yaml');
  });
});

describe('the help text', () => {
  test('lists arguments, options and environment variables in aligned columns', () => {
    expect(helpText({
      name: 'demo',
      usage: 'Usage: npm run demo -- <file> [--out <dir>] [--dry-run]',
      args: { '<file>': 'what to read' },
      options: { out: { type: 'string', value: '<dir>', help: 'where to write' }, 'dry-run': { type: 'boolean', help: 'write nothing' } },
      env: { DEMO_DIR: 'the default --out' },
    })).toMatchInlineSnapshot(`
      "Usage: npm run demo -- <file> [--out <dir>] [--dry-run]

      Arguments:
        <file>       what to read

      Options:
        --out <dir>  where to write
        --dry-run    write nothing
        -h, --help   print this help and exit

      Environment:
        DEMO_DIR     the default --out"
    `);
  });
});

describe('step', () => {
  test('prints a line when long work starts and one every 5 s while it runs, none after', async () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => { lines.push(line); });
    try {
      let finish = () => {};
      const done = step('Building 3 profiles', () => new Promise<void>((resolve) => { finish = resolve; }));
      await vi.advanceTimersByTimeAsync(12_000);
      finish();
      await done;
      await vi.advanceTimersByTimeAsync(10_000);
      expect(lines).toEqual(['Building 3 profiles ...', '  ... 5 s', '  ... 10 s']);
    } finally {
      log.mockRestore();
      vi.useRealTimers();
    }
  });

  test('quiet: nothing for quick work, a line with the label every 5 s for slow work', async () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => { lines.push(line); });
    try {
      await step('Checking content', () => Promise.resolve(), { quiet: true });
      expect(lines).toEqual([]);
      const slow = step('Checking content', () => new Promise<void>((resolve) => setTimeout(resolve, 11_000)), { quiet: true });
      await vi.advanceTimersByTimeAsync(11_000);
      await slow;
      expect(lines).toEqual(['Checking content: 5 s so far ...', 'Checking content: 10 s so far ...']);
    } finally {
      log.mockRestore();
      vi.useRealTimers();
    }
  });
});
