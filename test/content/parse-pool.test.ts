// The threads that parse profile files (src/content/profile-files.ts `ParsePool`) are fed no faster
// than they parse: the text read and not yet parsed stays bounded, whatever the files weigh.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { loadContentFast } from '../../src/content/load.ts';
import { FIXTURE } from '../support/helpers.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs();

/** The fixture and `count` profiles of about 120 KiB each (a long private note), under the 128 KiB limit. */
function heavyContent(count: number): { dir: string; chars: number } {
  const dir = path.join(tempDir('parse-pool-'), 'content');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  const note = Array.from({ length: 2_100 }, (_, i) => `    line ${i} of a long private note, and nothing more`).join('\n');
  let chars = 0;
  for (let i = 0; i < count; i++) {
    const text = `displayName: Heavy ${i}\ncreatedAt: 2021-03-14T09:26:53Z\nprivate:\n  note: |\n${note}\n`;
    chars += text.length;
    fs.writeFileSync(path.join(dir, 'profiles', `heavy${i}.yaml`), text);
  }
  return { dir, chars };
}

test('reading waits for parsing: the text in flight stays within the bound (and an eighth for the message being filled), every file parsed', async () => {
  const { dir, chars } = heavyContent(120);
  const limit = 2 * 1024 * 1024;
  // Left to choose, one core parses in this thread: nothing in flight to bound.
  for (const workers of os.availableParallelism() > 1 ? [2, undefined] : [2]) {
    const r = await loadContentFast(dir, { workers, textInFlight: limit });
    expect(r.problems).toEqual([]);
    expect(r.content.profiles.size).toBe(120 + fs.readdirSync(path.join(FIXTURE, 'profiles')).length);
    // 14 MB read in all; at most the bound, a message's eighth and the file read last in flight.
    expect(chars).toBeGreaterThan(6 * limit);
    expect(r.stats.mostTextInFlight, String(workers)).toBeLessThanOrEqual(limit * 1.25 + 130 * 1024);
    // Without workers asked for (a few heavy files), the text waits in this thread until it is worth threads.
    expect(r.stats.workers, String(workers)).toBe(2);
  }
}, 60_000);
