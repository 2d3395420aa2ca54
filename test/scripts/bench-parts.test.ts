// The parts of `npm run bench` that decide its figures (scripts/bench/*.ts): the steps read from a
// build's output, a process tree's memory read from /proc (a fake one, and this machine's), the disk
// a size needs, where Hugo fits, the byte comparison of two builds, and the generator whose first
// profiles are the same at any size. The benchmark itself is not a test (issue 31): these are its parts.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { medianSteps, parseSteps, stepKey, stepTable } from '../../scripts/bench/step-times.ts';
import { processTree, sampleTree, statusKb, treeRssKb } from '../../scripts/bench/proc-tree.ts';
import { add, scaled, shortOf, slowAfterDeleting, usage } from '../../scripts/bench/disk.ts';
import { firstRung, hugoFits, hugoSkipped, nextHugoOnly, predictHugoMb } from '../../scripts/bench/hugo-fit.ts';
import { compareBuilds, comparisonLine, profileFiles } from '../../scripts/bench/same-files.ts';
import { ROOT } from '../support/helpers.ts';
import { sharedBuild } from '../support/built-server.ts';
import { serve } from '../../scripts/support/serve-build.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-parts-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const dir = (name: string) => {
  const d = path.join(tmp, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
};

describe('step times (step-times.ts)', () => {
  // As scripts/build-site.ts prints them: the render step's progress between its name and its time,
  // and a warning printed on stdout in the middle of a step.
  const stdout = [
    'Validating content…warning: views for `x`, who has no profile, are ignored',
    ' 0.4 s',
    'Finding what changed… 0.0 s',
    'Rendering 20,000 of 20,000 profile pages with the renderer `astro build` compiled in 2 threads (and writing the API files)…',
    '  10000 / 20000 profile pages rendered (5.1 s)',
    '  20000 / 20000 profile pages rendered (10.3 s)',
    '  finished: 10.6 s',
    'Writing preview images… 1.2 s',
    '  1015 files, 3.0 MB: brotli 1.0 MB (-67%), gzip 1.1 MB (-63%)',
    'Switching to the new release… 0.0 s',
    'Built 20000 profiles … in 14.1 s, served after 13.9 s (validating content 0.4 s, …), peak memory 625 MB.',
    'BENCH {"ms":14100}',
  ].join('\n');

  test('every step with its time, the render step\'s after its progress lines, none from the summary', () => {
    expect(parseSteps(stdout).map((s) => [s.key, s.seconds])).toEqual([
      ['Validating content', 0.4],
      ['Finding what changed', 0],
      ['Rendering N of N profile pages', 10.6],
      ['Writing preview images', 1.2],
      ['Switching to the new release', 0],
    ]);
  });

  test('a step\'s key is the same at every size and however it rendered', () => {
    expect(stepKey('Rendering 500 of 500 profile pages with Astro\'s kept renderer (and writing the API files)')).toBe(stepKey('Rendering 1,000,000 of 1,000,000 profile pages with the renderer `astro build` compiled in 2 threads (and writing the API files)'));
    expect(stepKey('Linking 12 unchanged pages from the last build')).toBe('Linking N unchanged pages from the last build');
  });

  test('a step still open when the output ends has no time', () => {
    expect(parseSteps('Validating content… 0.4 s\nRendering 5 of 5 profile pages…\n  3 / 5 profile pages rendered (1.0 s)\n')).toHaveLength(1);
  });

  test('the table: a linear step at 1.00x per profile, a quadratic one at 2.00x when the size doubles', () => {
    const runs = (n: number) => [
      [{ name: 'Linear', key: 'Linear', seconds: n / 1000 }, { name: 'Quadratic', key: 'Quadratic', seconds: (n / 1000) ** 2 }],
      // A second, slower run: the median of two is the lower one.
      [{ name: 'Linear', key: 'Linear', seconds: n / 100 }, { name: 'Quadratic', key: 'Quadratic', seconds: (n / 100) ** 2 }],
    ];
    const table = stepTable([[1000, medianSteps(runs(1000))], [2000, medianSteps(runs(2000))], [4000, medianSteps([runs(4000)[0]!])]]);
    expect(table.split('\n')).toEqual([
      '| step | 1,000 | 2,000 | per profile vs the size before | 4,000 | per profile vs the size before |',
      '|---|---|---|---|---|---|',
      '| Linear | 1.0 s | 2.0 s | 1.00x | 4.0 s | 1.00x |',
      '| Quadratic | 1.0 s | 4.0 s | 2.00x | 16.0 s | 2.00x |',
    ]);
  });
});

