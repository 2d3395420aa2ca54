// What `astro dev`'s watcher leaves alone (src/build/astro/dev-watch.ts); test/scripts/astro-dev.test.ts
// checks the running dev server's watches.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { unwatchedByDev } from '../../src/build/astro/dev-watch.ts';

const root = path.resolve('/srv/site');
const at = (...parts: string[]) => path.join(root, ...parts);

describe('unwatchedByDev', () => {
  test('leaves the content folder, DIST_DIR and its releases alone, wherever they are', () => {
    const skip = unwatchedByDev(root, { CONTENT_DIR: at('data', 'profiles'), DIST_DIR: at('out', 'site') });
    for (const p of [at('data', 'profiles'), at('data', 'profiles', 'alice.yaml'), at('out', 'site', 'p', 'a.html'), at('out', 'site.releases', '000001', 'x')]) expect(skip(p), p).toBe(true);
    for (const p of [at('data'), at('data', 'profiles-old', 'a.yaml'), at('out', 'sitemap.xml'), at('src', 'pages', 'index.astro'), root]) expect(skip(p), p).toBe(false);
  });

  test('leaves folders named as builds name theirs alone at the top of the project only', () => {
    const skip = unwatchedByDev(root, { CONTENT_DIR: at('content') });
    for (const name of ['dist', 'dist.releases', 'dist-bench', 'dist-bench.releases', 'dist-server', '.wrangler']) expect(skip(at(name, 'a', 'b.html')), name).toBe(true);
    for (const p of [at('distance.ts'), at('src', 'dist', 'x.ts'), at('distx', 'y'), at('content-old', 'a.yaml')]) expect(skip(p), p).toBe(false);
    expect(skip(at('content', 'profiles', 'a.yaml'))).toBe(true);
    // Relative paths are the project's.
    expect(skip('dist.releases/000001/client/p/a.html')).toBe(true);
    expect(skip('src/pages/index.astro')).toBe(false);
  });

  test('watches a content folder that holds the project, as before', () => {
    const skip = unwatchedByDev(root, { CONTENT_DIR: path.dirname(root) });
    expect(skip(at('src', 'pages', 'index.astro'))).toBe(false);
    expect(skip(at('dist', 'index.html'))).toBe(true);
  });
});
