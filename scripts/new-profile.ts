// Usage: npm run new:profile -- <username> [--display-name "Name"] [--dry-run]
//
// Writes content/profiles/<username>.yaml (under CONTENT_DIR when set): a valid profile created
// now (UTC), with every optional key present as a commented example under its description. Its
// first line points VS Code's YAML extension at public/schemas/profile.schema.json, so keys
// complete and mistakes show as you type. Refuses an invalid name and a name that exists, also in
// another casing (`Alice.yaml` and `alice.yaml` are one file on case-insensitive disks).
// `--dry-run` prints the file instead. Exits 0 when written (or printed), 1 when refused, 2 on
// wrong usage.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'astro/zod';
import { contentDirFromEnv } from '../src/content/load.ts';
import { formatProblem } from '../src/content/problems.ts';
import { JSON_SCHEMA_DIR } from '../src/tools/json-schemas.ts';
import { parseYamlFile } from '../src/content/yaml-file.ts';
import { BADGES, ProfileSchema, RESERVED_USERNAMES, USERNAME_PATTERN, USERNAME_RULE, type Profile } from '../src/schemas/index.ts';
import { failWith, parseCli, shownPath } from '../src/cli.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const fail = failWith('new:profile');

const cli = parseCli({
  name: 'new:profile',
  usage: 'Usage: npm run new:profile -- <username> [--display-name "Name"] [--dry-run]',
  args: { '<username>': 'the new profile\'s name: lowercase letters a-z, digits, `_` and `-`' },
  options: {
    'display-name': { type: 'string', value: '"Name"', help: 'the name shown on the page (default: the username)' },
    'dry-run': { type: 'boolean', help: 'print the file instead of writing it' },
  },
  env: { CONTENT_DIR: 'the content folder to write into (default ./content)' },
});
const { values, positionals } = cli;
if (positionals.length !== 1) cli.usageError(positionals.length ? `give one username, not ${positionals.length}` : 'which username?');
const username = positionals[0]!;

if (!USERNAME_PATTERN.test(username)) {
  const fixed = username.trim().replace(/^@/, '').toLowerCase();
  // The lowercase name may be a profile already: then that is the file to edit, not a name to use.
  const taken = USERNAME_PATTERN.test(fixed) && fs.existsSync(path.join(contentDirFromEnv(), 'profiles', `${fixed}.yaml`));
  fail(1, `\`${username}\` is not a valid username: a username is ${USERNAME_RULE}.`,
    taken ? `\`${fixed}\` is a profile already: edit its file, or pick another username`
      : USERNAME_PATTERN.test(fixed) ? `use \`${fixed}\`` : 'no dots, spaces or capitals: letters a-z, digits, `_` and `-`');
}
const reserved = RESERVED_USERNAMES.get(username);
if (reserved) fail(1, `\`${username}\` is a name the site keeps for itself: ${reserved}`, `choose another, e.g. \`${username}-1\``);

const contentDir = contentDirFromEnv();
const profilesDir = path.join(contentDir, 'profiles');
const file = path.join(profilesDir, `${username}.yaml`);
if (!fs.existsSync(contentDir)) fail(1, `the content folder ${shownPath(contentDir)} does not exist`, 'run this in the project folder, or set CONTENT_DIR');

// Any casing and either extension: the loader reads `.yaml` only, but a `.yml` twin is a mistake to point at.
const existing = (fs.existsSync(profilesDir) ? fs.readdirSync(profilesDir) : [])
  .find((name) => /\.ya?ml$/i.test(name) && name.replace(/\.ya?ml$/i, '').toLowerCase() === username);
if (existing) {
  const same = existing === `${username}.yaml`;
  fail(1, same
    ? `${shownPath(file)} already exists`
    : `${shownPath(path.join(profilesDir, existing))} already exists, and differs from \`${username}.yaml\` only in case or extension`,
  same ? 'edit that file, or pick another username' : 'edit or rename that file; usernames are lowercase, one file per name');
}

const createdAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const text = profileTemplate(username, values['display-name'] ?? username, createdAt);

// The file must pass the same check as the build: a bad --display-name is caught here, not later.
const parsed = parseYamlFile(file, text, ProfileSchema);
if (!parsed.ok) {
  // Only --display-name comes from outside the template, so that is what a problem points at.
  const what = parsed.problems.map((p) => (p.keyPath === 'displayName' ? `--display-name ${p.message}` : formatProblem(p))).join('; ');
  fail(1, `${what}. Nothing was written.`);
}

if (values['dry-run']) {
  process.stdout.write(text);
  console.log(`\nDry run: ${shownPath(file)} was not written.`);
  process.exit(0);
}
fs.mkdirSync(profilesDir, { recursive: true });
try {
  // `wx`: never overwrite, even if the file appeared since the check above.
  fs.writeFileSync(file, text, { flag: 'wx' });
} catch (e) {
  fail(1, `could not write ${shownPath(file)}: ${(e as Error).message}`);
}
console.log(`Created ${shownPath(file)} (${username}, created ${createdAt}).`);
console.log('Uncomment the keys you need, then run `npm run check`. The profile appears at /p/' + username + ' after the next build.');

/** The file: required keys set, each optional key as a commented example under its schema description. */
function profileTemplate(name: string, displayName: string, created: string): string {
  // Relative to the file, so the editor finds the schema wherever CONTENT_DIR points.
  const schemaPath = path.relative(path.dirname(file), path.join(root, JSON_SCHEMA_DIR, 'profile.schema.json')).split(path.sep).join('/');
  const decorations = fs.existsSync(path.join(contentDir, 'decorations'))
    ? fs.readdirSync(path.join(contentDir, 'decorations')).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -5)).sort()
    : [];
  // Keyed by the schema's keys, so a new key in ProfileSchema fails type-checking until it has an example.
  const examples: Record<keyof Profile, string[] | null> = {
    displayName: null,
    createdAt: null,
    bio: ['bio: "First line.\\nSecond line."'],
    avatar: [`avatar: ${name}.png`],
    // Host names have no `_`.
    customDomain: [`customDomain: ${name.replace(/_/g, '-').replace(/-+$/, '')}.example.com`],
    views: ['views: 0'],
    badges: [`badges: [${BADGES[0]}]`],
    decoration: [`decoration: ${decorations[0] ?? 'sakura'}${decorations.length > 1 ? `    # one of: ${decorations.join(', ')}` : ''}`],
    socials: ['socials:', '  - platform: github', `    url: https://github.com/${name}`],
    suspension: ['suspension:', '  reason: spam', '  message: "This profile is suspended."', `  at: ${created}`],
    private: ['private:', '  email: someone@example.com'],
  };
  const lines = [
    `# yaml-language-server: $schema=${schemaPath}`,
    `# The profile \`${name}\`: /p/${name} and /api/v1/users/${name} once built. \`npm run check\` validates it.`,
    '# Optional keys are commented out below: remove the `# ` in front of a key (and its indented lines) to use it.',
    '',
    ...describe('displayName'),
    `displayName: ${JSON.stringify(displayName)}`,
    ...describe('createdAt'),
    `createdAt: ${created}`,
  ];
  for (const [key, example] of Object.entries(examples)) {
    if (!example) continue;
    lines.push('', ...describe(key as keyof Profile), ...example.map((l) => `# ${l}`));
  }
  return `${lines.join('\n')}\n`;
}

/** The key's description from the schema (the one the editor shows on hover), as `# ` lines of at most 100 characters. */
function describe(key: keyof Profile): string[] {
  const description = z.globalRegistry.get(ProfileSchema.shape[key])?.description ?? '';
  const out: string[] = [];
  let line = '#';
  // A `code span` is never split across lines.
  for (const word of description.match(/`[^`]*`\S*|\S+/g) ?? []) {
    if (line.length + word.length + 1 > 100 && line !== '#') {
      out.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  if (line !== '#') out.push(line);
  return out;
}