describe('a process tree\'s memory (proc-tree.ts)', () => {
  /** A fake /proc: each process's stat (its parent) and status (its RSS and high-water mark). */
  const fakeProc = (processes: Record<number, { ppid: number; rssKb: number; hwmKb?: number; comm?: string }>) => {
    const proc = dir(`proc-${Math.random().toString(36).slice(2)}`);
    for (const [pid, p] of Object.entries(processes)) writeProcess(proc, Number(pid), p);
    fs.writeFileSync(path.join(proc, 'meminfo'), 'MemTotal: 1 kB\n'); // not a process: skipped
    return proc;
  };
  const writeProcess = (proc: string, pid: number, p: { ppid: number; rssKb: number; hwmKb?: number; comm?: string }) => {
    fs.mkdirSync(path.join(proc, String(pid)), { recursive: true });
    fs.writeFileSync(path.join(proc, String(pid), 'stat'), `${pid} (${p.comm ?? 'node'}) S ${p.ppid} ${pid} ${pid} 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 1 0`);
    fs.writeFileSync(path.join(proc, String(pid), 'status'), `Name:\t${p.comm ?? 'node'}\nVmHWM:\t${p.hwmKb ?? p.rssKb} kB\nVmRSS:\t${p.rssKb} kB\nThreads:\t7\n`);
  };

  test('the root and its descendants, each once, summed; others and the root\'s parent left out', () => {
    const proc = fakeProc({
      1: { ppid: 0, rssKb: 10_000 },
      100: { ppid: 1, rssKb: 1000 },
      101: { ppid: 100, rssKb: 200, comm: 'esbuild ) (x' }, // a name with a parenthesis and spaces
      102: { ppid: 100, rssKb: 30 },
      103: { ppid: 101, rssKb: 4 },
      200: { ppid: 1, rssKb: 50_000 },
    });
    expect(processTree(100, proc).sort()).toEqual([100, 101, 102, 103]);
    expect(treeRssKb(100, proc)).toEqual({ kb: 1234, processes: 4 });
    expect(treeRssKb(101, proc)).toEqual({ kb: 204, processes: 2 });
  });

  test('a process gone between the listing and the read counts 0, not an error', () => {
    const proc = fakeProc({ 100: { ppid: 1, rssKb: 1000 }, 101: { ppid: 100, rssKb: 200 } });
    fs.rmSync(path.join(proc, '101', 'status'));
    expect(treeRssKb(100, proc)).toEqual({ kb: 1000, processes: 2 });
    expect(statusKb(999, 'VmRSS', proc)).toBe(0);
  });

  test('sampling keeps the highest sum, the most processes and the main process\'s high-water mark', () => {
    const proc = fakeProc({ 100: { ppid: 1, rssKb: 1000, hwmKb: 1500 }, 101: { ppid: 100, rssKb: 3000 } });
    const sampler = sampleTree(100, 60_000, proc); // one sample now, one at stop: no timer fires in between
    // The child ends and the main process grows: the sum falls from 4,000 to 2,500 kB.
    fs.rmSync(path.join(proc, '101'), { recursive: true });
    writeProcess(proc, 100, { ppid: 1, rssKb: 2500, hwmKb: 2600 });
    expect(sampler.stop()).toEqual({ treeKb: 4000, mainKb: 2600, processes: 2 });
  });

  const noProc = !fs.existsSync('/proc/self/stat');
  test.skipIf(noProc)(`on this machine: a process and the child it started, with their RSS${noProc ? ' (skipped: this system has no /proc)' : ''}`, async () => {
    // A Node process that starts another and says so; both wait on their stdin, which the test closes.
    const child = spawn(process.execPath, ['-e', `
      const c = require('node:child_process').spawn(process.execPath, ['-e', 'process.stdin.resume(); process.stdin.on("end", () => process.exit())'], { stdio: ['pipe', 'inherit', 'inherit'] });
      process.stdin.resume(); process.stdin.on('end', () => { c.stdin.end(); });
      console.log(c.pid);`], { stdio: ['pipe', 'pipe', 'inherit'] });
    const grandchild = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    try {
      expect(processTree(child.pid!).sort()).toEqual([child.pid!, grandchild].sort());
      const { kb, processes } = treeRssKb(child.pid!);
      expect(processes).toBe(2);
      // Two Node processes: each at least 10 MB, and the sum their own two figures.
      expect(kb).toBeGreaterThan(20 * 1024);
      expect(kb).toBeLessThan(statusKb(child.pid!, 'VmRSS') + statusKb(grandchild, 'VmRSS') + 20 * 1024);
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('close', resolve));
    }
  });
});

