// The content folder as a whole: checks across files, file names, every problem reported at once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { formatProblem, formatProblemGithub, visible } from '../../src/content/problems.ts';
import fc from 'fast-check';
import { forEachViewCount, loadContent, viewCountOf, viewCounts } from '../../src/content/load.ts';
import { FIXTURE } from '../support/helpers.ts';

const made: string[] = [];
afterEach(() => { for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

/** A copy of the fixture content with some files replaced (null deletes). */
function contentWith(files: Record<string, string | null>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'content-test-'));
  made.push(dir);
  fs.cpSync(FIXTURE, dir, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    if (text === null) fs.rmSync(file);
    else { fs.mkdirSync(path.dirname(file), { recursive: true }); fs.writeFileSync(file, text); }
  }
  return dir;
}
const report = (dir: string) => loadContent(dir).problems.map((p) => formatProblem(p, dir));

describe('loading content', () => {
  test('the fixture loads with no problem, profiles in username order', () => {
    const { content, problems } = loadContent(FIXTURE);
    expect(problems).toEqual([]);
    expect([...content.profiles.keys()]).toEqual(['alice', 'bob', 'carol', 'dave', 'erin_99', 'frank', 'kate']);
    expect(content.views.get('dave')).toBe(1337);
    expect(content.decorations.get('sakura')).toEqual({ id: 'sakura', name: 'Sakura Petals', file: 'sakura.png' });
  });

  test('a missing folder is one clear problem', () => {
    expect(loadContent('/nonexistent/content').problems.map((p) => p.message)).toEqual(['the content folder does not exist']);
  });

  test('every problem in every file is reported at once, in file and line order', () => {
    const dir = contentWith({
      'profiles/bob.yaml': 'displayName: Bob\ncreatedAt: yesterday\nvews: 3\n',
      'profiles/erin_99.yaml': 'displayName: ""\ncreatedAt: 2021-01-01T00:00:00Z\n',
    });
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "profiles/bob.yaml:2:12 \`createdAt\`: must be an ISO 8601 date-time with a zone, like \`2021-03-14T09:26:53Z\` or \`2021-03-14T11:26:53+02:00\`",
        "profiles/bob.yaml:3:1 \`vews\`: unknown key \`vews\`
          hint: did you mean \`views\`?",
        "profiles/erin_99.yaml:1:14 \`displayName\`: must not be empty",
      ]
    `);
  });
});

