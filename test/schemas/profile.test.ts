// The content format v1, rule by rule, with the messages operators read pinned.
import { describe, expect, test } from 'vitest';
import { formatProblem } from '../../src/content/problems.ts';
import { parseYamlFile } from '../../src/content/yaml-file.ts';
import { CreatorSchema, DecorationSchema, ProfileSchema, ViewsStatsSchema } from '../../src/schemas/index.ts';

const BASE = 'displayName: Alice\ncreatedAt: 2021-03-14T09:26:53Z\n';
const problems = (yaml: string, schema: import('astro/zod').z.ZodType = ProfileSchema) => {
  const r = parseYamlFile('profiles/alice.yaml', yaml, schema);
  return r.ok ? [] : r.problems.map((p) => formatProblem(p, '/'));
};
const value = (yaml: string) => {
  const r = parseYamlFile('profiles/alice.yaml', yaml, ProfileSchema);
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('; '));
  return r.value;
};

describe('profile schema', () => {
  test('a minimal profile gets every default', () => {
    expect(value(BASE)).toEqual({ displayName: 'Alice', createdAt: '2021-03-14T09:26:53Z', bio: '', views: 0, badges: [], socials: [] });
  });

  test('a file that is not one mapping of keys says what it is instead, at its line, in words', () => {
    expect(problems('displayName: A\ncreatedAt: 2024-01-01T00:00:00Z\n---\nbio: x\n')).toEqual(['profiles/alice.yaml:3:1: a second YAML document starts here (a `---` line): a content file is one document\n    hint: remove the `---` line, and merge what follows it into the keys above']);
    for (const [yaml, kind] of [['- displayName: A\n- createdAt: x\n', 'a list'], ['just a name\n', 'a line of text'], ['42\n', 'a number']]) {
      expect(problems(yaml), kind).toEqual([`profiles/alice.yaml:1:1: holds ${kind}, not keys and values\n    hint: write one \`key: value\` per line, with no \`-\` before the keys`]);
    }
    expect(problems(`displayName: ${'['.repeat(5000)}\n`)[0]).toMatch(/^profiles\/alice\.yaml:1:\d+: is nested more than 64 levels deep here\n/);
  });

  test('displayName is required, 1-64 characters counted as people count them', () => {
    expect(problems('createdAt: 2021-03-14T09:26:53Z\n')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:1 \`displayName\`: missing required key \`displayName\`
          hint: add a \`displayName:\` line; its value must be text",
      ]
    `);
    expect(problems(`displayName: "  "\ncreatedAt: 2021-03-14T09:26:53Z\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:14 \`displayName\`: must not be empty",
      ]
    `);
    expect(problems(`displayName: "${'x'.repeat(65)}"\ncreatedAt: 2021-03-14T09:26:53Z\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:14 \`displayName\`: must be at most 64 characters",
      ]
    `);
    // 64 emoji are 128 UTF-16 units but 64 characters: allowed.
    expect(value(`displayName: "${'🌸'.repeat(64)}"\ncreatedAt: 2021-03-14T09:26:53Z\n`).displayName).toHaveLength(128);
    expect(problems(`displayName: "a\\u0007b"\ncreatedAt: 2021-03-14T09:26:53Z\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:14 \`displayName\`: must be one line without control characters",
      ]
    `);
    // Unicode's line and paragraph separators break a line too, raw or escaped.
    for (const sep of ['\\u2028', '\\u2029', '\u2028']) {
      expect(problems(`displayName: "a${sep}b"\ncreatedAt: 2021-03-14T09:26:53Z\n`), sep).toEqual(['profiles/alice.yaml:1:14 `displayName`: must be one line without control characters']);
    }
    expect(value(`${BASE}bio: "one\\u2028two"\n`).bio).toBe('one\u2028two');
  });

  test('bio is text of at most 1000 characters, newlines allowed', () => {
    expect(value(`${BASE}bio: "line one\\nline two"\n`).bio).toBe('line one\nline two');
    expect(problems(`${BASE}bio: "${'b'.repeat(1001)}"\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:6 \`bio\`: must be at most 1000 characters",
      ]
    `);
    expect(problems(`${BASE}bio: 42\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:6 \`bio\`: must be text",
      ]
    `);
  });

  test('createdAt is an ISO 8601 date-time with a zone', () => {
    expect(value('displayName: A\ncreatedAt: 2022-07-04T15:30:00+02:00\n').createdAt).toBe('2022-07-04T15:30:00+02:00');
    expect(problems('displayName: A\ncreatedAt: 2021-03-14\n')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:2:12 \`createdAt\`: must be an ISO 8601 date-time with a zone, like \`2021-03-14T09:26:53Z\` or \`2021-03-14T11:26:53+02:00\`",
      ]
    `);
    expect(problems('displayName: A\ncreatedAt: 2021-03-14T09:26:53\n')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:2:12 \`createdAt\`: must be an ISO 8601 date-time with a zone, like \`2021-03-14T09:26:53Z\` or \`2021-03-14T11:26:53+02:00\`",
      ]
    `);
    expect(problems(`${BASE}views: 99999999999999999999\n`)).toEqual(['profiles/alice.yaml:3:8 `views`: must be at most 9,007,199,254,740,991']);
    expect(problems(`${BASE}views: 1.5\n`)).toEqual(['profiles/alice.yaml:3:8 `views`: must be a whole number >= 0']);
    for (const bad of ['2025-13-01T00:00:00Z', '2025-01-01T25:00:00Z', '2025-02-29T00:00:00+01:00']) {
      expect(problems(`displayName: A\ncreatedAt: ${bad}\n`)[0], bad).toMatch(/names none that exists/);
    }
    expect(problems('displayName: A\ncreatedAt: 2021-02-30T09:26:53Z\n')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:2:12 \`createdAt\`: is written as a date-time but names none that exists: check the day of the month (February has 28, or 29 in a leap year), the month (01-12), the hour (00-23) and the minutes and seconds (00-59)",
      ]
    `);
  });

  test('createdAt and suspension.at are in the years 1970 to 9999, in UTC as published', () => {
    // Each date's UTC instant, as answers publish it, has a four-digit year: RFC 3339, OpenAPI's `date-time`.
    for (const ok of ['1970-01-01T00:00:00Z', '1970-01-02T00:00:00+23:59', '9999-12-31T23:59:59.999Z', '9999-12-30T23:59:59-23:59', '9999-12-31T23:59:59-00:00']) {
      expect(new Date(value(`displayName: A\ncreatedAt: ${ok}\n`).createdAt).toISOString(), ok).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(value(`${BASE}suspension:\n  reason: spam\n  at: ${ok}\n`).suspension?.at, ok).toBe(ok);
    }
    expect(problems('displayName: A\ncreatedAt: 9999-12-31T23:59:59-23:59\n')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:2:12 \`createdAt\`: must be in the years 1970 to 9999, and in UTC (\`Z\`) on 1970-01-01 and 9999-12-31: answers publish it in UTC with a four-digit year",
      ]
    `);
    expect(problems('displayName: A\ncreatedAt: 0000-01-01T00:00:00+01:00\n')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:2:12 \`createdAt\`: must be in the years 1970 to 9999, and in UTC (\`Z\`) on 1970-01-01 and 9999-12-31: answers publish it in UTC with a four-digit year",
      ]
    `);
    expect(problems(`${BASE}suspension:\n  reason: spam\n  at: 1970-01-01T00:30:00+01:00\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:5:7 \`suspension.at\`: must be in the years 1970 to 9999, and in UTC (\`Z\`) on 1970-01-01 and 9999-12-31: answers publish it in UTC with a four-digit year",
      ]
    `);
    expect(problems('displayName: A\ncreatedAt: 1969-12-31T23:59:59Z\n')).toHaveLength(1);
    // Not a date at all: the format's message only.
    expect(problems('displayName: A\ncreatedAt: yesterday\n')).toHaveLength(1);
  });

  test('avatar is a plain image file name', () => {
    expect(value(`${BASE}avatar: alice.png\n`).avatar).toBe('alice.png');
    expect(problems(`${BASE}avatar: ../secret.png\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:9 \`avatar\`: must be a plain file name in content/avatars/ ending in .png, .jpg, .jpeg, .gif, .webp, .avif",
      ]
    `);
    expect(problems(`${BASE}avatar: alice.svg\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:9 \`avatar\`: must be a plain file name in content/avatars/ ending in .png, .jpg, .jpeg, .gif, .webp, .avif",
      ]
    `);
  });

  test('customDomain is a bare host name, folded to lowercase', () => {
    expect(value(`${BASE}customDomain: Alice.Example.com\n`).customDomain).toBe('alice.example.com');
    expect(problems(`${BASE}customDomain: https://alice.example.com\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:15 \`customDomain\`: must be a bare host name like \`alice.example.com\`: no \`https://\`, path or port",
      ]
    `);
    expect(problems(`${BASE}customDomain: alice.example.com:8080\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:15 \`customDomain\`: must be a bare host name like \`alice.example.com\`: no \`https://\`, path or port",
      ]
    `);
    expect(problems(`${BASE}customDomain: localhost\n`)).toHaveLength(1);
  });

  test('views is a whole number >= 0', () => {
    expect(value(`${BASE}views: 12\n`).views).toBe(12);
    expect(problems(`${BASE}views: -1\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:8 \`views\`: must be a whole number >= 0",
      ]
    `);
    expect(problems(`${BASE}views: 1.5\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:8 \`views\`: must be a whole number >= 0",
      ]
    `);
    expect(problems(`${BASE}views: "12"\n`)).toHaveLength(1);
  });

  test('badges are verified, official or helper, each once', () => {
    expect(value(`${BASE}badges: [helper, verified]\n`).badges).toEqual(['helper', 'verified']);
    expect(problems(`${BASE}badges: [verified, staff]\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:20 \`badges[1]\`: must be one of \`verified\`, \`official\`, \`helper\`",
      ]
    `);
    expect(problems(`${BASE}badges: [verified, verified]\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:9 \`badges\`: must not list a badge twice",
      ]
    `);
    expect(problems(`${BASE}badges: verified\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:9 \`badges\`: must be a list, like \`[verified, helper]\`",
      ]
    `);
  });

  test('decoration is an id', () => {
    expect(value(`${BASE}decoration: sakura\n`).decoration).toBe('sakura');
    expect(problems(`${BASE}decoration: sakura.yaml\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:13 \`decoration\`: must be the id of a file in content/decorations/ (its name without \`.yaml\`)",
      ]
    `);
  });

  test('socials are { platform, url } with a lowercase platform and an http(s) URL, in file order', () => {
    const v = value(`${BASE}socials:\n  - platform: youtube\n    url: https://youtube.com/@a\n  - platform: github\n    url: http://github.com/a\n`);
    expect(v.socials.map((s) => s.platform)).toEqual(['youtube', 'github']);
    expect(problems(`${BASE}socials:\n  - platform: GitHub\n    url: https://github.com/a\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:4:15 \`socials[0].platform\`: must be a lowercase platform name like \`github\` (a-z, 0-9, \`.\`, \`-\`)",
      ]
    `);
    expect(problems(`${BASE}socials:\n  - platform: x\n    url: javascript:alert(1)\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:5:10 \`socials[0].url\`: must be a full \`https://\` or \`http://\` address with a host name, like \`https://github.com/alice\` (not an IP address or a name without a dot, like \`localhost\`)",
      ]
    `);
    expect(problems(`${BASE}socials:\n  - platform: x\n    url: ftp://example.com/a\n`)).toHaveLength(1);
    // A user name or password before the host: the address goes where the part after `@` says.
    for (const url of ['https://github.com@evil.example/', 'https://user:pass@example.net/', 'http://:x@example.net']) {
      expect(problems(`${BASE}socials:\n  - platform: github\n    url: ${url}\n`), url).toEqual([
        'profiles/alice.yaml:5:10 `socials[0].url`: must not hold a user name or password before the host (`name@`): `https://github.com@evil.example` goes to evil.example',
      ]);
    }
    // The address alone, or a suspension's reason on its line: what to write instead, at its line.
    expect(problems(`${BASE}socials: [https://github.com/a]\n`)).toEqual(['profiles/alice.yaml:3:11 `socials[0]`: must be a link of two lines, `- platform: github` and under it `url: https://github.com/alice`, not the address alone']);
    expect(problems(`${BASE}suspension: banned\n`)).toEqual(['profiles/alice.yaml:3:13 `suspension`: must be keys indented under `suspension:`: `reason: spam` and `at: 2024-05-01T12:00:00Z` (and `message:` if you like), not a value on its line']);
    // A backslash: browsers go to evil.example, Python's urlsplit to github.com.
    for (const url of ['"https://evil.example\\\\@github.com/"', 'https://github.com/a\\b']) {
      expect(problems(`${BASE}socials:\n  - platform: github\n    url: ${url}\n`), url).toEqual([
        'profiles/alice.yaml:5:10 `socials[0].url`: must not contain `\\` (browsers read it as `/`, other programs do not, so the address names two hosts): percent-encode it (`%5C`)',
      ]);
    }
    expect(value(`${BASE}socials:\n  - platform: mastodon\n    url: https://mastodon.social/@alice\n`).socials[0]!.url).toBe('https://mastodon.social/@alice');
    for (const url of ['https://127.0.0.1/x', 'http://localhost/x']) expect(problems(`${BASE}socials:\n  - platform: x\n    url: ${url}\n`)[0], url).toMatch(/not an IP address or a name without a dot/);
    expect(problems(`${BASE}socials:\n  - platform: github\n    link: https://github.com/a\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:4:5 \`socials[0].url\`: missing required key \`url\`
          hint: add a \`url:\` line; its value must be a full \`https://\` or \`http://\` address with a host name, like \`https://github.com/alice\` (not an IP address or a name without a dot, like \`localhost\`)",
        "profiles/alice.yaml:5:5 \`socials[0].link\`: unknown key \`link\`
          hint: the keys allowed here are \`platform\`, \`url\`",
      ]
    `);
  });

  test('text carries no bidirectional controls or lone surrogates; a name must show (invisible characters alone are empty)', () => {
    const name = (yaml: string) => problems(`displayName: "${yaml}"\ncreatedAt: 2021-03-14T09:26:53Z\n`);
    expect([...name('\\u200b\\u2060\\ufeff'), ...name('\\u3164\\u3164'), ...name('\\u0301\\u0301')]).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:14 \`displayName\`: must not be empty",
        "profiles/alice.yaml:1:14 \`displayName\`: must not be empty",
        "profiles/alice.yaml:1:14 \`displayName\`: must not be empty",
      ]
    `);
    expect([...name('evil\\u202egnp.exe'), ...name('a\\ud800b')]).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:14 \`displayName\`: must not contain bidirectional control characters (U+202A-202E, U+2066-2069): they change how the text around them reads",
        "profiles/alice.yaml:1:14 \`displayName\`: must not contain a lone surrogate (a \`\\uD800\`-\`\\uDFFF\` escape without its pair): it is no character",
      ]
    `);
    expect(problems(`${BASE}bio: "x\\udc00"\n`)).toHaveLength(1);
    // Right-to-left names keep their marks; a letter with marks shows; an emoji sequence with joiners shows.
    for (const ok of ['\\u200fنور حداد', 'e\\u0301', '👩\\u200d💻']) expect(name(ok), ok).toEqual([]);
  });

  test('a social URL carries no control, space or bidirectional character, not even where the URL parser would take it', () => {
    const url = (u: string) => problems(`${BASE}socials:\n  - platform: x\n    url: "${u}"\n`);
    expect([...url('https://x.com/a\\u0000b'), ...url('https://x.com/a\\u0085'), ...url('https://x.com/\\u202emoc.live')]).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:5:10 \`socials[0].url\`: must not contain spaces, control, invisible or bidirectional control characters: percent-encode them (\`%20\`)",
        "profiles/alice.yaml:5:10 \`socials[0].url\`: must not contain spaces, control, invisible or bidirectional control characters: percent-encode them (\`%20\`)",
        "profiles/alice.yaml:5:10 \`socials[0].url\`: must not contain spaces, control, invisible or bidirectional control characters: percent-encode them (\`%20\`)",
      ]
    `);
    expect(url('https://x.com/%E2%80%AE')).toEqual([]);
  });

  test('suspension needs a reason and a date; the message is optional', () => {
    expect(value(`${BASE}suspension:\n  reason: spam\n  at: 2025-06-30T18:45:00Z\n`).suspension).toEqual({ reason: 'spam', at: '2025-06-30T18:45:00Z' });
    expect(problems(`${BASE}suspension:\n  message: gone\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:4:3 \`suspension.reason\`: missing required key \`reason\`
          hint: add a \`reason:\` line; its value must be text",
        "profiles/alice.yaml:4:3 \`suspension.at\`: missing required key \`at\`
          hint: add an \`at:\` line; its value must be an ISO 8601 date-time with a zone, like \`2021-03-14T09:26:53Z\` or \`2021-03-14T11:26:53+02:00\`",
      ]
    `);
  });

  test('private holds any mapping, and nothing else is allowed', () => {
    expect(value(`${BASE}private:\n  email: a@example.com\n  ids: [1, 2]\n`).private).toEqual({ email: 'a@example.com', ids: [1, 2] });
    expect(problems(`${BASE}private: just a note\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:10 \`private\`: must be a mapping of notes (\`key: value\` lines)",
      ]
    `);
  });

  test('an unknown key is an error that suggests the right one', () => {
    expect(problems('dispalyName: Alice\ncreatedAt: 2021-03-14T09:26:53Z\n')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:1 \`displayName\`: missing required key \`displayName\`
          hint: add a \`displayName:\` line; its value must be text",
        "profiles/alice.yaml:1:1 \`dispalyName\`: unknown key \`dispalyName\`
          hint: did you mean \`displayName\`?",
      ]
    `);
    expect(problems(`${BASE}twitter: alice\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:1 \`twitter\`: unknown key \`twitter\`
          hint: the keys allowed here are \`displayName\`, \`bio\`, \`createdAt\`, \`avatar\`, \`customDomain\`, \`views\`, \`badges\`, \`decoration\`, \`socials\`, \`suspension\`, \`private\`",
      ]
    `);
  });
});

describe('YAML hazards', () => {
  test('duplicate keys', () => {
    expect(problems(`${BASE}views: 1\nviews: 2\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:4:1: the key \`views\` appears twice in the same mapping
          hint: keep one of them: YAML would silently use only one",
      ]
    `);
  });
  test('custom tags', () => {
    expect(problems(`${BASE}bio: !!js/function "x"\n`)).toHaveLength(1);
    expect(problems(`${BASE}bio: !shout hello\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:6: custom YAML tags are not allowed (Unresolved tag: !shout)
          hint: remove the \`!tag\` and write a plain value",
      ]
    `);
  });
  test('a %YAML 1.1 directive', () => {
    expect(problems(`%YAML 1.1\n---\n${BASE}`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:1: the \`%YAML 1.1\` directive is not supported: in YAML 1.1 words like \`no\` and \`on\` turn into booleans
          hint: remove the directive; content files are YAML 1.2",
      ]
    `);
  });
  test('an alias bomb fails fast', () => {
    const bomb = `${BASE}private:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n  d: [${Array(60).fill('*c').join(', ')}]\n`;
    expect(problems(bomb)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:5:10: its aliases (\`*name\`) make more than 50 copies in all (an alias of a value holding aliases copies those again)
          hint: write the values out: profiles need no aliases",
      ]
    `);
  });
  test('syntax errors name the line', () => {
    expect(problems(`${BASE}bio: "unterminated\n`)[0]).toMatch(/^profiles\/alice\.yaml:[34]:\d+: YAML syntax/);
  });
  test('an empty file', () => {
    expect(problems('')).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:1: the file is empty
          hint: write the keys as \`key: value\` lines",
      ]
    `);
  });
  test('__proto__ and constructor keys are unknown keys, and pollute nothing', () => {
    expect(problems(`${BASE}__proto__:\n  polluted: true\n`)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:3:1 \`__proto__\`: unknown key \`__proto__\`
          hint: the keys allowed here are \`displayName\`, \`bio\`, \`createdAt\`, \`avatar\`, \`customDomain\`, \`views\`, \`badges\`, \`decoration\`, \`socials\`, \`suspension\`, \`private\`",
      ]
    `);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('creator, decoration and stats schemas', () => {
  test('creator: category required, featured defaults to false', () => {
    const r = parseYamlFile('creators/alice.yaml', 'category: art\n', CreatorSchema);
    expect(r.ok && r.value).toEqual({ category: 'art', featured: false });
    expect(problems('featured: yes\n', CreatorSchema)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:1 \`category\`: missing required key \`category\`
          hint: add a \`category:\` line; its value must be text",
        "profiles/alice.yaml:1:11 \`featured\`: must be \`true\` or \`false\`",
      ]
    `);
  });
  test('decoration: name and an image file', () => {
    const r = parseYamlFile('decorations/sakura.yaml', 'name: Sakura\nfile: sakura.png\n', DecorationSchema);
    expect(r.ok && r.value).toEqual({ name: 'Sakura', file: 'sakura.png' });
    expect(problems('name: Sakura\nfile: ../../etc/passwd\n', DecorationSchema)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:2:7 \`file\`: must be a plain image file name beside this file, ending in .png, .jpg, .jpeg, .gif, .webp, .avif",
      ]
    `);
  });
  test('views stats: username: count', () => {
    const r = parseYamlFile('stats/views.yaml', 'dave: 1337\n', ViewsStatsSchema);
    expect(r.ok && r.value).toEqual({ dave: 1337 });
    expect(problems('Dave: -3\n', ViewsStatsSchema)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:1:1: \`Dave\` must be a username: 1 to 32 characters of a-z, 0-9, \`_\` and \`-\`, starting with a letter or digit",
      ]
    `);
  });
  test('views stats: a key YAML reads as a number, boolean or null is refused; quoted it is kept', () => {
    expect(problems('dave: 1\n012: 5\n1e3: 2\ntrue: 3\n', ViewsStatsSchema)).toMatchInlineSnapshot(`
      [
        "profiles/alice.yaml:2:1: the key \`012\` is read as the number \`12\`, not as text
          hint: put it in quotes, \`"012":\`, to keep it as written",
        "profiles/alice.yaml:3:1: the key \`1e3\` is read as the number \`1000\`, not as text
          hint: put it in quotes, \`"1e3":\`, to keep it as written",
        "profiles/alice.yaml:4:1: the key \`true\` is read as the boolean \`true\`, not as text
          hint: put it in quotes, \`"true":\`, to keep it as written",
      ]
    `);
    const r = parseYamlFile('stats/views.yaml', '"012": 5\n"12": 4\n\'true\': 1\n', ViewsStatsSchema);
    expect(r.ok && r.value).toEqual({ '012': 5, '12': 4, true: 1 });
  });
});
