// What VS Code's YAML extension marks, against what `npm run check` reports, on the same files:
// yaml-language-server runs over LSP with the generated schemas (each file names its schema on its
// first line, as `npm run new:profile` writes it), and `npm run check` runs as a process. Every
// problem the check finds is marked by the editor on the same line with the same message, unless
// it is listed in CHECK_ONLY; and the editor marks nothing else.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { LineCounter, isMap, isScalar, parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { validationCacheFile } from '../../src/config.ts';
import { ProfileSchema } from '../../src/schemas/index.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';
import { YamlLanguageServer, type Diagnostic } from './yaml-language-server.ts';

/** What only `npm run check` can find, with why. Matched on `<file> <key path>: <message>` of the check. */
const CHECK_ONLY: { problem: RegExp; why: string }[] = [
  { problem: /: `.*` is not a valid name: /, why: 'the file name is not part of the document' },
  { problem: /: content files end in `\.yaml`$/, why: 'the file name is not part of the document' },
  { problem: /: the avatar `.*` is not in `avatars\/`$/, why: 'another file must exist' },
  { problem: /: no decoration `.*` in `decorations\/`$/, why: 'another file must exist' },
  { problem: /: the image `.*` is not in `decorations\/`$/, why: 'another file must exist' },
  { problem: /: there is no profile `.*` for this creator$/, why: 'another file must exist' },
  { problem: /: the file is empty$/, why: 'yaml-language-server does not validate an empty document against its schema' },
  { problem: /: the `%YAML 1\.1` directive is not supported/, why: 'YAML, not data: yaml-language-server accepts the directive silently' },
  { problem: /: its aliases \(`\*name`\) make more than/, why: 'YAML, not data: a limit of our parser' },
  {
    problem: /^profiles\/lars\.yaml socials\[0\]\.url: must be a full `https:\/\/`/,
    why: 'the host is checked on the parsed URL (WHATWG: international names, percent-escapes, `\\` as `/`), which a pattern cannot follow',
  },
];

/**
 * A key two edits from an allowed one: the check says "did you mean", the editor lists the allowed
 * keys (a pattern for two edits would take kilobytes per key). Matched like CHECK_ONLY.
 */
const HINT_DIFFERS: { problem: RegExp; editor: string }[] = [
  { problem: /^profiles\/lars\.yaml dsplayNme: unknown key/, editor: `unknown key: the keys allowed here are ${Object.keys(ProfileSchema.shape).map((k) => `\`${k}\``).join(', ')}` },
];
const where = (p: CheckProblem) => `${p.file} ${p.keyPath ?? '-'}: ${p.message}`;

/**
 * Where yaml-language-server words a problem itself: it shows no `errorMessage` for `uniqueItems`,
 * `minimum` and `maxItems`, and YAML problems are its own. The check's message → the editor's.
 */
const EDITOR_WORDING: { check: RegExp; editor: string }[] = [
  { check: /^must not list a badge twice$/, editor: 'Array has duplicate items.' },
  { check: /^must be a whole number >= 0$/, editor: 'Value is below the minimum of 0.' },
  { check: /^must have at most 32 links$/, editor: 'Array has too many items. Expected 32 or fewer.' },
  { check: /^the key `[^`]*` appears twice in the same mapping$/, editor: 'Map keys must be unique' },
  { check: /^the key `.*` is read as .*, not as text$/, editor: 'Incorrect type. Expected "string".' },
  { check: /^custom YAML tags are not allowed \((Unresolved tag: .*)\)$/, editor: '$1' },
];

const schemaLine = (kind: string) => `# yaml-language-server: $schema=${pathToFileURL(path.join(ROOT, 'public', 'schemas', `${kind}.schema.json`)).href}\n`;
const KIND: Record<string, string> = { profiles: 'profile', creators: 'creator', decorations: 'decoration', stats: 'views' };

