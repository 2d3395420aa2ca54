// .github/workflows/site.yml: what GitHub would run, read from the file (GitHub itself cannot run
// here). The deploy publishes a DEPLOY_TARGET=static build to GitHub Pages with actions/deploy-pages,
// with the permissions that action needs and no more; every action is at its current major (the
// Node 24 ones); and the Pages artifact, archived as actions/upload-pages-artifact does it, holds
// every file of the release `dist` leads to.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { listFiles } from '../../src/release/layers.ts';
import { compressedBaseOf } from '../../src/http/headers.ts';
import { buildFixture, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

const FILE = path.join(ROOT, '.github', 'workflows', 'site.yml');
const TEXT = fs.readFileSync(FILE, 'utf8');

interface Step { id?: string; name?: string; uses?: string; run?: string; if?: string; with?: Record<string, unknown>; env?: Record<string, string> }
interface Job {
  if?: string; needs?: string | string[]; permissions?: Record<string, string>; steps: Step[];
  environment?: { name: string; url?: string }; concurrency?: { group: string; 'cancel-in-progress': boolean | string };
}
interface Workflow { on: Record<string, unknown>; permissions: Record<string, string>; jobs: Record<string, Job> }
const workflow = parse(TEXT) as Workflow;

/**
 * The current major of each action the file may use (their repositories' tags, 2026-11): all run on
 * Node 24. An action not listed here fails the test, so a new one is added knowingly.
 */
const CURRENT_MAJORS: Record<string, number> = {
  'actions/checkout': 7,
  'actions/setup-node': 7,
  'actions/upload-pages-artifact': 5,
  'actions/deploy-pages': 5,
  'actions/upload-artifact': 7,
  'actions/download-artifact': 8,
};

const stepUsing = (job: Job, action: string) => job.steps.find((s) => s.uses?.split('@')[0] === action);
const stepRunning = (job: Job, command: RegExp) => job.steps.find((s) => s.run !== undefined && command.test(s.run));

describe('.github/workflows/site.yml', () => {
  test('runs on pull requests, pushes to main, daily and on demand', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push', 'schedule', 'workflow_dispatch']);
    expect(workflow.on.push).toEqual({ branches: ['main'] });
  });

  test('every action, in the jobs and in the commented examples, is at its current major', () => {
    // `uses:` anywhere in the text, comments included, so the examples do not go stale either.
    const uses = [...TEXT.matchAll(/uses:\s*([\w.-]+\/[\w.-]+)@(\S+)/g)].map((m) => ({ action: m[1]!, ref: m[2]! }));
    expect(uses.length).toBeGreaterThanOrEqual(6);
    for (const { action, ref } of uses) {
      expect(Object.keys(CURRENT_MAJORS), `${action} is not a known action`).toContain(action);
      expect(ref, `${action}@${ref}`).toBe(`v${CURRENT_MAJORS[action]}`);
    }
    expect(TEXT).not.toMatch(/@v4\b/);
  });

  test('the build: content check and tests first, then a DEPLOY_TARGET=static build whose dist/client goes to Pages', () => {
    const build = workflow.jobs.build!;
    const runs = build.steps.map((s) => s.run ?? '');
    const at = (pattern: RegExp) => runs.findIndex((r) => pattern.test(r));
    const [ci, check, tests, buildStep] = [at(/^npm ci\b/), at(/^npm run check\b/), at(/^npm test\b/), at(/npm run build/)];
    expect([ci, check, tests, buildStep].every((i) => i >= 0)).toBe(true);
    expect(ci < check && check < tests && tests < buildStep).toBe(true);
    // No .br/.gz copies: GitHub compresses by itself and would serve them only at their own addresses.
    expect(build.steps[buildStep]!.env).toMatchObject({ DEPLOY_TARGET: 'static', PRECOMPRESS: '0', SITE_URL: expect.stringContaining('vars.SITE_URL') });
    // The check knows the site's host too, so a custom domain that is that host shows on its line.
    expect(build.steps[check]!.env).toMatchObject({ SITE_URL: expect.stringContaining('vars.SITE_URL') });
    const upload = stepUsing(build, 'actions/upload-pages-artifact')!;
    expect(upload, 'the build uploads the Pages artifact').toBeDefined();
    expect(build.steps.indexOf(upload)).toBeGreaterThan(buildStep);
    expect(upload.with).toMatchObject({ path: 'dist/client', 'include-hidden-files': true });
    expect(upload.if).toBe("github.event_name != 'pull_request'");
    // Pull requests build too, but a run for a newer commit of the same one replaces theirs.
    expect(build.if).toBeUndefined();
    expect(build.concurrency?.['cancel-in-progress']).toBe("${{ github.event_name == 'pull_request' }}");
  });

  test('the deploy: actions/deploy-pages after the build, in the github-pages environment, with pages and id-token write only', () => {
    const deploy = workflow.jobs.deploy!;
    expect(deploy.needs).toBe('build');
    expect(deploy.if).toBe("github.event_name != 'pull_request'");
    expect(deploy.permissions).toEqual({ pages: 'write', 'id-token': 'write' });
    expect(deploy.environment).toEqual({ name: 'github-pages', url: '${{ steps.deployment.outputs.page_url }}' });
    expect(deploy.steps).toEqual([{ id: 'deployment', uses: `actions/deploy-pages@v${CURRENT_MAJORS['actions/deploy-pages']}` }]);
    expect(deploy.concurrency).toEqual({ group: expect.any(String), 'cancel-in-progress': false });
    // Nothing else may write: the workflow's token reads the repository only.
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(Object.keys(workflow.jobs).sort()).toEqual(['build', 'deploy']);
    expect(TEXT).not.toMatch(/placeholder/i);
  });

  test('a push without the SITE_URL variable fails the build step with an error annotation, before building', () => {
    const step = workflow.jobs.build!.steps.find((s) => s.run?.includes('npm run build'))!;
    // npm is not on this PATH: reaching `npm run build` would fail differently (127).
    const r = spawnSync('/bin/sh', ['-c', step.run!], { encoding: 'utf8', env: { PATH: '/nonexistent', GITHUB_EVENT_NAME: 'push', SITE_URL: '' } });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^::error title=SITE_URL is not set::/);
    const pr = spawnSync('/bin/sh', ['-c', step.run!], { encoding: 'utf8', env: { PATH: '/nonexistent', GITHUB_EVENT_NAME: 'pull_request', SITE_URL: 'https://profiles.example.com' } });
    expect(pr.status).toBe(127);
  });
});

