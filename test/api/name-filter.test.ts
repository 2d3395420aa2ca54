// The filter of user names (src/api/name-filter.ts): it never excludes a name with a user file,
// rarely admits another, and the handler answers a 404 for a name it excludes without reading the
// user file, on the fixture in memory and on a built release on disk. Without it (an older
// release) or with a file it cannot read, every answer is the same.
import { describe, expect, test } from 'vitest';
import { answer, userFile } from '../../src/api/handler.ts';
import { BITS_PER_NAME, nameFilterBytes, parseNameFilter } from '../../src/api/name-filter.ts';
import { USER_NAMES_FILE, type ReleaseFiles } from '../../src/api/release-files.ts';
import { loadRelease } from '../../src/server/release.ts';
import { sharedBuild } from '../support/built-server.ts';
import { bodyJson, fixtureSite, request } from '../support/helpers.ts';

/** 20,000 names in the shapes the pattern allows: letters, digits, `_` and `-`, 1 to 32 long. */
const generated = Array.from({ length: 20_000 }, (_, i) => [`user${i}`, `${i.toString(36)}`, `x-${i * 7919}_a`, `${'n'.repeat(i % 25)}${i}`][i % 4]!);

describe('the filter of names', () => {
  test('every name put in is admitted: the fixture and 20,000 generated names', () => {
    const { index } = fixtureSite();
    const fixture = index.users.map((u) => u.username);
    for (const names of [fixture, generated]) {
      const filter = parseNameFilter(nameFilterBytes(names))!;
      expect(names.filter((n) => !filter.has(n))).toEqual([]);
    }
  });

  test('names not put in are admitted at most 1.2% of the time', () => {
    const filter = parseNameFilter(nameFilterBytes(generated))!;
    const others = Array.from({ length: 100_000 }, (_, i) => `nobody-${i}`);
    const admitted = others.filter((n) => filter.has(n)).length;
    // 10 bits and 7 probes per name: 0.82% expected; the hash is fixed, so this count is too.
    expect(admitted).toBeLessThan(1_200);
    expect(admitted).toBeGreaterThan(0);
  });

  test('its file is 10 bits per name, the same bytes in any order', () => {
    const bytes = nameFilterBytes(generated);
    expect(bytes.byteLength).toBe(16 + (generated.length * BITS_PER_NAME) / 8);
    expect(Buffer.from(nameFilterBytes([...generated].reverse())).equals(bytes)).toBe(true);
  });

  test('bytes of another format are no filter', () => {
    const bytes = nameFilterBytes(['alice']);
    expect(parseNameFilter(bytes)?.has('alice')).toBe(true);
    expect(parseNameFilter(undefined)).toBeUndefined();
    expect(parseNameFilter(bytes.subarray(0, bytes.length - 1))).toBeUndefined();
    expect(parseNameFilter(new TextEncoder().encode('{"alice":true}'))).toBeUndefined();
    const otherMagic = bytes.slice();
    otherMagic[3] = 0x32; // BLM2
    expect(parseNameFilter(otherMagic)).toBeUndefined();
  });
});

/** `files` with every path read counted, and the filter's file changed by `filter` (undefined: none). */
function counted(files: ReleaseFiles, filter: (bytes: Uint8Array | undefined) => Promise<Uint8Array | undefined> | Uint8Array | undefined = (b) => b) {
  const reads: string[] = [];
  const wrapped: ReleaseFiles = {
    read(file) {
      reads.push(file);
      const bytes = files.read(file);
      if (file !== USER_NAMES_FILE) return bytes;
      return bytes instanceof Promise ? bytes.then(filter) : filter(bytes);
    },
  };
  return { files: wrapped, userReads: () => reads.filter((f) => f.startsWith('api/v1/users/')) };
}

const statusAndCode = async (files: ReleaseFiles, target: string) => {
  const r = await answer(request(target), files);
  return [r.status, r.status === 200 ? bodyJson(r).data.username : bodyJson(r).error.code];
};

