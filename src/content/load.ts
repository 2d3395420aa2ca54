// Loads the whole content folder once, validates every file against the schemas and the checks
// across files, and reports every problem at once. The build, `npm run check` and the dev server
// all call `loadContent`.
import path from 'node:path';
import {
  CreatorSchema, DecorationSchema, IMAGE_FILE_PATTERN, RESERVED_USERNAMES, USERNAME_PATTERN, USERNAME_RULE, ViewsStatsSchema,
  DECORATION_ID_PATTERN, type Creator, type Decoration,
} from '../schemas/index.ts';
import { walkContent } from './content-tree.ts';
import { closest, type ContentProblem } from './problems.ts';
import { ContentReader, VIEWS_LIMIT, YAML_LIMIT, decodeText } from './read-file.ts';
import { StampedFileCache, parseProfileFile, parseProfiles, type ParseOptions, type ParseStats, type ParsedProfile, type ProfileFile, type PublicProfile } from './profile-files.ts';
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
export function loadContent(dir: string, site: SiteOptions = {}): LoadResult {
  const scan = scanContent(dir);
  const parsed = scan.profileFiles.map(({ username, file }): ParsedProfile => {
    const read = scan.reader.read(file, YAML_LIMIT);
    if (!read.ok) return { ok: false, username, problems: read.problems };
    const text = decodeText(file, read.bytes);
    return text.ok ? parseProfileFile(username, file, text.text) : { ok: false, username, problems: text.problems };
  });
  return assemble(scan, parsed, site);
}

/**
 * The same result as `loadContent`, for the build and `npm run check`: profile files whose bytes
 * are in the validation cache are not parsed again, and the rest are parsed on every core.
 */
export async function loadContentFast(dir: string, options: ParseOptions & SiteOptions): Promise<LoadResult & {
  stats: ParseStats; saveCache: () => void;
  /** username → the stamp of its profile file, where it proves the bytes parsed (parseProfiles' `stamps`). */
  stamps: Map<string, string>;
  /** username → the digest of its file's bytes, where its stamp does not prove them (parseProfiles' `digests`). */
  digests: Map<string, string>;
}> {
  const scan = scanContent(dir);
  const { parsed, stats, saveCache, stamps, digests } = await parseProfiles(scan.profileFiles, options, (file) => scan.reader.read(file, YAML_LIMIT));
  const views = new StampedFileCache<ViewCounts>(options.cacheFile, 'views', options.ignoreCache);
  const creators = new StampedFileCache<Creator>(options.cacheFile, 'creators', options.ignoreCache);
  const result = assemble(scan, parsed, options, { views, creators });
  views.save();
  creators.save();
  return { ...result, stats: { ...stats, viewsFromCache: views.hits > 0, creatorsFromCache: creators.hits }, saveCache, stamps, digests };
}

interface Scan {
  content: Content;
  problems: ContentProblem[];
  warnings: ContentProblem[];
  profileFiles: ProfileFile[];
  creatorFiles: { id: string; file: string }[];
  avatars: Set<string>;
  /** The file names in `profiles/`. */
  profileNames: Set<string>;
  /** Content folders that are links: refused once, and the checks across files skip what would be in them. */
  refusedFolders: Set<string>;
  hasViews: boolean;
  reader: ContentReader;
}

