// Switching releases under load: while clients keep asking, builds and a rollback switch the served
// release again and again. No request may fail: every answer is a 2xx of one release or the other.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listReleases, releasePath, servedRelease } from '../../src/release/releases.ts';
import { loadRelease } from '../../src/server/release.ts';
import { BUILD_EPOCH, TEST_SITE_URL, ownBuild, type OwnBuild } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

let service: OwnBuild;
let edited = '';
beforeAll(async () => {
  service = await ownBuild('load');
  edited = service.fixtureWith('edited', { 'profiles/bob.yaml': 'displayName: Robert\ncreatedAt: 2024-11-02T00:00:00Z\n' });
}, 120_000);
afterAll(() => service?.stop());

/** Runs a script of the project without blocking this thread (the load keeps going meanwhile). */
function run(script: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], {
      cwd: ROOT, env: { ...process.env, SITE_URL: TEST_SITE_URL, DIST_DIR: service.dist, SOURCE_DATE_EPOCH: String(BUILD_EPOCH), ...env },
    });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('switching releases under load', () => {
  test('rebuilds and a rollback while 8 clients ask: not one non-2xx answer, each from one release', async () => {
    const { base } = service;
    const home = await (await fetch(`${base}/`)).text();
    const stylesheet = /href="(\/_astro\/[^"]+\.css)"/.exec(home)![1]!;
    const paths = [
      '/api/v1/users/alice', '/api/v1/users/bob', '/api/v1/users?username=bob', '/p/alice', '/p/bob', '/', '/docs',
      '/openapi.json', '/service-api/v1/creators', '/service-api/v1/creators?limit=2', '/media/avatars/alice.png', stylesheet,
    ];
    const failures: string[] = [];
    const names = new Set<string>();
    let requests = 0;
    let done = false;
    const client = async (k: number) => {
      for (let i = k; !done; i++) {
        const p = paths[i % paths.length]!;
        try {
          const r = await fetch(base + p);
          const body = await r.text();
          requests++;
          if (r.status < 200 || r.status > 299) failures.push(`${r.status} ${p}`);
          if (p === '/api/v1/users/bob') names.add((JSON.parse(body) as { data: { displayName: string } }).data.displayName);
          // A page is whole: its title and its body name the same person.
          if (p === '/p/bob') expect(body.match(/Robert|Bob\b/g)!.every((n) => n === body.match(/Robert|Bob\b/)![0])).toBe(true);
        } catch (e) {
          failures.push(`${(e as Error).message} ${p}`);
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, k) => client(k));
    const steps: string[] = [];
    for (const content of [edited, FIXTURE, edited, FIXTURE]) {
      const b = await run('scripts/build-site.ts', { CONTENT_DIR: content });
      expect(b.code, b.out).toBe(0);
      steps.push(servedRelease(service.dist)!);
    }
    const back = await run('scripts/rollback-release.ts', {});
    expect(back.code, back.out).toBe(0);
    expect(servedRelease(service.dist)).toBe(steps[2]);
    // The server follows the link to the rolled-back release (bob is Robert there).
    let now = '';
    while (now !== 'Robert') now = (await (await fetch(`${base}/api/v1/users/bob`)).json() as { data: { displayName: string } }).data.displayName;
    done = true;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(100);
    expect([...names].sort()).toEqual(['Bob', 'Robert']);
  }, 180_000);

  test('loading a release reads nothing ahead: each answers from its own folder', async () => {
    // Two releases at least, whatever ran before: a build makes one beside the first build's.
    const b = await run('scripts/build-site.ts', { CONTENT_DIR: edited });
    expect(b.code, b.out).toBe(0);
    const ids = listReleases(service.dist);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const loaded = [];
    for (const id of [...ids, ...ids]) loaded.push(await loadRelease(releasePath(service.dist, id)));
    // Only the 404 page, read to check the release is whole.
    for (const l of loaded) expect(l.files.cachedBytes).toBe(fs.statSync(path.join(l.dir, 'client', '404.html')).size);
    expect(new Set(loaded.map((l) => l.dir)).size).toBe(ids.length);
  }, 60_000);
});
