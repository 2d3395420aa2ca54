// Parsing one YAML file: the cost grows with the file, not with its square.
// First: it starts V8's counters before the code it measures is compiled.
import { countOperations } from '../support/operation-count.ts';
import { describe, expect, test } from 'vitest';
import { MAX_NESTING, MAX_YAML_PROBLEMS, parseYamlFile } from '../../src/content/yaml-file.ts';
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
        "4:3 the key \`x\` appears twice in the same mapping",
        "5:1 the key \`displayName\` appears twice in the same mapping",
      ]
    `);
  });

  test('a mapping, list or alias as a key is a problem at its place, and the library warns of nothing', () => {
    const warned: string[] = [];
    const onWarning = (w: Error) => warned.push(w.message);
    process.on('warning', onWarning);
    try {
      const r = parseYamlFile('k.yaml', '{ displayName: A }: x\nprivate:\n  ? [a, b]\n  : 1\n  list: &k [1]\n  *k : 2\n', ProfileSchema);
      expect(r.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
        '1:1 a mapping is used as a key', '3:5 a list is used as a key', '6:3 `*k` is used as a key',
      ]);
    } finally {
      process.off('warning', onWarning);
    }
    // Node emits warnings on the next tick.
    return new Promise<void>((resolve) => setImmediate(() => { expect(warned).toEqual([]); resolve(); }));
  });

  test('a file with thousands of YAML errors lists the first few and counts the rest', () => {
    // One line of commas: the library reports each one.
    const r = parseYamlFile('commas.yaml', `displayName: A\nbadges: [${', '.repeat(5_000)}]\n`, ProfileSchema);
    expect(r.ok).toBe(false);
    expect(r.problems).toHaveLength(MAX_YAML_PROBLEMS + 1);
    expect(r.problems.slice(0, MAX_YAML_PROBLEMS).every((p) => p.line === 2 && /flow sequence/.test(p.message))).toBe(true);
    const columns = r.problems.map((p) => p.column!);
    expect(columns).toEqual([...columns].sort((a, b) => a - b));
    expect(r.problems.at(-1)).toMatchObject({ file: 'commas.yaml', line: 2, message: `and ${(5_000 - MAX_YAML_PROBLEMS).toLocaleString('en')} more YAML problems from here on, not listed` });
    // As many as the cap: all listed, no count.
    const few = parseYamlFile('few.yaml', `displayName: A\nbadges: [${', '.repeat(MAX_YAML_PROBLEMS)}]\n`, ProfileSchema);
    expect(few.problems).toHaveLength(MAX_YAML_PROBLEMS);
    expect(few.problems.some((p) => /more YAML problems/.test(p.message))).toBe(false);
  });

  test('a file with thousands of schema problems lists as many as YAML problems, then counts the rest from the first not listed', () => {
    // 13,000 unknown keys in each of 300 files printed a gigabyte of problems.
    const keys = Array.from({ length: 5_000 }, (_, i) => `k${i}: 1\n`).join('');
    const r = parseYamlFile('keys.yaml', `displayName: A\ncreatedAt: 2024-01-01T00:00:00Z\n${keys}`, ProfileSchema);
    expect(r.problems).toHaveLength(MAX_YAML_PROBLEMS + 1);
    expect(r.problems.slice(0, MAX_YAML_PROBLEMS).map((p) => `${p.line} ${p.message}`)).toEqual(Array.from({ length: MAX_YAML_PROBLEMS }, (_, i) => `${i + 3} unknown key \`k${i}\``));
    expect(r.problems.at(-1)).toMatchObject({ file: 'keys.yaml', line: MAX_YAML_PROBLEMS + 3, message: `and ${(5_000 - MAX_YAML_PROBLEMS).toLocaleString('en')} more problems from here on, not listed` });
  });

  test('thousands of keys that are aliases or lists: as many listed, then counted from the first not listed', () => {
    const r = parseYamlFile('keys.yaml', `displayName: &a Alice\ncreatedAt: 2024-01-01T00:00:00Z\n${'*a : 1\n'.repeat(3_000)}`, ProfileSchema);
    expect(r.problems).toHaveLength(MAX_YAML_PROBLEMS + 1);
    expect(r.problems.slice(0, MAX_YAML_PROBLEMS).map((p) => `${p.line} ${p.message}`)).toEqual(Array.from({ length: MAX_YAML_PROBLEMS }, (_, i) => `${i + 3} \`*a\` is used as a key`));
    expect(r.problems.at(-1)).toMatchObject({ line: MAX_YAML_PROBLEMS + 3, message: `and ${(3_000 - MAX_YAML_PROBLEMS).toLocaleString('en')} more problems from here on, not listed` });
  });

  test(`nesting past ${MAX_NESTING} levels is refused every time, at its place, before the library recurses (it ran out of stack at a depth that changed from run to run)`, () => {
    const flow = (depth: number) => `displayName: A\ncreatedAt: 2024-01-01T00:00:00Z\nprivate: {a: ${'['.repeat(depth)}1${']'.repeat(depth)}}\n`;
    // The root mapping, `private`'s, then the lists: depth + 2 levels; the first list is at column 14.
    expect(parseYamlFile('ok.yaml', flow(MAX_NESTING - 2), ProfileSchema).ok).toBe(true);
    for (const depth of [MAX_NESTING - 1, 1_500, 20_000]) {
      const r = parseYamlFile('deep.yaml', flow(depth), ProfileSchema);
      expect(r.problems.map((p) => `${p.line}:${p.column} ${p.message}`), String(depth)).toEqual([`3:${14 + MAX_NESTING - 2} is nested more than ${MAX_NESTING} levels deep here`]);
    }
    // Indented levels count alike: the mapping holding `k63` is the 65th level.
    const block = `displayName: A\ncreatedAt: 2024-01-01T00:00:00Z\nprivate:\n${Array.from({ length: MAX_NESTING }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n')} 1\n`;
    expect(parseYamlFile('block.yaml', block, ProfileSchema).problems.map((p) => `${p.line} ${p.message}`)).toEqual([`${MAX_NESTING + 3} is nested more than ${MAX_NESTING} levels deep here`]);
  });
});