/** Bad files: each line says what `npm run check` finds in it. */
const BAD: Record<string, string> = {
  'profiles/olga.yaml': `\
dispalyName: Olga                      # unknown key, did you mean displayName; displayName missing
createdAt: 2021-03-14                  # no time
badges: [verified, verified]           # twice
socials:
  - platform: GitHub                   # capitals
    url: github.com/olga               # no scheme
views: -1
decoration: Sakura
avatar: olga.svg
customDomain: https://olga.example.com
`,
  'profiles/pete.yaml': `\
displayName: "   "
bio: "${'x'.repeat(1001)}"
createdAt: 2021-03-14T09:26:53Z
badges: [gold]
socials:
  - platform: github
    url: ftp://example.com/pete
    handle: pete                        # far from every key: the allowed keys are listed
suspension:
  message: Spam.
  at: yesterday
  reasn: spam
`,
  'profiles/dora.yaml': `\
displayName: "${'🌸'.repeat(65)}"
createdAt: 2021-03-14T09:26:53Z
bio: "one\\u0007bell"
badges: verified
private: notes
socials:
${Array.from({ length: 33 }, (_, i) => `  - { platform: site, url: "https://example.com/${i}" }`).join('\n')}
`,
  'profiles/emil.yaml': `\
displayName: "Emil\\tTab"
DisplayName: Emil
createdAt: 2021-03-14T09:26:53Z
`,
  'profiles/jo.yaml': 'displayName: Jo\ncreatedAt: 2021-03-14T09:26:53Z\ncreatedAt: 2021-03-15T09:26:53Z\n',
  'profiles/rita.yaml': 'displayName: Rita\ncreatedAt: 9999-12-31T23:59:59-23:59\nsuspension:\n  reason: spam\n  at: 0000-01-01T00:00:00+01:00\n',
  'profiles/quin.yaml': 'displayName: Quin\ncreatedAt: 2021-03-14T09:26:53Z\nprivate:\n  007: agent\n  true: yes\n',
  'profiles/Eve.yaml': 'displayName: Eve\ncreatedAt: 2021-03-14T09:26:53Z\n',
  'profiles/fritz.yaml': 'displayName: Fritz\ncreatedAt: 2021-03-14T09:26:53Z\navatar: fritz.png\n',
  'profiles/gus.yaml': 'displayName: Gus\ncreatedAt: 2021-03-14T09:26:53Z\ndecoration: moon\n',
  'profiles/hana.yaml': 'displayName: !shout Hana\ncreatedAt: 2021-03-14T09:26:53Z\n',
  'profiles/ivy.yaml': '',
  'profiles/kim.yml': 'displayName: Kim\ncreatedAt: 2021-03-14T09:26:53Z\n',
  'profiles/lars.yaml': `\
displayName: Lars
createdAt: 2021-03-14T09:26:53Z
dsplayNme: Lars
socials:
  - platform: site
    url: https://under_score.example/lars
`,
  'profiles/max.yaml': '%YAML 1.1\n---\ndisplayName: Max\ncreatedAt: 2021-03-14T09:26:53Z\n',
  'profiles/nils.yaml': `displayName: &n Nils\ncreatedAt: 2021-03-14T09:26:53Z\nprivate:\n${Array.from({ length: 51 }, (_, i) => `  a${i}: *n`).join('\n')}\n`,
  'creators/olga.yaml': 'category: ""\nfeatured: yes\nfeaturd: true\n',
  'creators/pete.yaml': `category: "${'x'.repeat(65)}"\n`,
  'creators/nobody.yaml': 'category: art\n',
  'decorations/neon.yaml': 'nmae: Neon\nfile: neon.svg\n',
  'decorations/moon.yaml': 'name: Moon\nfile: moon.png\n',
  'stats/views.yaml': 'dave: 1337\nAlice: 3\nkate: -1\n012: 4\n',
};

/** Good files beyond the fixture: edges where the editor must agree that nothing is wrong. */
const GOOD: Record<string, string> = {
  'profiles/mia.yaml': `\
displayName: "${'🌸'.repeat(64)}"
bio: "Line one\\n\\tindented line two"
createdAt: 2022-07-04T15:30:00+02:00
customDomain: Mia.Example.COM
badges: [helper, verified]
socials:
  - platform: mastodon
    url: HTTPS://social.example/@mia
  - platform: blog
    url: http://mia.example.com/
private:
  anything: [goes, here]
`,
};

interface Found { file: string; line?: number; message: string }
interface CheckProblem extends Found { keyPath?: string; hint?: string }