describe('disk (disk.ts)', () => {
  test('a folder\'s files, folders and links, each inode once: a hard link costs nothing twice', () => {
    const d = dir('usage');
    fs.writeFileSync(path.join(d, 'a'), 'x'.repeat(10_000));
    fs.linkSync(path.join(d, 'a'), path.join(d, 'b'));
    fs.mkdirSync(path.join(d, 'sub'));
    fs.writeFileSync(path.join(d, 'sub', 'c'), 'y');
    fs.symlinkSync('a', path.join(d, 'link'));
    const u = usage(d);
    expect(u.inodes).toBe(5); // d, a (= b), sub, c, link
    const blocks = (p: string) => fs.lstatSync(p).blocks * 512;
    expect(u.bytes).toBe(blocks(d) + blocks(path.join(d, 'a')) + blocks(path.join(d, 'sub')) + blocks(path.join(d, 'sub', 'c')) + blocks(path.join(d, 'link')));
    expect(usage(path.join(d, 'none'))).toEqual({ bytes: 0, inodes: 0 });
  });

  test('what a size needs, and the sentence when it is more than the disk has', () => {
    const need = add({ bytes: 1000, inodes: 2 }, scaled({ bytes: 40_000, inodes: 7 }, 1_000_000, 1));
    expect(need).toEqual({ bytes: 40_000_001_000, inodes: 7_000_002 });
    expect(shortOf(need, '/work', 'x', { bytes: 50e9, inodes: 8e6 })).toBeNull();
    expect(shortOf(need, '/work', '1,000,000 profiles', { bytes: 50e9, inodes: 6e6 }))
      .toBe('1,000,000 profiles: need about 40.0 GB and 7.0 million inodes free on the disk of /work; it has 50.0 GB and 6.0 million');
  });

  test('slow to create files after deleting some: ext4 without a journal, by the mount that holds the folder', () => {
    const mounts = [
      '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard',
      '25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k',
      '30 27 254:16 / /data rw,relatime - ext4 /dev/vdb rw',
      '31 27 254:32 / /srv/x\\040y rw,relatime - xfs /dev/vdc rw',
    ].join('\n');
    const files: Record<string, string> = { '/proc/self/mountinfo': mounts, '/sys/fs/ext4/vda/journal_task': '<none>\n', '/sys/fs/ext4/vdb/journal_task': 'jbd2/vdb-8\n' };
    const read = (file: string) => {
      if (!(file in files)) throw new Error(`ENOENT: ${file}`);
      return files[file]!;
    };
    expect(slowAfterDeleting('/work/some/where', read)).toBe(true);
    expect(slowAfterDeleting('/dev/shm/run', read)).toBe(false);
    expect(slowAfterDeleting('/data/bench', read)).toBe(false);
    expect(slowAfterDeleting('/srv/x y/bench', read)).toBe(false);
    // The longest mount point that holds it, not a prefix of its name.
    expect(slowAfterDeleting('/database', read)).toBe(true);
    expect(slowAfterDeleting('/work', () => { throw new Error('no /proc'); })).toBe(false);
  });
});

