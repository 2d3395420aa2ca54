// The `engines` check npm cannot do here. npm checks each package's `engines.node` against the
// Node that runs npm, the system Node (20 on our machines), while every script and test runs on
// Node 24 from the `node` devDependency; so .npmrc turns npm's (wrong) warnings off, and this
// checks the installed packages against the Node they run on, as npm-install-checks would.
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, test } from 'vitest';
import { ROOT } from './support/helpers.ts';

interface LockedPackage { version?: string; optional?: boolean; engines?: { node?: string } }
const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };

describe('Node engines', () => {
  test('the tests run on the Node of the `node` devDependency', () => {
    expect(process.versions.node).toBe(lock.packages['node_modules/node']!.version);
  });

  test('every package accepts that Node', () => {
    // Optional packages are platform bindings for other systems; npm skips those that do not fit.
    const refused = Object.entries(lock.packages)
      .filter(([, p]) => !p.optional && p.engines?.node && !semver.satisfies(process.versions.node, p.engines.node, { includePrerelease: true }))
      .map(([where, p]) => `${where || 'package.json'}: node ${p.engines!.node}`);
    expect(refused).toEqual([]);
    // It did check something: the packages that warn on Node 20.
    const checked = Object.entries(lock.packages).filter(([, p]) => p.engines?.node && !semver.satisfies('20.20.2', p.engines.node));
    expect(checked.map(([where]) => where)).toEqual(expect.arrayContaining(['', 'node_modules/astro', 'node_modules/vitest']));
  });
});