describe('checks across files', () => {
  test('the avatar file exists', () => {
    expect(report(contentWith({ 'profiles/bob.yaml': 'displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\navatar: alice.jpg\n' }))).toMatchInlineSnapshot(`
      [
        "profiles/bob.yaml:3:9 \`avatar\`: the avatar \`alice.jpg\` is not in \`avatars/\`
          hint: did you mean \`alice.png\`?",
      ]
    `);
  });
  test('a custom domain serves one profile, and never the site\'s own host', () => {
    const dir = contentWith({ 'profiles/bob.yaml': 'displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\ncustomDomain: Alice.Example.com\n' });
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:5:15 \`customDomain\`: the custom domain \`alice.example.com\` is also \`bob\`'s: a domain serves one profile
          hint: remove the key here or in profiles/bob.yaml",
        "profiles/bob.yaml:3:15 \`customDomain\`: the custom domain \`alice.example.com\` is also \`alice\`'s: a domain serves one profile
          hint: remove the key here or in profiles/alice.yaml",
      ]
    `);
    const own = contentWith({ 'profiles/bob.yaml': 'displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\ncustomDomain: profiles.example.net\n' });
    expect(loadContent(own, { siteUrl: 'https://profiles.example.net' }).problems.map((p) => formatProblem(p, own))).toMatchInlineSnapshot(`
      [
        "profiles/bob.yaml:3:15 \`customDomain\`: \`profiles.example.net\` is this site's own host (SITE_URL), not a custom domain
          hint: remove the key: the profile is at /p/<username> on this site already",
      ]
    `);
    expect(loadContent(own).problems).toEqual([]);
  });
  test('the site\'s host with a trailing dot or with `www.` is not a custom domain either', () => {
    const claims = (domain: string, siteUrl: string) => {
      const dir = contentWith({ 'profiles/bob.yaml': `displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\ncustomDomain: ${domain}\n` });
      return loadContent(dir, { siteUrl }).problems.map((p) => formatProblem(p, dir));
    };
    expect(claims('profiles.example.net', 'https://profiles.example.net.')).toMatchInlineSnapshot(`
      [
        "profiles/bob.yaml:3:15 \`customDomain\`: \`profiles.example.net\` is this site's own host (SITE_URL), not a custom domain
          hint: remove the key: the profile is at /p/<username> on this site already",
      ]
    `);
    expect(claims('www.profiles.example.net', 'https://profiles.example.net')).toMatchInlineSnapshot(`
      [
        "profiles/bob.yaml:3:15 \`customDomain\`: \`www.profiles.example.net\` is this site's own host (SITE_URL) with \`www.\`, not a custom domain
          hint: remove the key: the profile is at /p/<username> on this site already",
      ]
    `);
    expect(claims('example.net', 'https://www.example.net/')).toMatchInlineSnapshot(`
      [
        "profiles/bob.yaml:3:15 \`customDomain\`: \`example.net\` is this site's own host (SITE_URL) without \`www.\`, not a custom domain
          hint: remove the key: the profile is at /p/<username> on this site already",
      ]
    `);
    expect(claims('alice.profiles.example.net', 'https://profiles.example.net')).toEqual([]);
  });
  test('the decoration exists', () => {
    expect(report(contentWith({ 'profiles/bob.yaml': 'displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\ndecoration: sakra\n' }))).toMatchInlineSnapshot(`
      [
        "profiles/bob.yaml:3:13 \`decoration\`: no decoration \`sakra\` in \`decorations/\`
          hint: did you mean \`sakura\`?",
      ]
    `);
  });
  test("a decoration's image exists", () => {
    expect(report(contentWith({ 'decorations/sakura.png': null }))).toMatchInlineSnapshot(`
      [
        "decorations/sakura.yaml:2:7 \`file\`: the image \`sakura.png\` is not in \`decorations/\`
          hint: put the image beside this file, or fix the name (it is case-sensitive)",
        "profiles/alice.yaml:8:13 \`decoration\`: no decoration \`sakura\` in \`decorations/\`
          hint: add decorations/sakura.yaml or remove the key",
        "profiles/dave.yaml:6:13 \`decoration\`: no decoration \`sakura\` in \`decorations/\`
          hint: add decorations/sakura.yaml or remove the key",
      ]
    `);
  });
  test('a creator has a profile', () => {
    expect(report(contentWith({ 'creators/bobb.yaml': 'category: art\n' }))).toMatchInlineSnapshot(`
      [
        "creators/bobb.yaml: there is no profile \`bobb\` for this creator
          hint: did you mean \`bob.yaml\`?",
      ]
    `);
  });
  test('file names follow the username rule', () => {
    expect(report(contentWith({ 'profiles/Zed.yaml': 'displayName: Zed\ncreatedAt: 2024-11-02T00:00:00Z\n' }))).toMatchInlineSnapshot(`
      [
        "profiles/Zed.yaml: \`Zed\` is not a valid name: 1 to 32 characters of a-z, 0-9, \`_\` and \`-\`, starting with a letter or digit
          hint: rename the file to \`zed.yaml\`",
      ]
    `);
    expect(report(contentWith({ 'profiles/bob.html.yaml': 'displayName: B\ncreatedAt: 2024-11-02T00:00:00Z\n' }))).toMatchInlineSnapshot(`
      [
        "profiles/bob.html.yaml: \`bob.html\` is not a valid name: 1 to 32 characters of a-z, 0-9, \`_\` and \`-\`, starting with a letter or digit
          hint: rename the file to follow the rule",
      ]
    `);
    expect(report(contentWith({ 'profiles/bob2.YAML': 'displayName: Bob\ncreatedAt: 2024-11-02T00:00:00Z\n' }))).toEqual(['profiles/bob2.YAML: content files end in `.yaml`\n    hint: rename it to `bob2.yaml`']);
    expect(report(contentWith({ 'profiles/zed.yml': 'displayName: Zed\ncreatedAt: 2024-11-02T00:00:00Z\n' }))).toMatchInlineSnapshot(`
      [
        "profiles/zed.yml: content files end in \`.yaml\`
          hint: rename it to \`zed.yaml\`",
      ]
    `);
  });
  test('YAML where nothing reads it but surely meant to be read (below profiles/, a misspelt folder) is refused; a repository\'s own files are not', () => {
    const P = 'displayName: Zed\ncreatedAt: 2024-11-02T00:00:00Z\n';
    expect(report(contentWith({
      'profiles/sub/zed.yaml': P, 'creators/old/bob.yaml': 'featured: true\n', 'profile/yan.yaml': P, 'Creators/x.yml': 'a: 1\n',
      // Left alone: the top of the folder, hidden folders, folders named unlike the format's, non-YAML files.
      'docker-compose.yaml': 'a: 1\n', '.github/workflows/site.yml': 'on: push\n', 'docs/config.yaml': 'a: 1\n', 'profile/README.md': '# notes\n',
    }))).toMatchInlineSnapshot(`
      [
        "creators/old/bob.yaml: is in a folder below \`creators/\`, where no file is read
          hint: move it into \`creators/\` itself",
        "Creators/x.yml: is in \`Creators/\`, a folder the site does not read
          hint: did you mean \`creators/\`? Move it there",
        "profile/yan.yaml: is in \`profile/\`, a folder the site does not read
          hint: did you mean \`profiles/\`? Move it there",
        "profiles/sub/zed.yaml: is in a folder below \`profiles/\`, where no file is read
          hint: move it into \`profiles/\` itself",
      ]
    `);
  });

  test('a profile named like a file the site writes for itself (`index`) is refused, as a creator too', () => {
    const profile = 'displayName: Index\ncreatedAt: 2021-03-14T09:26:53Z\n';
    const dir = contentWith({ 'profiles/index.yaml': profile, 'creators/index.yaml': 'category: art\n' });
    expect(report(dir)).toMatchInlineSnapshot(`
      [
        "creators/index.yaml: \`index\` is a name the site keeps for itself: \`p/index.html\` is the folder page of \`/p/\`: the profile page would answer at \`/p\`, not \`/p/index\`
          hint: rename the file, e.g. to \`index-1.yaml\` or \`theindex.yaml\`",
        "profiles/index.yaml: \`index\` is a name the site keeps for itself: \`p/index.html\` is the folder page of \`/p/\`: the profile page would answer at \`/p\`, not \`/p/index\`
          hint: rename the file, e.g. to \`index-1.yaml\` or \`theindex.yaml\`",
      ]
    `);
    expect(loadContent(dir).content.profiles.has('index')).toBe(false);
    // Only the whole name: one that starts with it is anyone's.
    expect(loadContent(contentWith({ 'profiles/index-1.yaml': profile })).problems).toEqual([]);
  });
  test('a views key YAML reads as a number is refused, not counted for another profile', () => {
    const dir = contentWith({ 'profiles/12.yaml': 'displayName: Twelve\ncreatedAt: 2021-03-14T09:26:53Z\n', 'stats/views.yaml': 'dave: 5\n012: 9\n' });
    const r = loadContent(dir);
    expect(r.problems.map((p) => formatProblem(p, dir))).toEqual([
      'stats/views.yaml:2:1: the key `012` is read as the number `12`, not as text\n    hint: put it in quotes, `"012":`, to keep it as written',
    ]);
    expect(r.content.views.get('12')).toBeUndefined();
  });
  test('views for a missing profile are a warning, not a failure', () => {
    const dir = contentWith({ 'stats/views.yaml': 'dave: 5\nghost: 9\n' });
    const r = loadContent(dir);
    expect(r.problems).toEqual([]);
    expect(r.warnings.map((w) => w.message)).toEqual(['views for `ghost`, who has no profile, are ignored']);
    expect(r.content.views.get('dave')).toBe(5);
  });
});