describe('the Pages artifact of a static build', () => {
  const hasTar = !spawnSync('tar', ['--version']).error;
  const work = workDir('pages-artifact');
  const dist = path.join(work, 'dist');
  beforeAll(() => {
    if (!hasTar) return;
    fs.rmSync(work, { recursive: true, force: true });
    // The build step's own environment, but for SITE_URL.
    const { SITE_URL: _, ...env } = stepRunning(workflow.jobs.build!, /npm run build/)!.env!;
    const r = buildFixture(FIXTURE, dist, env);
    expect(r.status, r.stderr + r.stdout).toBe(0);
  }, 120_000);
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  test.skipIf(!hasTar)('holds every file of the release dist leads to, hidden ones too (tar as upload-pages-artifact@v5 runs it)', () => {
    expect(fs.lstatSync(dist).isSymbolicLink()).toBe(true);
    const upload = stepUsing(workflow.jobs.build!, 'actions/upload-pages-artifact')!;
    const hidden = upload.with!['include-hidden-files'] === true;
    // The action's command on Linux (action.yml of v5.0.0), listing instead of writing the archive.
    const r = spawnSync('tar', [
      '--dereference', '--hard-dereference', '--directory', path.join(dist, 'client'),
      '-cf', '-', '--exclude=.git', '--exclude=.github', ...(hidden ? [] : ['--exclude=.[^/]*']), '.',
    ], { maxBuffer: 1 << 28 });
    expect(r.status, String(r.stderr)).toBe(0);
    const listed = spawnSync('tar', ['-tf', '-'], { input: r.stdout, encoding: 'utf8', maxBuffer: 1 << 28 });
    const archived = listed.stdout.split('\n').filter((f) => f && !f.endsWith('/')).map((f) => f.replace(/^\.\//, '')).sort();
    const files = listFiles(path.join(fs.realpathSync(dist), 'client')).sort();
    expect(archived).toEqual(files);
    for (const f of ['index.html', '404.html', 'p/alice.html', 'docs.html', 'sitemap.xml', 'api/v1/users/alice']) expect(archived).toContain(f);
    expect(archived.some((f) => /^_astro\/.+\.css$/.test(f))).toBe(true);
    // GitHub compresses by itself: no copies it would serve at their own addresses.
    expect(archived.filter((f) => compressedBaseOf(f) !== undefined)).toEqual([]);
  });
});