describe('where Hugo fits (hugo-fit.ts)', () => {
  const total = 24 * 1024;
  const at100k = [{ n: 100_000, peakMb: 3.8 * 1024 }];

  test('its peak grows linearly from the largest size measured', () => {
    expect(predictHugoMb([], 1000)).toBeUndefined();
    expect(predictHugoMb([{ n: 1000, peakMb: 500 }, ...at100k], 1_000_000)).toBeCloseTo(38 * 1024);
    expect(hugoFits([], 1_000_000, total)).toEqual({ fits: true, predictedMb: undefined });
    expect(hugoFits(at100k, 300_000, total).fits).toBe(true); // 11.4 GB of 19.2
    expect(hugoFits(at100k, 1_000_000, total).fits).toBe(false); // 38 GB
    expect(hugoSkipped(1_000_000, 38 * 1024, total)).toBe('Hugo: not run at 1,000,000: predicted 38.0 GB of 24 GB');
  });

  test('with one size, Hugo at 100,000 first, then at the largest of the size and 300,000 that fits', () => {
    expect(firstRung([1_000_000])).toEqual([100_000]);
    expect(firstRung([20_000])).toEqual([]);
    expect(firstRung([100_000, 1_000_000])).toEqual([]);
    expect(nextHugoOnly(1_000_000, at100k, total)).toBe(300_000);
    expect(nextHugoOnly(1_000_000, at100k, 64 * 1024)).toBeUndefined(); // 38 GB fits in 51: Hugo runs at the size
    expect(nextHugoOnly(1_000_000, at100k, 12 * 1024)).toBeUndefined(); // 11.4 GB does not fit in 9.6: 100,000 only
    expect(nextHugoOnly(250_000, at100k, total)).toBeUndefined(); // the size fits
  });
});

describe('two builds\' files compared (same-files.ts)', () => {
  /** A served release as the build leaves it: `<dist>` a link to `<dist>.releases/<id>`. */
  const release = (name: string, files: Record<string, string>) => {
    const parent = dir(name);
    const id = '000001-20260101T000000Z';
    const client = path.join(parent, 'dist.releases', id, 'client');
    for (const [file, body] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(client, file)), { recursive: true });
      fs.writeFileSync(path.join(client, file), body);
    }
    fs.writeFileSync(path.join(parent, 'dist.releases', id, 'release.json'), JSON.stringify({ id, previous: null, builtAt: '2026-01-01T00:00:00.000Z' }));
    fs.symlinkSync(path.join('dist.releases', id), path.join(parent, 'dist'));
    return path.join(parent, 'dist');
  };
  const filesOf = (names: string[], tweak: (file: string) => string = () => '') =>
    Object.fromEntries([...names.flatMap(profileFiles).map((f) => [f, `${f}${tweak(f)}`]), ['media/og/10-41.png', 'png'], ['index.html', 'list of every profile']]);

  test('the small build\'s files for its profiles, and its images, all found equal in the big one', () => {
    const small = release('small', filesOf(['a', 'b']));
    const big = release('big', { ...filesOf(['a', 'b', 'c']), 'index.html': 'a longer list' });
    const c = compareBuilds(small, big, ['a', 'b']);
    expect(c).toEqual({ files: 13, equal: 13, missing: [], different: [] });
    expect(comparisonLine(c, 2, 3)).toMatch(/: 13 files equal$/);
  });

  test('a file with other bytes, or missing from the big build, is named', () => {
    const small = release('small2', filesOf(['a', 'b']));
    const bigFiles = filesOf(['a', 'b'], (f) => (f === 'api/v1/users/b.br' ? ' changed' : ''));
    delete bigFiles['p/a.html.gz'];
    const c = compareBuilds(small, release('big2', bigFiles), ['a', 'b']);
    expect(c).toEqual({ files: 13, equal: 11, missing: ['p/a.html.gz'], different: ['api/v1/users/b.br'] });
    expect(comparisonLine(c, 2, 3)).toMatch(/11 of 13 equal, NOT all; 1 differ \(api\/v1\/users\/b\.br\); 1 missing from the big build \(p\/a\.html\.gz\)$/);
  });
});