describe('problem formats', () => {
  test('GitHub annotations put the problem on its line', () => {
    const line = formatProblemGithub({ file: 'content/profiles/bob.yaml', line: 3, column: 1, keyPath: 'vews', message: 'unknown key `vews`', hint: 'did you mean `views`?' });
    expect(line).toBe('::error file=content/profiles/bob.yaml,line=3,col=1::`vews`: unknown key `vews` (did you mean `views`?)');
  });

  test('control characters a key or file name brings are written out in the plain form: an escape sequence cannot rewrite the terminal, a line break forge a line', () => {
    const key = '\u001b[1G\u001b[2KContent OK: 8 profiles.\u001b[8m';
    const dir = contentWith({ 'profiles/esc.yaml': `displayName: X\ncreatedAt: 2021-03-14T09:26:53Z\n"${key.replace(/\u001b/g, '\\e')}": 1\n`, 'profiles/b\n::warning::X\u0007.yaml': 'displayName: X\n' });
    const printed = loadContent(dir).problems.map((p) => formatProblem(p, dir));
    expect(printed.length).toBeGreaterThanOrEqual(2);
    for (const line of printed) expect(line, JSON.stringify(line)).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    // One problem per line and a hint line: the name's line break is text.
    for (const line of printed) expect(line.split('\n').slice(1).every((l) => l.startsWith('    hint: ')), line).toBe(true);
    expect(printed.join('\n')).toContain('\\e[1G\\e[2KContent OK: 8 profiles.\\e[8m');
    expect(printed.join('\n')).toContain('profiles/b\\n::warning::X\\x07.yaml');
  });

  test('a file name from a pull request cannot add properties or end them in a GitHub annotation', () => {
    // Names a contributor can commit: each tries to set `title`, close the properties early, or start a new command line.
    const names = ['a,title=Approved.yaml', 'b::warning file=x::c.yaml', 'd%0Ae,line=1.yaml', 'f\n::error file=g::h.yaml', 'i\r,col=9.yaml'];
    const dir = contentWith(Object.fromEntries(names.map((n) => [`profiles/${n}`, 'displayName: X\ncreatedAt: 2021-03-14T09:26:53Z\n'])));
    const problems = loadContent(dir).problems.filter((p) => names.some((n) => p.file.endsWith(n)));
    expect(problems.map((p) => path.basename(p.file)).sort()).toEqual([...names].sort());
    for (const p of problems) {
      const annotation = formatProblemGithub(p, dir);
      const parsed = parseWorkflowCommand(annotation);
      expect(parsed, annotation).toEqual({
        command: 'error',
        properties: { file: path.relative(dir, p.file), ...(p.line ? { line: String(p.line), col: String(p.column ?? 1) } : {}) },
        data: expect.stringContaining(visible(p.message)),
      });
    }
  });
});