let dir: string;
let check: { problems: CheckProblem[]; status: number | null };
let editor: Map<string, Found[]>;
let server: YamlLanguageServer;
const contents = new Map<string, string>();

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'editor-diagnostics-'));
  fs.cpSync(FIXTURE, dir, { recursive: true });
  // Every YAML file names its schema on its first line, as the editor needs it.
  for (const sub of Object.keys(KIND)) {
    for (const name of fs.readdirSync(path.join(dir, sub)).filter((n) => n.endsWith('.yaml'))) {
      contents.set(`${sub}/${name}`, fs.readFileSync(path.join(dir, sub, name), 'utf8'));
    }
  }
  for (const [file, text] of Object.entries({ ...GOOD, ...BAD })) contents.set(file, text);
  for (const [file, text] of contents) {
    const withSchema = schemaLine(KIND[file.split('/')[0]!]!) + text;
    contents.set(file, withSchema);
    fs.writeFileSync(path.join(dir, file), withSchema);
  }

  server = new YamlLanguageServer({ validate: true, schemaStore: { enable: false }, kubernetesCRDStore: { enable: false } });
  const [checked] = await Promise.all([
    runCheck(dir),
    server.start(pathToFileURL(dir).href),
  ]);
  check = checked;
  editor = new Map(await Promise.all([...contents].map(async ([file, text]) => {
    const diagnostics = await server.open(pathToFileURL(path.join(dir, file)).href, text);
    return [file, diagnostics.map((d: Diagnostic) => ({ file, line: d.range.start.line + 1, message: d.message }))] as const;
  })));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (!dir) return;
  fs.rmSync(dir, { recursive: true, force: true });
  // The check writes its validation cache even when told not to read it.
  fs.rmSync(validationCacheFile(ROOT, dir), { force: true });
});