test('the generator\'s first profiles are the same at any size: the byte comparison rests on it', () => {
  const gen = (n: number) => {
    const out = path.join(tmp, `gen-${n}`);
    const r = spawnSync(process.execPath, ['scripts/bench/generate-profiles.ts', String(n), out], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return out;
  };
  const [small, big] = [gen(60), gen(150)];
  const names = (d: string, sub: string) => fs.readdirSync(path.join(d, sub)).sort();
  expect(names(small, 'profiles')).toHaveLength(60);
  for (const sub of ['profiles', 'creators', 'decorations', 'avatars']) {
    for (const f of names(small, sub)) expect(fs.readFileSync(path.join(big, sub, f)).equals(fs.readFileSync(path.join(small, sub, f))), `${sub}/${f}`).toBe(true);
  }
  // No creator of the first profiles only in the big one.
  expect(names(big, 'creators').filter((f) => Number(f.slice(4, 10)) < 60)).toEqual(names(small, 'creators'));
  // The view counts of the first profiles: the small file's lines are the big one's first.
  const views = (d: string) => fs.readFileSync(path.join(d, 'stats', 'views.yaml'), 'utf8').trimEnd().split('\n');
  expect(views(big).slice(0, views(small).length)).toEqual(views(small));
  expect(views(big).length).toBeGreaterThan(views(small).length);
});

describe('the bare server, the lookups\' baseline (serve-bare.ts)', () => {
  // It must send what ours sends, or the ratio measures other bytes: a `node` release keeps each
  // answer's codings inside its file (src/release/coded-file.ts), and the bare server once sent
  // that whole file, codings and all, as the answer.
  test('sends our answers\' bodies: the path form as is and in brotli, the query form\'s data, a 404', async () => {
    const { dist, base } = sharedBuild();
    const bare = await serve({ script: 'scripts/bench/serve-bare.ts', args: [dist] });
    try {
      const get = async (at: string, address: string, encoding = 'identity') => {
        const res = await fetch(`${at}${address}`, { headers: { 'accept-encoding': encoding } });
        return { status: res.status, coding: res.headers.get('content-encoding'), body: Buffer.from(await res.arrayBuffer()) };
      };
      for (const name of ['alice', 'bob', 'erin_99']) {
        const [ours, theirs] = [await get(base, `/api/v1/users/${name}`), await get(bare.base, `/api/v1/users/${name}`)];
        expect(theirs.status, name).toBe(200);
        expect(theirs.body.equals(ours.body), name).toBe(true);
        const [oursBr, theirsBr] = [await get(base, `/api/v1/users/${name}`, 'br'), await get(bare.base, `/api/v1/users/${name}`, 'br')];
        expect([theirsBr.coding, oursBr.coding], name).toEqual(['br', 'br']);
        expect(theirsBr.body.equals(oursBr.body), name).toBe(true);
        const data = async (at: string) => (JSON.parse((await get(at, `/api/v1/users?username=${name}`)).body.toString('utf8')) as { data: unknown }).data;
        expect(await data(bare.base), name).toEqual(await data(base));
      }
      const missing = await get(bare.base, '/api/v1/users/nobody-here');
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body.toString('utf8')).error.code).toBe('USER_NOT_FOUND');
    } finally {
      await bare.stop();
    }
  });
});
