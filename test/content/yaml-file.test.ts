// Parsing one YAML file: the cost grows with the file, not with its square.
// First: it starts V8's counters before the code it measures is compiled.
import { countOperations } from '../support/operation-count.ts';
import { describe, expect, test } from 'vitest';
import { parseYamlFile } from '../../src/content/yaml-file.ts';
import { ProfileSchema } from '../../src/schemas/index.ts';

const withPrivateKeys = (n: number) =>
  `displayName: Many\ncreatedAt: 2024-01-01T00:00:00Z\nprivate:\n${Array.from({ length: n }, (_, i) => `  note${i}: value ${i}\n`).join('')}`;

describe('parsing a YAML file', () => {
  test('work is linear in the number of keys: 4x the keys under `private:` is about 4x the operations', () => {
    const ops = (n: number) => countOperations(() => {
      expect(parseYamlFile('many.yaml', withPrivateKeys(n), ProfileSchema).ok).toBe(true);
    });
    const small = ops(1_000);
    const large = ops(4_000);
    // Linear is 4x (measured 4.2x); with the library's own duplicate check, each key against every
    // key before it, it was 14.7x.
    expect(large / small).toBeLessThan(6);
  });

  test('a key twice in a mapping is found, at any depth, with its line', () => {
    const r = parseYamlFile('d.yaml', 'displayName: A\nprivate:\n  x: 1\n  x: 2\ndisplayName: B\n', ProfileSchema);
    expect(r.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toMatchInlineSnapshot(`
      [
        "5:1 a key appears twice in the same mapping",
        "4:3 a key appears twice in the same mapping",
      ]
    `);
  });
});
