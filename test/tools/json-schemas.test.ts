// The JSON Schema files editors use (public/schemas/*.schema.json): generated from src/schemas,
// committed up to date, and agreeing with the Zod schemas on real content.
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { describe, expect, test } from 'vitest';
import { JSON_SCHEMA_DIR, caseInsensitiveSource, contentJsonSchemas, oneEditAway } from '../../src/tools/json-schemas.ts';
import { CreatorSchema, DecorationSchema, ProfileSchema, ViewsStatsSchema } from '../../src/schemas/index.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

const files = contentJsonSchemas();
const json = (file: string) => JSON.parse(files.find((f) => f.file === file)!.text);

// verbose: errors carry their schema, for the message VS Code would show.
const ajv = new Ajv2020({ allErrors: true, verbose: true });
// The messages yaml-language-server shows instead of its own: not validation keywords.
ajv.addKeyword('patternErrorMessage');
ajv.addKeyword('errorMessage');
ajv.addKeyword('doNotSuggest');
addFormats(ajv);
const validators = {
  profile: ajv.compile(json('profile.schema.json')),
  creator: ajv.compile(json('creator.schema.json')),
  decoration: ajv.compile(json('decoration.schema.json')),
  views: ajv.compile(json('views.schema.json')),
};
const errorsOf = (kind: keyof typeof validators, data: unknown) => {
  const validate = validators[kind];
  if (validate(data)) return [];
  // `if` and `propertyNames` only wrap the message of the branch that failed.
  return validate.errors!.filter((e) => e.keyword !== 'if' && e.keyword !== 'propertyNames').map((e) => {
    const message = (e.keyword === 'pattern' && e.parentSchema?.patternErrorMessage) || ((e.keyword === 'type' || e.keyword === 'enum') && e.parentSchema?.errorMessage) || e.message;
    return `${e.instancePath || '/'} ${message}${'additionalProperty' in e.params ? `: ${e.params.additionalProperty}` : ''}`;
  });
};
const MINIMAL = { displayName: 'Alice', createdAt: '2021-03-14T09:26:53Z' };

describe('the committed schema files', () => {
  test.each(files.map((f) => f.file))('%s is up to date with src/schemas (else run `npm run schemas`)', (file) => {
    const onDisk = fs.readFileSync(path.join(ROOT, JSON_SCHEMA_DIR, file), 'utf8');
    expect(onDisk, `${JSON_SCHEMA_DIR}/${file} is stale: run \`npm run schemas\` and commit it`).toBe(files.find((f) => f.file === file)!.text);
  });

  test('there is one file per content kind, and nothing else in the folder', () => {
    expect(fs.readdirSync(path.join(ROOT, JSON_SCHEMA_DIR)).sort()).toEqual(files.map((f) => f.file).sort());
  });

  test('every key has a description for the editor hover', () => {
    const { properties } = json('profile.schema.json');
    for (const [key, s] of Object.entries<{ description?: string }>(properties)) expect(s.description, key).toBeTruthy();
    for (const [key, s] of Object.entries<{ description?: string }>(properties.socials.items.properties)) expect(s.description, key).toBeTruthy();
    for (const [key, s] of Object.entries<{ description?: string }>(properties.suspension.properties)) expect(s.description, key).toBeTruthy();
    for (const file of ['creator.schema.json', 'decoration.schema.json']) {
      for (const [key, s] of Object.entries<{ description?: string }>(json(file).properties)) expect(s.description, `${file} ${key}`).toBeTruthy();
    }
  });

  // yaml-language-server reads 2020-12, but older YAML extensions and other editors implement
  // draft-07. These keywords mean the same in both, so the files work there too.
  test('only keywords that mean the same in draft-07 and 2020-12', () => {
    const allowed = new Set([
      '$schema', '$comment', 'title', 'description', 'default', 'type', 'properties', 'required', 'additionalProperties',
      'propertyNames', 'items', 'maxItems', 'uniqueItems', 'enum', 'pattern', 'format', 'minimum', 'maximum', 'maxLength',
      'allOf', 'if', 'then', 'else', 'patternErrorMessage', 'errorMessage', 'doNotSuggest',
    ]);
    const used = new Set<string>();
    const walk = (node: unknown, inProperties = false) => {
      if (!node || typeof node !== 'object' || Array.isArray(node)) return;
      for (const [k, v] of Object.entries(node)) {
        if (!inProperties) used.add(k);
        walk(v, !inProperties && k === 'properties');
      }
    };
    for (const f of files) walk(JSON.parse(f.text));
    expect([...used].filter((k) => !allowed.has(k))).toEqual([]);
  });
});