/**
 * One line of stdout as the GitHub runner reads a workflow command (actions/runner ActionCommand.TryParseV2):
 * `::name k=v,k=v::data`, properties split at `,` then at the first `=`, each value and the data unescaped.
 */
function parseWorkflowCommand(line: string) {
  expect(line).not.toMatch(/[\r\n]/);
  const end = line.indexOf('::', 2);
  if (!line.startsWith('::') || end < 0) throw new Error(`not a workflow command: ${line}`);
  const info = line.slice(2, end);
  const space = info.indexOf(' ');
  const name = space < 0 ? info : info.slice(0, space);
  const unescapeData = (s: string) => s.replace(/%0D/gi, '\r').replace(/%0A/gi, '\n').replace(/%25/g, '%');
  const unescapeProperty = (s: string) => unescapeData(s.replace(/%3A/gi, ':').replace(/%2C/gi, ','));
  const properties: Record<string, string> = {};
  for (const pair of (space < 0 ? '' : info.slice(space + 1)).split(',').filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq > 0) properties[pair.slice(0, eq)] = unescapeProperty(pair.slice(eq + 1));
  }
  return { command: name, properties, data: unescapeData(line.slice(end + 2)) };
}

describe('view counts as the validation cache keeps them', () => {
  test('a look-up by name gives the count of the file, or none, scanning or past 16 look-ups by a Map', () => {
    // Names as strangers write them too: a space, a colon, `!` or a username inside a key names no profile.
    const name = fc.oneof(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), fc.stringMatching(/^[a-z0-9_ :!-]{0,12}$/));
    fc.assert(fc.property(fc.dictionary(name, fc.oneof(fc.nat(), fc.integer())), fc.array(name, { maxLength: 40 }), (stats, asked) => {
      const counts = viewCounts(stats);
      const listed: [string, number][] = [];
      forEachViewCount(counts, (n, count) => listed.push([n, count]));
      // Each entry once, in order; a name a username could be kept as it is.
      expect(listed.map(([, count]) => count)).toEqual(Object.values(stats));
      expect(listed.filter(([n]) => /^[a-z0-9_-]+$/.test(n))).toEqual(Object.entries(stats).filter(([n]) => /^[a-z0-9_-]+$/.test(n)));
      const countOf = viewCountOf(counts);
      // Every name of the file and the asked ones, in an order that crosses the 16th look-up.
      for (const n of [...asked, ...Object.keys(stats)].filter((k) => /^[a-z0-9_-]+$/.test(k))) expect(countOf(n)).toBe(Object.hasOwn(stats, n) ? stats[n] : undefined);
      // A key with a space or a colon is found by no name, its own included.
      for (const n of Object.keys(stats).filter((k) => /[ :]/.test(k))) expect(countOf(n)).toBeUndefined();
    }), { numRuns: 300 });
  });
});