/** The same answers whether a release has the filter or not. */
const LOOKUPS: [string, [number, string]][] = [
  ['/api/v1/users/alice', [200, 'alice']],
  ['/api/v1/users/ALICE', [200, 'alice']],
  ['/api/v1/users?username=%40Alice', [200, 'alice']],
  ['/api/v1/users/nobody', [404, 'USER_NOT_FOUND']],
  ['/api/v1/users?username=NOBODY', [404, 'USER_NOT_FOUND']],
  ['/api/avatar?u=nobody', [404, 'USER_NOT_FOUND']],
];

describe('lookups with the filter', () => {
  test('an unknown name is a 404 without reading a user file, in the path, the query form and the avatar', async () => {
    const { files, userReads } = counted(fixtureSite().files);
    for (const target of ['/api/v1/users/nobody', '/api/v1/users/NOBODY', '/api/v1/users?username=@nobody', '/api/avatar?u=nobody']) {
      expect(await statusAndCode(files, target), target).toEqual([404, 'USER_NOT_FOUND']);
    }
    expect(userReads()).toEqual([]);
  });

  test('a known name is read once per lookup, in any casing', async () => {
    const { files, userReads } = counted(fixtureSite().files);
    for (const [target, expected] of LOOKUPS) expect(await statusAndCode(files, target), target).toEqual(expected);
    expect(userReads()).toEqual([userFile('alice'), userFile('alice'), userFile('alice')]);
  });

  test('the filter is read once per release files', async () => {
    const { files } = counted(fixtureSite().files);
    const reads: string[] = [];
    const watched: ReleaseFiles = { read: (f) => { reads.push(f); return files.read(f); } };
    await Promise.all(LOOKUPS.map(([target]) => answer(request(target), watched)));
    for (const [target] of LOOKUPS) await answer(request(target), watched);
    expect(reads.filter((f) => f === USER_NAMES_FILE)).toEqual([USER_NAMES_FILE]);
  });

  test('a release without the filter, or with one of another format, answers the same by reading the files', async () => {
    for (const filter of [() => undefined, () => new TextEncoder().encode('BLM9 a later format')]) {
      const { files, userReads } = counted(fixtureSite().files, filter);
      for (const [target, expected] of LOOKUPS) expect(await statusAndCode(files, target), target).toEqual(expected);
      expect(userReads()).toContain(userFile('nobody'));
    }
  });

  test('a failed read of the filter fails no lookup, and is tried again', async () => {
    let fail = true;
    const { files, userReads } = counted(fixtureSite().files, (b) => (fail ? Promise.reject(new Error('disk error')) : b));
    expect(await statusAndCode(files, '/api/v1/users/nobody')).toEqual([404, 'USER_NOT_FOUND']);
    expect(userReads()).toEqual([userFile('nobody')]);
    fail = false;
    expect(await statusAndCode(files, '/api/v1/users/nobody2')).toEqual([404, 'USER_NOT_FOUND']);
    expect(await statusAndCode(files, '/api/v1/users/alice')).toEqual([200, 'alice']);
    expect(userReads()).toEqual([userFile('nobody'), userFile('alice')]);
  });
});

describe('a built release on disk', () => {
  test('a kept profile is answered from the reader\'s memory, without the filter', async () => {
    const { files: disk } = await loadRelease(sharedBuild().dist);
    const reads: string[] = [];
    const files: ReleaseFiles = { read: (f) => { reads.push(f); return disk.read(f); }, kept: (f) => disk.kept(f) };
    expect(await statusAndCode(files, '/api/v1/users/bob')).toEqual([200, 'bob']);
    expect(reads).toEqual([USER_NAMES_FILE, userFile('bob')]);
    // Now kept: no filter, no read.
    expect(await statusAndCode(files, '/api/v1/users/BOB')).toEqual([200, 'bob']);
    expect(reads).toEqual([USER_NAMES_FILE, userFile('bob')]);
  });

  test('the build writes the filter; the server answers an unknown name without reading its file', async () => {
    const release = await loadRelease(sharedBuild().dist);
    const { files, userReads } = counted(release.files);
    const filter = parseNameFilter(await release.files.read(USER_NAMES_FILE))!;
    const { index } = fixtureSite();
    expect(index.users.filter((u) => !filter.has(u.username))).toEqual([]);
    for (const [target, expected] of LOOKUPS) expect(await statusAndCode(files, target), target).toEqual(expected);
    expect(userReads()).toEqual([userFile('alice'), userFile('alice'), userFile('alice')]);
  });
});
