// `npm run check` finds what the build refuses: with SITE_URL, a custom domain that is the site's
// own host; without it, it says that this was not checked rather than "Content OK" alone.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

const work = workDir('check-content');
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const check = (content: string, env: Record<string, string | undefined>) => {
  const { SITE_URL: _, ...base } = process.env;
  return spawnSync(process.execPath, ['scripts/check-content.ts', content], {
    cwd: ROOT, encoding: 'utf8', env: { ...base, PROFILES_INCREMENTAL: '0', ...env },
  });
};

describe('npm run check', () => {
  test('a custom domain that is the site\'s own host: a problem at its line with SITE_URL, a note without it', () => {
    const content = path.join(work, 'content');
    fs.rmSync(work, { recursive: true, force: true });
    fs.cpSync(FIXTURE, content, { recursive: true });
    fs.writeFileSync(path.join(content, 'profiles', 'zed.yaml'), 'displayName: Zed\ncreatedAt: 2024-01-01T00:00:00Z\ncustomDomain: www.profiles.example.org\n');
    const withSite = check(content, { SITE_URL: 'https://profiles.example.org' });
    expect(withSite.status, withSite.stdout).toBe(1);
    expect(withSite.stderr).toMatch(/profiles\/zed\.yaml:3:\d+/);
    const without = check(content, {});
    expect(without.status, without.stderr).toBe(0);
    expect(without.stdout).toMatch(/^Content OK: /m);
    expect(without.stdout).toMatch(/Custom domains were not checked against the site's own host: SITE_URL is not set/);
    // Without custom domains there is nothing to say.
    fs.rmSync(path.join(content, 'profiles', 'zed.yaml'));
    fs.writeFileSync(path.join(content, 'profiles', 'alice.yaml'), fs.readFileSync(path.join(content, 'profiles', 'alice.yaml'), 'utf8').replace(/^customDomain: .*\n/m, ''));
    const plain = check(content, {});
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).not.toMatch(/Custom domains/);
  });
});