/** `npm run check` on the folder, its problems read back from the text format (`file:line:col \`key\`: message` and `hint:`). */
async function runCheck(folder: string) {
  // PROFILES_INCREMENTAL=0: no validation cache, so every file is read as it is now.
  const r = await new Promise<{ stderr: string; status: number | null }>((resolve) => {
    const child = execFile(process.execPath, [path.join(ROOT, 'scripts', 'check-content.ts'), folder, '--format', 'text'], {
      cwd: folder, encoding: 'utf8', timeout: 30_000, env: { ...process.env, PROFILES_INCREMENTAL: '0', GITHUB_ACTIONS: '' },
    }, (_error, _stdout, stderr) => resolve({ stderr, status: child.exitCode }));
  });
  const problems: CheckProblem[] = [];
  for (const line of r.stderr.split('\n')) {
    const hint = /^ {4}hint: (.*)$/.exec(line);
    if (hint) { problems.at(-1)!.hint = hint[1]; continue; }
    const m = /^([^\s:]+?)(?::(\d+):\d+)?(?: `([^`]*)`)?: (.*)$/.exec(line);
    if (m && !line.startsWith('warning: ')) problems.push({ file: m[1]!, line: m[2] ? Number(m[2]) : undefined, keyPath: m[3], message: m[4]! });
  }
  return { problems, status: r.status };
}

/** What the editor should show for a problem the check found: the same line and message, with these exceptions. */
function expectedInEditor(p: CheckProblem): Found {
  const differs = HINT_DIFFERS.find((h) => h.problem.test(where(p)));
  if (differs) return { file: p.file, line: p.line, message: differs.editor };
  const unknown = /^unknown key `/.test(p.message);
  if (unknown) {
    return { file: p.file, line: p.line, message: `unknown key: ${p.hint}` };
  }
  const missing = /^missing required key `(.*)`$/.exec(p.message);
  if (missing) {
    // The editor marks the key of the mapping that lacks it (the check, the mapping's first line).
    return { file: p.file, line: keyLine(p.file, p.keyPath!.split('.').slice(0, -1)) ?? p.line, message: `Missing property "${missing[1]}".` };
  }
  const badKey = /^`[^`]*` (.*)$/.exec(p.message);
  if (badKey) return { file: p.file, line: p.line, message: badKey[1]! };
  const wording = EDITOR_WORDING.find((w) => w.check.test(p.message));
  return { file: p.file, line: p.line, message: wording ? p.message.replace(wording.check, wording.editor) : p.message };
}

/** The line of the key at `keys` (undefined for the document itself). */
function keyLine(file: string, keys: string[]): number | undefined {
  if (!keys.length) return undefined;
  const lineCounter = new LineCounter();
  const doc = parseDocument(contents.get(file)!, { lineCounter });
  const parent = keys.length > 1 ? doc.getIn(keys.slice(0, -1), true) : doc.contents;
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((i) => isScalar(i.key) && i.key.value === keys.at(-1));
  return pair && isScalar(pair.key) ? lineCounter.linePos(pair.key.range![0]).line : undefined;
}

const sorted = (list: Found[]) => list.map((f) => `${f.file}:${f.line ?? '-'} ${f.message}`).sort();

describe('the editor (yaml-language-server) and `npm run check` on the same files', () => {
  test('the check fails on the bad files, and on nothing else', () => {
    expect(check.status).toBe(1);
    const files = new Set(check.problems.map((p) => p.file));
    expect([...files].sort()).toEqual(Object.keys(BAD).sort());
  });

  test('good files: no problem in the check, no mark in the editor', () => {
    const good = [...contents.keys()].filter((f) => !(f in BAD));
    expect(good.length).toBeGreaterThan(10);
    for (const file of good) expect(editor.get(file), file).toEqual([]);
  });

  test('every problem JSON Schema can express is marked on its line, with the same message, and nothing more', () => {
    const expressible = check.problems.filter((p) => !CHECK_ONLY.some((c) => c.problem.test(where(p))));
    const marked = [...editor.values()].flat();
    expect(sorted(marked)).toEqual(sorted(expressible.map(expectedInEditor)));
  });

  test('each check-only kind listed occurs in the bad files, so the list stays exact', () => {
    for (const { problem } of [...CHECK_ONLY, ...HINT_DIFFERS]) expect(check.problems.some((p) => problem.test(where(p))), String(problem)).toBe(true);
    for (const { check: message } of EDITOR_WORDING) expect(check.problems.some((p) => message.test(p.message)), String(message)).toBe(true);
  });

  test('the quick fix on a misspelt key writes the key the hint names', async () => {
    const uri = pathToFileURL(path.join(dir, 'profiles/olga.yaml')).href;
    const diagnostic = server.diagnostics.get(uri)!.find((d) => d.message.startsWith('unknown key'))!;
    const actions = await server.request('textDocument/codeAction', { textDocument: { uri }, range: diagnostic.range, context: { diagnostics: [diagnostic] } }) as { title: string; edit: unknown }[];
    expect(actions.map((a) => a.title)).toEqual(['displayName']);
    expect(JSON.stringify(actions[0]!.edit)).toContain(JSON.stringify({ range: diagnostic.range, newText: 'displayName' }));
  });

  test('completion offers the keys not yet written, and no free-form key', async () => {
    const uri = pathToFileURL(path.join(dir, 'profiles', 'completing.yaml')).href;
    await server.open(uri, `${schemaLine('profile')}displayName: Zoe\n\n`);
    const result = await server.request('textDocument/completion', { textDocument: { uri }, position: { line: 2, character: 0 } }) as { items: { label: string }[] };
    const labels = result.items.map((i) => i.label);
    expect(labels).toEqual(expect.arrayContaining(Object.keys(ProfileSchema.shape).filter((k) => k !== 'displayName')));
    expect(labels).not.toContain('displayName');
    expect(labels).not.toContain('property');
  });

  test('the issue\'s cases are marked: duplicate badges, a URL without a scheme, a misspelt key with its hint', () => {
    expect(editor.get('profiles/olga.yaml')!.map((d) => `${d.line} ${d.message}`).sort()).toMatchInlineSnapshot(`
      [
        "10 must be a plain file name in content/avatars/ ending in .png, .jpg, .jpeg, .gif, .webp, .avif",
        "11 must be a bare host name like \`alice.example.com\`: no \`https://\`, path or port",
        "2 Missing property "displayName".",
        "2 unknown key: did you mean \`displayName\`?",
        "3 must be an ISO 8601 date-time with a zone, like \`2021-03-14T09:26:53Z\` or \`2021-03-14T11:26:53+02:00\`",
        "4 Array has duplicate items.",
        "6 must be a lowercase platform name like \`github\` (a-z, 0-9, \`.\`, \`-\`)",
        "7 must be a full \`https://\` or \`http://\` address with a host name, like \`https://github.com/alice\` (not an IP address or a name without a dot, like \`localhost\`)",
        "8 Value is below the minimum of 0.",
        "9 must be the id of a file in content/decorations/ (its name without \`.yaml\`)",
      ]
    `);
  });
});
