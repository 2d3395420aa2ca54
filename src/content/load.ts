// Loads the whole content folder once, validates every file against the schemas and the checks
// across files, and reports every problem at once. The build, `npm run check` and the dev server
// all call `loadContent`.
import fs from 'node:fs';
import path from 'node:path';
import {
  CreatorSchema, DecorationSchema, IMAGE_FILE_PATTERN, USERNAME_PATTERN, USERNAME_RULE, ViewsStatsSchema,
  DECORATION_ID_PATTERN, type Creator, type Decoration,
} from '../schemas/index.ts';
import { closest, type ContentProblem } from './problems.ts';
import { parseProfileFile, parseProfiles, type ParseOptions, type ParseStats, type ParsedProfile, type ProfileFile, type PublicProfile } from './profile-files.ts';
import { parseYamlFile } from './yaml-file.ts';

export interface DecorationEntry extends Decoration {
  id: string;
}

export interface Content {
  /** The content folder, absolute. */
  dir: string;
  /** Profiles by username, in username order; without their `private:` notes. */
  profiles: Map<string, PublicProfile>;
  creators: Map<string, Creator>;
  decorations: Map<string, DecorationEntry>;
  /** View counts from `stats/views.yaml`; they replace the profile's own `views`. */
  views: Map<string, number>;
}

export interface LoadResult {
  content: Content;
  /** Problems that fail the check and the build. */
  problems: ContentProblem[];
  /** Things worth knowing that do not fail anything. */
  warnings: ContentProblem[];
}

/** The content folder from `CONTENT_DIR`, default `./content`. */
export const contentDirFromEnv = (env: NodeJS.ProcessEnv = process.env) => path.resolve(env.CONTENT_DIR || 'content');

/** Loads the content in this thread, parsing every file: for small folders, tests and the dev server. */
export function loadContent(dir: string): LoadResult {
  const scan = scanContent(dir);
  const parsed = scan.profileFiles.map(({ username, file }) => parseProfileFile(username, file, fs.readFileSync(file, 'utf8')));
  return assemble(scan, parsed);
}

/**
 * The same result as `loadContent`, for the build and `npm run check`: profile files whose bytes
 * are in the validation cache are not parsed again, and the rest are parsed on every core.
 */
export async function loadContentFast(dir: string, options: ParseOptions): Promise<LoadResult & { stats: ParseStats }> {
  const scan = scanContent(dir);
  const { parsed, stats } = await parseProfiles(scan.profileFiles, options);
  return { ...assemble(scan, parsed), stats };
}

interface Scan {
  content: Content;
  problems: ContentProblem[];
  warnings: ContentProblem[];
  profileFiles: ProfileFile[];
  creatorFiles: { id: string; file: string }[];
  avatars: Set<string>;
}

/** Lists the folders and reads the small files (decorations); the profile files are parsed after. */
function scanContent(dir: string): Scan {
  dir = path.resolve(dir);
  const problems: ContentProblem[] = [];
  const warnings: ContentProblem[] = [];
  const content: Content = { dir, profiles: new Map(), creators: new Map(), decorations: new Map(), views: new Map() };

  if (!isDir(dir)) {
    problems.push({ file: dir, message: 'the content folder does not exist', hint: 'set CONTENT_DIR to a folder with a `profiles/` folder in it' });
    return { content, problems, warnings, profileFiles: [], creatorFiles: [], avatars: new Set() };
  }
  if (!isDir(path.join(dir, 'profiles'))) {
    problems.push({ file: path.join(dir, 'profiles'), message: 'the `profiles/` folder is missing', hint: 'create it and add one `<username>.yaml` file per profile' });
  }

  const yamlFiles = (sub: string, idPattern: RegExp, rule: string) => {
    const folder = path.join(dir, sub);
    const out: { id: string; file: string }[] = [];
    for (const name of listFiles(folder)) {
      const file = path.join(folder, name);
      const ext = path.extname(name);
      const id = name.slice(0, -ext.length || undefined);
      if (ext === '.yml') {
        problems.push({ file, message: 'content files end in `.yaml`', hint: `rename it to \`${id}.yaml\`` });
      } else if (ext !== '.yaml') {
        if (sub !== 'decorations') problems.push({ file, message: `only \`.yaml\` files belong in \`${sub}/\``, hint: 'move or delete this file' });
      } else if (!idPattern.test(id)) {
        const fixed = id.toLowerCase();
        problems.push({
          file, message: `\`${id}\` is not a valid name: ${rule}`,
          hint: idPattern.test(fixed) ? `rename the file to \`${fixed}.yaml\`` : 'rename the file to follow the rule',
        });
      } else {
        out.push({ id, file });
      }
    }
    return out;
  };

  for (const { id, file } of yamlFiles('decorations', DECORATION_ID_PATTERN, '1 to 64 characters of a-z, 0-9, `_` and `-`')) {
    const r = parseYamlFile(file, fs.readFileSync(file, 'utf8'), DecorationSchema);
    if (!r.ok) { problems.push(...r.problems); continue; }
    if (!isFile(path.join(dir, 'decorations', r.value.file))) {
      problems.push({ file, ...r.locate(['file']), keyPath: 'file', message: `the image \`${r.value.file}\` is not in \`decorations/\``, hint: 'put the image beside this file, or fix the name (it is case-sensitive)' });
      continue;
    }
    content.decorations.set(id, { id, name: r.value.name, file: r.value.file });
  }

  const avatars = new Set(listFiles(path.join(dir, 'avatars')));
  const profileFiles = yamlFiles('profiles', USERNAME_PATTERN, USERNAME_RULE).map(({ id, file }) => ({ username: id, file }));
  const creatorFiles = yamlFiles('creators', USERNAME_PATTERN, USERNAME_RULE);
  return { content, problems, warnings, profileFiles, creatorFiles, avatars };
}