/** Lists the folders and reads the small files (decorations); the profile files are parsed after. */
function scanContent(dir: string): Scan {
  dir = path.resolve(dir);
  const problems: ContentProblem[] = [];
  const warnings: ContentProblem[] = [];
  const content: Content = { dir, profiles: new Map(), creators: new Map(), decorations: new Map(), views: new Map() };
  const reader = new ContentReader(dir);
  const empty = { content, problems, warnings, reader, profileFiles: [], creatorFiles: [], avatars: new Set<string>(), profileNames: new Set<string>(), refusedFolders: new Set<string>(), hasViews: false };

  const rootProblem = reader.rootProblem();
  if (rootProblem) {
    problems.push(rootProblem);
    return empty;
  }
  // Links and special files anywhere in the folder are problems; nothing else the walk did not list is read.
  const tree = walkContent(dir);
  problems.push(...tree.problems);
  const refused = new Set(tree.problems.map((p) => p.file));
  // Files refused by the walk count as there for the checks across files: one problem per link, not one more per use.
  const refusedIn = (sub: string) => [...refused].filter((f) => path.dirname(f) === path.join(dir, sub)).map((f) => path.basename(f));
  const listed = (sub: string) => tree.files.get(sub) ?? [];
  if (!tree.files.has('profiles') && !refused.has(path.join(dir, 'profiles'))) {
    problems.push({ file: path.join(dir, 'profiles'), message: 'the `profiles/` folder is missing', hint: 'create it and add one `<username>.yaml` file per profile' });
  }
  problems.push(...misplacedYaml(dir, tree.files));

  const yamlFiles = (sub: string, idPattern: RegExp, rule: string) => {
    const folder = path.join(dir, sub);
    const out: { id: string; file: string }[] = [];
    for (const name of listed(sub)) {
      // Joined by hand: the folder is absolute and normal, the name a plain one from its listing.
      const file = `${folder}${path.sep}${name}`;
      const ext = name.endsWith('.yaml') ? '.yaml' : path.extname(name);
      const id = name.slice(0, -ext.length || undefined);
      // `.yml`, `.YAML`: a content file meant, in another spelling.
      if (ext !== '.yaml' && /^\.ya?ml$/i.test(ext)) {
        problems.push({ file, message: 'content files end in `.yaml`', hint: `rename it to \`${id}.yaml\`` });
      } else if (ext !== '.yaml') {
        if (sub !== 'decorations') problems.push({ file, message: `only \`.yaml\` files belong in \`${sub}/\``, hint: 'move or delete this file' });
      } else if (idPattern === USERNAME_PATTERN && RESERVED_USERNAMES.has(id)) {
        problems.push({
          file, message: `\`${id}\` is a name the site keeps for itself: ${RESERVED_USERNAMES.get(id)}`,
          hint: `rename the file, e.g. to \`${id}-1.yaml\` or \`the${id}.yaml\``,
        });
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

  // Every image is checked by its bytes, used by a profile or not: what `npm run check` passes is what may be published.
  for (const sub of ['avatars', 'decorations']) {
    for (const name of listed(sub)) {
      if (IMAGE_FILE_PATTERN.test(name)) problems.push(...reader.checkImage(path.join(dir, sub, name)));
    }
  }

  const decorationImages = new Set([...listed('decorations'), ...refusedIn('decorations')]);
  for (const { id, file } of yamlFiles('decorations', DECORATION_ID_PATTERN, '1 to 64 characters of a-z, 0-9, `_` and `-`')) {
    const read = reader.read(file, YAML_LIMIT);
    if (!read.ok) { problems.push(...read.problems); continue; }
    const text = decodeText(file, read.bytes);
    if (!text.ok) { problems.push(...text.problems); continue; }
    const r = parseYamlFile(file, text.text, DecorationSchema);
    if (!r.ok) { problems.push(...r.problems); continue; }
    if (!decorationImages.has(r.value.file)) {
      problems.push({ file, ...r.locate(['file']), keyPath: 'file', message: `the image \`${r.value.file}\` is not in \`decorations/\``, hint: 'put the image beside this file, or fix the name (it is case-sensitive)' });
      continue;
    }
    content.decorations.set(id, { id, name: r.value.name, file: r.value.file });
  }

  const avatars = new Set([...listed('avatars'), ...refusedIn('avatars')]);
  const profileFiles = yamlFiles('profiles', USERNAME_PATTERN, USERNAME_RULE).map(({ id, file }) => ({ username: id, file }));
  const creatorFiles = yamlFiles('creators', USERNAME_PATTERN, USERNAME_RULE);
  const profileNames = new Set([...listed('profiles'), ...refusedIn('profiles')]);
  const refusedFolders = new Set(['profiles', 'avatars', 'decorations'].filter((sub) => refused.has(path.join(dir, sub))));
  return { content, problems, warnings, reader, profileFiles, creatorFiles, avatars, profileNames, refusedFolders, hasViews: listed('stats').includes('views.yaml') };
}

/** The folders of the content format, each read for what it holds. */
const CONTENT_FOLDERS = ['profiles', 'creators', 'decorations', 'avatars', 'stats'];

/**
 * A YAML file where nothing reads it though it was surely meant to be read: in a folder below
 * `profiles/` (or another content folder), or in a misspelt one (`profile/`). Merged there, a
 * profile would never be published, and nothing would say so. Hidden folders (`.github`), the top
 * of the folder and folders named unlike any of the format's (a content repository's own files) are
 * left alone.
 */
function misplacedYaml(dir: string, files: ReadonlyMap<string, readonly string[]>): ContentProblem[] {
  const problems: ContentProblem[] = [];
  for (const [rel, names] of files) {
    if (rel === '' || CONTENT_FOLDERS.includes(rel)) continue;
    const parts = rel.split(path.sep);
    if (parts.some((p) => p.startsWith('.'))) continue;
    const top = parts[0]!;
    const known = CONTENT_FOLDERS.includes(top);
    // `closest` compares in lowercase: `Profiles` is `profiles` at no distance.
    const near = known ? undefined : closest(top, CONTENT_FOLDERS);
    if (!known && !near) continue;
    for (const name of names) {
      if (!/\.ya?ml$/i.test(name)) continue;
      const file = path.join(dir, rel, name);
      problems.push(known
        ? { file, message: `is in a folder below \`${top}/\`, where no file is read`, hint: `move it into \`${top}/\` itself` }
        : { file, message: `is in \`${top}/\`, a folder the site does not read`, hint: `did you mean \`${near}/\`? Move it there` });
    }
  }
  return problems;
}

/** What the content is checked against beyond itself. */
/**
 * The view counts of `stats/views.yaml` as the validation cache keeps them: one string of
 * ` <name>:<count>` for each name, in the file's order. At 1,000,000 profiles V8 parsed them as
 * one object of a million keys in 0.37 s, as two columns in 0.13-0.19 s of a 2.5 s edit build that
 * looks up a few; one string with nothing JSON escapes it copies in one piece, and a look-up is a
 * search in it.
 */
export interface ViewCounts {
  text: string;
}

/** A name as the text holds it: a space or a colon (no username has one) made `!`, so that the name still is no username. */
const viewName = (name: string) => name.replace(/[ :]/g, '!');

export function viewCounts(stats: Record<string, number>): ViewCounts {
  const parts: string[] = [];
  for (const name of Object.keys(stats)) parts.push(` ${viewName(name)}:${stats[name]!}`);
  return { text: parts.join('') };
}

/** Each name and count of `counts`, in the file's order. */
export function forEachViewCount(counts: ViewCounts, each: (name: string, count: number) => void): void {
  const { text } = counts;
  for (let at = 0; at < text.length;) {
    const colon = text.indexOf(':', at + 1);
    const end = text.indexOf(' ', colon + 1);
    const next = end < 0 ? text.length : end;
    each(text.slice(at + 1, colon), Number(text.slice(colon + 1, next)));
    at = next;
  }
}

/**
 * A look-up of `counts` by name for a few names (an edit build's changed profiles): a search of the
 * text each, and a Map of them all only past 16 look-ups.
 */
export function viewCountOf(counts: ViewCounts): (name: string) => number | undefined {
  let byName: Map<string, number> | undefined;
  let asked = 0;
  return (name) => {
    if (!byName && ++asked > 16) {
      byName = new Map();
      forEachViewCount(counts, (n, count) => byName!.set(n, count));
    }
    if (byName) return byName.get(name);
    const key = ` ${name}:`;
    // A name with a space or a colon is in the text as no name is looked up.
    const at = /[ :]/.test(name) ? -1 : counts.text.indexOf(key);
    if (at < 0) return undefined;
    const end = counts.text.indexOf(' ', at + key.length);
    return Number(counts.text.slice(at + key.length, end < 0 ? counts.text.length : end));
  };
}

export interface SiteOptions {
  /** The site's public address (SITE_URL): no profile may claim its host as a custom domain. */
  siteUrl?: string;
}

/**
 * The host names that are this site's and no profile's, each with how it is: SITE_URL's host (a
 * trailing dot is the same host in DNS) and its `www.` twin, which an operator points at the site.
 */
export function siteHostNames(siteUrl: string): Map<string, string> {
  const host = new URL(siteUrl).hostname.replace(/\.+$/, '');
  const names = new Map([[host, 'this site\'s own host (SITE_URL)']]);
  if (host.startsWith('www.')) names.set(host.slice(4), 'this site\'s own host (SITE_URL) without `www.`');
  else names.set(`www.${host}`, 'this site\'s own host (SITE_URL) with `www.`');
  return names;
}

/** The checks across files, the creators and the view counts, on the parsed profiles. */
function assemble(scan: Scan, parsed: ParsedProfile[], site: SiteOptions = {}, caches: { views?: StampedFileCache<ViewCounts>; creators?: StampedFileCache<Creator> } = {}): LoadResult {
  const { content, problems, warnings, avatars } = scan;
  const { dir } = content;
  const siteHosts = site.siteUrl ? siteHostNames(site.siteUrl) : new Map<string, string>();
  // A custom domain serves one profile at `/` (src/api/handler.ts): two claims, or the site's own
  // host, would make `/` answer a page its owner did not choose.
  /** Each custom domain's first claimant: its file and the place of its key. */
  const domains = new Map<string, { file: string; place: { line?: number; column?: number } | undefined }>();
  for (let i = 0; i < parsed.length; i++) {
    const r = parsed[i]!;
    const { file } = scan.profileFiles[i]!;
    if (!r.ok) { problems.push(...r.problems); continue; }
    const p = r.profile;
    // Every problem of the file at once: a contributor should not find the next one only after fixing this one.
    const before = problems.length;
    if (p.avatar && !avatars.has(p.avatar) && !scan.refusedFolders.has('avatars')) {
      const near = closest(p.avatar, avatars);
      problems.push({ file, ...r.places.avatar, keyPath: 'avatar', message: `the avatar \`${p.avatar}\` is not in \`avatars/\``, hint: near ? `did you mean \`${near}\`?` : 'add the image to content/avatars/ or remove the key' });
    }
    if (p.decoration && !content.decorations.has(p.decoration) && !scan.refusedFolders.has('decorations')) {
      const near = closest(p.decoration, content.decorations.keys());
      problems.push({ file, ...r.places.decoration, keyPath: 'decoration', message: `no decoration \`${p.decoration}\` in \`decorations/\``, hint: near ? `did you mean \`${near}\`?` : `add decorations/${p.decoration}.yaml or remove the key` });
    }
    if (p.customDomain) {
      const taken = domains.get(p.customDomain);
      const own = siteHosts.get(p.customDomain);
      if (taken) {
        // On both files: the one a pull request adds is as likely to be either.
        const claimed = (at: string, place: { line?: number; column?: number } | undefined, other: string) => problems.push({
          file: at, ...place, keyPath: 'customDomain',
          message: `the custom domain \`${p.customDomain}\` is also \`${path.basename(other, '.yaml')}\`'s: a domain serves one profile`,
          hint: `remove the key here or in ${path.relative(dir, other)}`,
        });
        claimed(file, r.places.customDomain, taken.file);
        claimed(taken.file, taken.place, file);
      } else if (own !== undefined) {
        problems.push({
          file, ...r.places.customDomain, keyPath: 'customDomain',
          message: `\`${p.customDomain}\` is ${own}, not a custom domain`,
          hint: 'remove the key: the profile is at /p/<username> on this site already',
        });
      } else {
        domains.set(p.customDomain, { file, place: r.places.customDomain });
      }
    }
    if (problems.length === before) content.profiles.set(r.username, p);
  }

  for (const { id: username, file } of scan.creatorFiles) {
    let creator = caches.creators?.get(file);
    if (!creator) {
      const read = scan.reader.read(file, YAML_LIMIT);
      if (!read.ok) { problems.push(...read.problems); continue; }
      const text = decodeText(file, read.bytes);
      if (!text.ok) { problems.push(...text.problems); continue; }
      const r = parseYamlFile(file, text.text, CreatorSchema);
      if (!r.ok) { problems.push(...r.problems); continue; }
      creator = r.value;
      caches.creators?.set(file, creator);
    }
    if (!scan.profileNames.has(`${username}.yaml`) && !scan.refusedFolders.has('profiles')) {
      const near = closest(username, content.profiles.keys());
      problems.push({ file, message: `there is no profile \`${username}\` for this creator`, hint: near ? `did you mean \`${near}.yaml\`?` : `add profiles/${username}.yaml or delete this file` });
      continue;
    }
    content.creators.set(username, creator);
  }

  const statsFile = path.join(dir, 'stats', 'views.yaml');
  // Counts parsed before are reused while the file is unchanged, unless one names a profile that is
  // gone: its warning needs the line, so the file is parsed again.
  const known = (username: string) => scan.profileNames.has(`${username}.yaml`);
  // Usable when every name is known: taken in the same pass that checks it (a million names at 1,000,000 profiles).
  const cached = scan.hasViews ? caches.views?.get(statsFile, (counts) => {
    let usable = typeof counts.text === 'string';
    if (usable) forEachViewCount(counts, (name, count) => { if (known(name)) content.views.set(name, count); else usable = false; });
    if (!usable) content.views.clear();
    return usable;
  }) : undefined;
  if (!cached) {
    const statsRead = scan.hasViews ? scan.reader.read(statsFile, VIEWS_LIMIT) : undefined;
    if (statsRead && !statsRead.ok) problems.push(...statsRead.problems);
    const decoded = statsRead?.ok ? decodeText(statsFile, statsRead.bytes) : undefined;
    if (decoded && !decoded.ok) problems.push(...decoded.problems);
    const text = decoded?.ok ? decoded.text : undefined;
    const odd = text === undefined ? undefined : oddViewsLine(text);
    if (odd) {
      problems.push({
        file: statsFile, line: odd.line, column: 1,
        message: odd.flow
          ? 'has a `[...]` or `{...}` collection: this file holds `username: count` lines (as `npm run views:import` writes it)'
          : 'is no `username: count` line from its first column (a list entry, an indented or a nested line): this file holds `username: count` lines (as `npm run views:import` writes it)',
        hint: 'write one `username: count` line per profile',
      });
    } else if (text !== undefined) {
      const r = parseYamlFile(statsFile, text, ViewsStatsSchema.optional());
      if (!r.ok) problems.push(...r.problems);
      else {
        for (const [username, count] of Object.entries(r.value ?? {})) {
          if (known(username)) content.views.set(username, count);
          else warnings.push({ file: statsFile, ...r.locate([username]), keyPath: username, message: `views for \`${username}\`, who has no profile, are ignored` });
        }
        caches.views?.set(statsFile, viewCounts(r.value ?? {}));
      }
    }
  }

  problems.sort(byPlace);
  content.profiles = new Map([...content.profiles].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { content, problems, warnings };
}

/** A line `npm run views:import` writes: blank, a comment, or `key: value` from the first column. */
const VIEWS_LINE = /^(?:[ \t]*(?:#.*)?|[^\s#?-][^:]*:(?:[ \t].*)?)\r?$/;

/**
 * The first line of `stats/views.yaml`, from 1, that is not one `npm run views:import` writes: a
 * flow collection (`[`, `]`, `{`, `}` outside a comment), a list entry, an indented or a nested
 * line; or undefined. The file may be 16 MiB, and the yaml library is quadratic on some shapes (a
 * list of empty entries: 1.6 s per 128 KiB) and ran out of memory on 16 MiB of `-` lines.
 */
function oddViewsLine(text: string): { line: number; flow: boolean } | undefined {
  // Line by line, not split: 16 MiB of one-character lines would be eight million strings.
  for (let start = text.startsWith('\uFEFF') ? 1 : 0, n = 1; start <= text.length; n++) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end < 0 ? text.length : end);
    const comment = line.search(/(?:^|\s)#/);
    if (/[[\]{}]/.test(comment < 0 ? line : line.slice(0, comment))) return { line: n, flow: true };
    if (!VIEWS_LINE.test(line)) return { line: n, flow: false };
    if (end < 0) break;
    start = end + 1;
  }
  return undefined;
}

const byPlace = (a: ContentProblem, b: ContentProblem) =>
  a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