describe('the profile schema', () => {
  test('the fixture and sample profiles pass, as they pass the Zod schema', () => {
    for (const dir of [FIXTURE, path.join(ROOT, 'content')]) {
      for (const name of fs.readdirSync(path.join(dir, 'profiles'))) {
        const data = parse(fs.readFileSync(path.join(dir, 'profiles', name), 'utf8'));
        expect(ProfileSchema.safeParse(data).success, name).toBe(true);
        expect(errorsOf('profile', data), name).toEqual([]);
      }
    }
  });

  test('an unknown key fails, as in `npm run check`', () => {
    expect(errorsOf('profile', { ...MINIMAL, dispalyName: 'x' })).toMatchInlineSnapshot(`
      [
        "/ unknown key: did you mean \`displayName\`?",
      ]
    `);
    expect(errorsOf('profile', { ...MINIMAL, socials: [{ platform: 'github', url: 'https://github.com/a', handle: 'a' }] })).toMatchInlineSnapshot(`
      [
        "/socials/0 unknown key: the keys allowed here are \`platform\`, \`url\`",
      ]
    `);
  });

  test('required keys, enums and patterns fail, with our own messages where VS Code shows them', () => {
    expect(errorsOf('profile', { displayName: 'Alice' })).toMatchInlineSnapshot(`
      [
        "/ must have required property 'createdAt'",
      ]
    `);
    expect(errorsOf('profile', { ...MINIMAL, badges: ['gold'], decoration: 'Sakura', createdAt: '2021-03-14' })).toMatchInlineSnapshot(`
      [
        "/createdAt must be an ISO 8601 date-time with a zone, like \`2021-03-14T09:26:53Z\` or \`2021-03-14T11:26:53+02:00\`",
        "/createdAt must match format "date-time"",
        "/badges/0 must be one of \`verified\`, \`official\`, \`helper\`",
        "/decoration must be the id of a file in content/decorations/ (its name without \`.yaml\`)",
      ]
    `);
    expect(json('profile.schema.json').properties.avatar.patternErrorMessage).toMatchInlineSnapshot(`"must be a plain file name in content/avatars/ ending in .png, .jpg, .jpeg, .gif, .webp, .avif"`);
  });

  test('an avatar extension in capitals passes, as Zod allows it', () => {
    for (const avatar of ['alice.PNG', 'alice.Jpeg', 'a.webp']) {
      expect(ProfileSchema.safeParse({ ...MINIMAL, avatar }).success, avatar).toBe(true);
      expect(errorsOf('profile', { ...MINIMAL, avatar }), avatar).toEqual([]);
    }
    for (const avatar of ['alice.svg', '../alice.png', 'alice.pngx']) {
      expect(ProfileSchema.safeParse({ ...MINIMAL, avatar }).success, avatar).toBe(false);
      expect(errorsOf('profile', { ...MINIMAL, avatar }), avatar).not.toEqual([]);
    }
  });

  test('customDomain in any case passes (the Zod schema lowercases it)', () => {
    expect(errorsOf('profile', { ...MINIMAL, customDomain: 'Alice.Example.com' })).toEqual([]);
  });
});

describe('the other schemas', () => {
  test('fixture creators, decorations and view counts pass', () => {
    for (const [kind, sub, schema] of [['creator', 'creators', CreatorSchema], ['decoration', 'decorations', DecorationSchema]] as const) {
      for (const dir of [FIXTURE, path.join(ROOT, 'content')]) {
        for (const name of fs.readdirSync(path.join(dir, sub)).filter((n) => n.endsWith('.yaml'))) {
          const data = parse(fs.readFileSync(path.join(dir, sub, name), 'utf8'));
          expect(schema.safeParse(data).success, name).toBe(true);
          expect(errorsOf(kind, data), name).toEqual([]);
        }
      }
    }
    const views = parse(fs.readFileSync(path.join(FIXTURE, 'stats', 'views.yaml'), 'utf8'));
    expect(ViewsStatsSchema.safeParse(views).success).toBe(true);
    expect(errorsOf('views', views)).toEqual([]);
  });

  test('bad values fail', () => {
    expect(errorsOf('creator', { category: 'art', featured: 'yes' })).toMatchInlineSnapshot(`
      [
        "/featured must be \`true\` or \`false\`",
      ]
    `);
    expect(errorsOf('decoration', { name: 'Neon', file: 'neon.svg' })).toMatchInlineSnapshot(`
      [
        "/file must be a plain image file name beside this file, ending in .png, .jpg, .jpeg, .gif, .webp, .avif",
      ]
    `);
    expect(errorsOf('views', { Alice: 3, bob: -1 })).toMatchInlineSnapshot(`
      [
        "/ must be a username: 1 to 32 characters of a-z, 0-9, \`_\` and \`-\`, starting with a letter or digit",
        "/bob must be >= 0",
      ]
    `);
  });
});

describe('case-insensitive patterns spelt out', () => {
  test('letters outside classes and letter ranges inside them gain the other case', () => {
    expect(caseInsensitiveSource('^a[b-d_-]x\\.(png|gif)$')).toMatchInlineSnapshot(`"^[aA][b-d_\\-B-D][xX]\\.([pP][nN][gG]|[gG][iI][fF])$"`);
    expect(caseInsensitiveSource('^[A-Za-z0-9]\\d+$')).toBe('^[A-Za-z0-9]\\d+$');
    for (const s of ['alice.PNG', 'Alice.png', 'x.GiF']) expect(new RegExp(caseInsensitiveSource('^[a-z]+\\.(png|gif)$')).test(s), s).toBe(true);
    expect(new RegExp(caseInsensitiveSource('^[a-z]+\\.(png|gif)$')).test('a-b.png')).toBe(false);
  });

  test('constructs it cannot spell out are refused, not guessed', () => {
    expect(() => caseInsensitiveSource('^\\u0041$')).toThrowErrorMatchingInlineSnapshot(`[Error: cannot spell out the case-insensitive pattern /^\\u0041$/i]`);
    expect(() => caseInsensitiveSource('^[A-z]$')).toThrowErrorMatchingInlineSnapshot(`[Error: cannot spell out the mixed-case range A-z]`);
  });
});

describe('unknown keys one edit from an allowed key', () => {
  test('a letter missing, extra, wrong, two swapped or another case match; two edits do not', () => {
    const near = new RegExp(oneEditAway('displayName'));
    for (const key of ['dispalyName', 'displayname', 'DisplayName', 'displayNam', 'displayNamee', 'xdisplayName', 'displayNane']) expect(near.test(key), key).toBe(true);
    for (const key of ['dsplyName', 'name', 'display', 'bio']) expect(near.test(key), key).toBe(false);
  });
});