/** The checks across files, the creators and the view counts, on the parsed profiles. */
function assemble(scan: Scan, parsed: ParsedProfile[]): LoadResult {
  const { content, problems, warnings, avatars } = scan;
  const { dir } = content;
  for (let i = 0; i < parsed.length; i++) {
    const r = parsed[i]!;
    const { file } = scan.profileFiles[i]!;
    if (!r.ok) { problems.push(...r.problems); continue; }
    const p = r.profile;
    if (p.avatar && !avatars.has(p.avatar)) {
      const near = closest(p.avatar, avatars);
      problems.push({ file, ...r.places.avatar, keyPath: 'avatar', message: `the avatar \`${p.avatar}\` is not in \`avatars/\``, hint: near ? `did you mean \`${near}\`?` : 'add the image to content/avatars/ or remove the key' });
      continue;
    }
    if (p.decoration && !content.decorations.has(p.decoration)) {
      const near = closest(p.decoration, content.decorations.keys());
      problems.push({ file, ...r.places.decoration, keyPath: 'decoration', message: `no decoration \`${p.decoration}\` in \`decorations/\``, hint: near ? `did you mean \`${near}\`?` : `add decorations/${p.decoration}.yaml or remove the key` });
      continue;
    }
    content.profiles.set(r.username, p);
  }

  for (const { id: username, file } of scan.creatorFiles) {
    const r = parseYamlFile(file, fs.readFileSync(file, 'utf8'), CreatorSchema);
    if (!r.ok) { problems.push(...r.problems); continue; }
    if (!fs.existsSync(path.join(dir, 'profiles', `${username}.yaml`))) {
      const near = closest(username, content.profiles.keys());
      problems.push({ file, message: `there is no profile \`${username}\` for this creator`, hint: near ? `did you mean \`${near}.yaml\`?` : `add profiles/${username}.yaml or delete this file` });
      continue;
    }
    content.creators.set(username, r.value);
  }

  const statsFile = path.join(dir, 'stats', 'views.yaml');
  if (isFile(statsFile)) {
    const r = parseYamlFile(statsFile, fs.readFileSync(statsFile, 'utf8'), ViewsStatsSchema.optional());
    if (!r.ok) problems.push(...r.problems);
    else for (const [username, count] of Object.entries(r.value ?? {})) {
      if (fs.existsSync(path.join(dir, 'profiles', `${username}.yaml`))) content.views.set(username, count);
      else warnings.push({ file: statsFile, ...r.locate([username]), keyPath: username, message: `views for \`${username}\`, who has no profile, are ignored` });
    }
  }

  problems.sort(byPlace);
  content.profiles = new Map([...content.profiles].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { content, problems, warnings };
}

const byPlace = (a: ContentProblem, b: ContentProblem) =>
  a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);

// Hidden files (.gitkeep, editor swap files) are not content.
function listFiles(folder: string): string[] {
  if (!isDir(folder)) return [];
  return fs.readdirSync(folder, { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

function isDir(p: string) {
  try { return fs.statSync(p).isDirectory(); } catch { return false; }
}
function isFile(p: string) {
  try { return fs.statSync(p).isFile(); } catch { return false; }
}
