// `npm run new:profile`: the script run for real in a temporary content folder.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadContent } from '../../src/content/load.ts';
import { parseYamlFile } from '../../src/content/yaml-file.ts';
import { ProfileSchema } from '../../src/schemas/index.ts';
import { ROOT, copyFixture } from '../support/helpers.ts';

let work = '';
let content = '';

beforeAll(() => {
  ({ parent: work, content } = copyFixture('new-profile'));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Runs the script from the temp folder, so the paths it prints are `content/profiles/...`. */
function newProfile(args: string[], contentDir = content) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'new-profile.ts'), ...args], {
    cwd: work, encoding: 'utf8', env: { ...process.env, CONTENT_DIR: contentDir },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** The createdAt the script wrote, as `<now>`: it changes every run. */
const withoutNow = (text: string) => {
  const now = /(?:createdAt: |created )(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)/.exec(text)?.[1];
  return now ? text.replaceAll(now, '<now>') : text;
};

describe('new:profile writes a valid profile', () => {
  // Made once for the tests below, which each read it, in any order.
  let before = 0;
  let r: ReturnType<typeof newProfile>;
  beforeAll(() => {
    before = Math.floor(Date.now() / 1000) * 1000;
    r = newProfile(['ada_l', '--display-name', 'Ada Lovelace 🧮']);
  });

  test('the file passes loadContent and the JSON Schema, created now in UTC', () => {
    expect(r.status, r.stderr).toBe(0);
    expect(withoutNow(r.stdout)).toMatchInlineSnapshot(`
      "Created content/profiles/ada_l.yaml (ada_l, created <now>).
      Uncomment the keys you need, then run \`npm run check\`. The profile appears at /p/ada_l after the next build.
      "
    `);

    const { content: loaded, problems } = loadContent(content);
    expect(problems).toEqual([]);
    const profile = loaded.profiles.get('ada_l')!;
    expect(profile.displayName).toBe('Ada Lovelace 🧮');
    expect(Date.parse(profile.createdAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(profile.createdAt)).toBeLessThanOrEqual(Date.now());
    expect(profile.createdAt).toMatch(/Z$/);

    const text = fs.readFileSync(path.join(content, 'profiles', 'ada_l.yaml'), 'utf8');
    const ajv = new Ajv2020();
    ajv.addKeyword('patternErrorMessage');
    ajv.addKeyword('errorMessage');
    ajv.addKeyword('doNotSuggest');
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(ROOT, 'public', 'schemas', 'profile.schema.json'), 'utf8')));
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
  });

  test('its first line points the editor at the schema, relative to the file', () => {
    const text = fs.readFileSync(path.join(content, 'profiles', 'ada_l.yaml'), 'utf8');
    const first = text.split('\n')[0]!;
    expect(first).toMatch(/^# yaml-language-server: \$schema=\S+$/);
    const target = path.resolve(content, 'profiles', first.split('$schema=')[1]!);
    expect(target).toBe(path.join(ROOT, 'public', 'schemas', 'profile.schema.json'));
  });

  test('in the default content folder the schema path is ../../public/schemas/profile.schema.json', () => {
    const r = spawnSync(process.execPath, ['scripts/new-profile.ts', 'someone-new', '--dry-run'], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, CONTENT_DIR: '' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('# yaml-language-server: $schema=../../public/schemas/profile.schema.json');
  });

  test('every optional key is there as a commented example, and uncommented they are valid too', () => {
    // `ada_l` has an underscore, which the customDomain example must leave out: host names have none.
    const text = fs.readFileSync(path.join(content, 'profiles', 'ada_l.yaml'), 'utf8');
    const uncommented = text.split('\n').map((l) => l.replace(/^# (?=[a-z][A-Za-z]*:(?: |$)| {2})/, '')).join('\n');
    const r = parseYamlFile('ada_l.yaml', uncommented, ProfileSchema);
    expect(r.ok ? [] : r.problems).toEqual([]);
    expect(Object.keys(parse(uncommented)).sort()).toEqual(Object.keys(ProfileSchema.shape).sort());
  });

  test('--dry-run prints the file and writes nothing', () => {
    const r = newProfile(['grace', '--dry-run']);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.existsSync(path.join(content, 'profiles', 'grace.yaml'))).toBe(false);
    const schemaPath = path.relative(path.join(content, 'profiles'), path.join(ROOT, 'public', 'schemas', 'profile.schema.json'));
    expect(withoutNow(r.stdout).replace(schemaPath, '<schema>')).toMatchInlineSnapshot(`
      "# yaml-language-server: $schema=<schema>
      # The profile \`grace\`: /p/grace and /api/v1/users/grace once built. \`npm run check\` validates it.
      # Optional keys are commented out below: remove the \`# \` in front of a key (and its indented lines) to use it.

      # The name shown for the profile: 1-64 characters, any Unicode (an emoji counts as one).
      displayName: "grace"
      # When the account was created: ISO 8601 with a zone, e.g. \`2021-03-14T09:26:53Z\` or
      # \`2022-07-04T15:30:00+02:00\`.
      createdAt: <now>

      # About the person, shown as plain text (never as markup); newlines allowed, at most 1000
      # characters.
      # bio: "First line.\\nSecond line."

      # An image file in \`content/avatars/\`, e.g. \`alice.png\` (.png, .jpg, .jpeg, .gif, .webp, .avif; no
      # SVG). Without one, a generated image with the initial is shown.
      # avatar: grace.png

      # A bare host name that serves this profile, e.g. \`alice.example.com\`: no \`https://\`, path or port.
      # \`pageUrl\` becomes \`https://<customDomain>\`.
      # customDomain: grace.example.com

      # Page views, a whole number >= 0. A count for this profile in \`content/stats/views.yaml\` replaces
      # it.
      # views: 0

      # Badges shown on the profile, each at most once: \`verified\`, \`official\`, \`helper\`. E.g.
      # \`[verified, helper]\`.
      # badges: [verified]

      # An avatar frame: the id of \`content/decorations/<id>.yaml\` (its file name without \`.yaml\`), e.g.
      # \`sakura\`.
      # decoration: sakura

      # Links to the profile elsewhere, at most 32, shown in this order: a list of \`{ platform, url }\`.
      # socials:
      #   - platform: github
      #     url: https://github.com/grace

      # Present when the profile is suspended: \`{ reason, message?, at }\`. The profile is still published,
      # with its page showing the message instead of its bio and links.
      # suspension:
      #   reason: spam
      #   message: "This profile is suspended."
      #   at: <now>

      # The operator's own notes (contact e-mail, an internal id), any \`key: value\` lines. Never published
      # anywhere.
      # private:
      #   email: someone@example.com

      Dry run: content/profiles/grace.yaml was not written.
      "
    `);
  });
});

describe('new:profile refuses', () => {
  test('an existing name', () => {
    const r = newProfile(['alice']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "new:profile: content/profiles/alice.yaml already exists
          hint: edit that file, or pick another username
      "
    `);
  });

  test('a name that exists in another casing or as .yml', () => {
    const dir = path.join(work, 'cased');
    fs.mkdirSync(path.join(dir, 'profiles'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'profiles', 'Zed.yaml'), 'displayName: Zed\ncreatedAt: 2021-03-14T09:26:53Z\n');
    fs.writeFileSync(path.join(dir, 'profiles', 'yann.yml'), 'displayName: Yann\ncreatedAt: 2021-03-14T09:26:53Z\n');
    const zed = newProfile(['zed'], dir);
    expect(zed.status).toBe(1);
    expect(zed.stderr).toMatchInlineSnapshot(`
      "new:profile: cased/profiles/Zed.yaml already exists, and differs from \`zed.yaml\` only in case or extension
          hint: edit or rename that file; usernames are lowercase, one file per name
      "
    `);
    const yann = newProfile(['yann'], dir);
    expect(yann.status).toBe(1);
    expect(yann.stderr).toMatchInlineSnapshot(`
      "new:profile: cased/profiles/yann.yml already exists, and differs from \`yann.yaml\` only in case or extension
          hint: edit or rename that file; usernames are lowercase, one file per name
      "
    `);
    expect(fs.readdirSync(path.join(dir, 'profiles')).sort()).toEqual(['Zed.yaml', 'yann.yml']);
  });

  test('an invalid name, with the rule and a fix when there is one', () => {
    for (const name of ['Bob', '@carol', 'bob.html', '_under', 'x'.repeat(33), 'ünï']) {
      const r = newProfile([name]);
      expect(r.status, name).toBe(1);
      expect(fs.existsSync(path.join(content, 'profiles', `${name}.yaml`)), name).toBe(false);
    }
    expect(newProfile(['Bob']).stderr).toMatchInlineSnapshot(`
      "new:profile: \`Bob\` is not a valid username: a username is 1 to 32 characters of a-z, 0-9, \`_\` and \`-\`, starting with a letter or digit.
          hint: \`bob\` is a profile already: edit its file, or pick another username
      "
    `);
    // When the lowercase name is free, it is the fix.
    expect(newProfile(['Zoe']).stderr).toMatch(/hint: use `zoe`\n/);
    expect(newProfile(['bob.html']).stderr).toMatchInlineSnapshot(`
      "new:profile: \`bob.html\` is not a valid username: a username is 1 to 32 characters of a-z, 0-9, \`_\` and \`-\`, starting with a letter or digit.
          hint: no dots, spaces or capitals: letters a-z, digits, \`_\` and \`-\`
      "
    `);
  });

  test('a name the site keeps for itself', () => {
    const r = newProfile(['index']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "new:profile: \`index\` is a name the site keeps for itself: \`p/index.html\` is the folder page of \`/p/\`: the profile page would answer at \`/p\`, not \`/p/index\`
          hint: choose another, e.g. \`index-1\`
      "
    `);
    expect(fs.existsSync(path.join(content, 'profiles', 'index.yaml'))).toBe(false);
  });

  test('a display name the schema refuses, before writing anything', () => {
    const r = newProfile(['henry', '--display-name', 'x'.repeat(65)]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "new:profile: --display-name must be at most 64 characters. Nothing was written.
      "
    `);
    expect(fs.existsSync(path.join(content, 'profiles', 'henry.yaml'))).toBe(false);
  });

  test('wrong usage is exit code 2', () => {
    expect(newProfile([])).toMatchObject({ status: 2 });
    expect(newProfile(['a', 'b'])).toMatchObject({ status: 2 });
    expect(newProfile(['a', '--colour'])).toMatchObject({ status: 2 });
  });

  test('a missing content folder', () => {
    const r = newProfile(['ivy'], path.join(work, 'nowhere'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "new:profile: the content folder nowhere does not exist
          hint: run this in the project folder, or set CONTENT_DIR
      "
    `);
  });
});
