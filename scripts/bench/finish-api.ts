// node scripts/bench/finish-api.ts N...: the columns of a whole index and the files made from them
// for the handler (`columnsOf`, `handlerFiles`) on N synthetic profiles, each size in a process of
// its own and after a full collection; BENCHMARKS.md, "Finishing the API files at 1,000,000".
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { columnsOf, type SiteIndex } from '../../src/model/site-index.ts';
import { handlerFiles } from '../../src/build/derived.ts';

const [first, ...rest] = process.argv.slice(2);
if (process.env.FINISH_API_CHILD !== '1') {
  for (const n of [first, ...rest].filter(Boolean)) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=32', '--heap-growing-percent=25', fileURLToPath(import.meta.url), n!], { stdio: 'inherit', env: { ...process.env, FINISH_API_CHILD: '1' } });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
} else {
  const n = Number(first);
  // As gen-profiles.mjs makes them: names in order, 5% suspended, 2% with a domain, 2% creators, one shared avatar.
  const users = Array.from({ length: n }, (_, i) => ({
    username: `user${String(i).padStart(6, '0')}`, status: i % 20 === 0 ? 'suspended' : 'active', customDomain: i % 50 === 0 ? `d${i}.example.com` : null, createdAt: '2020-01-01T00:00:00Z',
  }));
  const creators = users.filter((_, i) => i % 50 === 1).map((u) => ({ username: u.username, displayName: u.username, avatarUrl: null, url: `https://profiles.example/p/${u.username}` }));
  const index = { siteUrl: 'https://profiles.example', builtAt: '2026-01-01T00:00:00.000Z', profileCount: n, decorationFiles: [], users, avatars: users.map((u) => [u.username, 'a.png']), creators } as unknown as SiteIndex;
  (globalThis as { gc?: () => void }).gc?.();
  const t0 = performance.now();
  const columns = columnsOf(index);
  const t1 = performance.now();
  const { files } = handlerFiles(columns, 'node', () => index.builtAt);
  const t2 = performance.now();
  console.log(`${n} profiles: columns ${(t1 - t0).toFixed(0)} ms, handler files ${(t2 - t1).toFixed(0)} ms (${files.size} files)`);
}
