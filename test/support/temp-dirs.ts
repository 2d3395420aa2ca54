// Temporary folders of a test file, each removed after the test that made it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/** A maker of temporary folders (named `<prefix>XXXXXX`) for the calling test file; call it at the file's top level. */
export function tempDirs(): (prefix: string) => string {
  const made: string[] = [];
  afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });
  return (prefix) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
