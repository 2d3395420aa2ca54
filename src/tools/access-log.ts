// Counts profile page views in web server access logs (the nginx/Apache "combined" format) and
// merges them into content/stats/views.yaml. `npm run views:import` is the command; the logic is
// here so the tests can feed it lines without files.
//
// A view is a `GET /p/<username>` answered 200, from a client that does not look like a bot,
// counted once per client address, profile and UTC day.
import fs from 'node:fs';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { createIsbotFromList, list as isbotPatterns } from 'isbot';
import { Document, isMap, isScalar, parseDocument, type Pair } from 'yaml';
import { USERNAME_PATTERN } from '../schemas/common.ts';
import { foldAscii } from '../schemas/common.ts';

/**
 * What isbot's list (https://github.com/omrilotan/isbot) lacks or catches only by accident:
 * fediverse servers fetch a linked page to verify a `rel="me"` link and to build a preview card.
 * isbot matches most of them today only because their agent ends in their server's URL (its
 * generic `http` part); they are named here so a change to that rule does not count them as
 * people. Each entry is a regular expression part, matched case-insensitively, and quotes a real
 * agent; none may match a browser (the tests check both).
 */
export const EXTRA_BOT_PATTERNS = [
  // Mastodon 4.3+: "Mastodon/4.3.2 (http.rb/5.2.0; +https://mastodon.social/)"; before: "http.rb/5.1.1 (Mastodon/4.2.10; +https://mastodon.social/)".
  '\\bmastodon/',
  // http.rb, the Ruby client behind Mastodon and its forks (Glitch, Hometown).
  '\\bhttp\\.rb/',
  // "Akkoma 3.13.2; https://akko.example <admin@akko.example>" (Pleroma.Application.user_agent).
  '^(?:pleroma|akkoma) \\d',
  // "Misskey/2024.11.0 (https://misskey.io)", also sent by its forks (Sharkey, Firefish).
  '\\bmisskey/',
  // "Friendica 'Yellow Archangel' 2024.08-1569; https://friendica.example".
  "^friendica '",
  // "gotosocial (+https://gts.example.org) gotosocial/0.17.3".
  '\\bgotosocial/',
  // "Lemmy/0.19.7; +https://lemmy.ml", "(Pixelfed/0.12.4; +https://pixelfed.social)".
  '^lemmy/', '\\bpixelfed/',
  // Bluesky's link card fetcher: "Bluesky Cardyb/1.1", "Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)".
  '\\bcardyb/',
  // Yahoo's crawler without its help URL, which isbot needs to see: "Mozilla/5.0 (compatible; Yahoo! Slurp)".
  '\\bslurp\\b',
  // Flutter and Dart's default HTTP client: "Dart/3.5 (dart:io)", which isbot misses.
  '\\(dart:io\\)',
] as const;

const isBotByList = createIsbotFromList([...isbotPatterns, ...EXTRA_BOT_PATTERNS]);

/**
 * Whether a user agent is a bot, a crawler, a link preview, a monitor or a script rather than a
 * person: isbot's list and `EXTRA_BOT_PATTERNS`. An empty user agent (`-`) counts as a bot too:
 * browsers always send one.
 */
export const isBotUserAgent = (userAgent: string) => userAgent === '' || userAgent === '-' || isBotByList(userAgent);

export interface LogEntry {
  client: string;
  /** The request time as milliseconds since 1970 (UTC). */
  time: number;
  method: string;
  /** The request target as logged: path and query, still percent-encoded. */
  target: string;
  status: number;
  userAgent: string;
}

// `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`. Quoted fields may hold `\"` (Apache)
// or `\x22` (nginx) escapes; anything after the user agent (extra fields some setups append) is ignored.
const COMBINED = /^(\S+) \S+ \S+ \[(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})\] "((?:[^"\\]|\\.)*)" (\d{3}) (?:\d+|-) "(?:[^"\\]|\\.)*" "((?:[^"\\]|\\.)*)"/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** One line of a combined-format log, or undefined when it is not one. */
export function parseCombinedLogLine(line: string): LogEntry | undefined {
  const m = COMBINED.exec(line);
  if (!m) return undefined;
  const [, client, dd, mon, yyyy, hh, mi, ss, sign, oh, om, request, status, userAgent] = m as unknown as string[];
  const month = MONTHS.indexOf(mon!);
  if (month < 0) return undefined;
  const offset = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  const time = Date.UTC(Number(yyyy), month, Number(dd), Number(hh), Number(mi), Number(ss)) - offset;
  if (Number.isNaN(time)) return undefined;
  const parts = request!.split(' ');
  // `"-"` or a bare garbage request line (a TLS handshake sent to the HTTP port) is logged too.
  if (parts.length !== 3 || !/^HTTP\/\d(?:\.\d)?$/.test(parts[2]!)) return { client: client!, time, method: '', target: '', status: Number(status), userAgent: userAgent! };
  return { client: client!, time, method: parts[0]!, target: parts[1]!, status: Number(status), userAgent: userAgent! };
}

/**
 * The username a request views, when it is a profile page view: `GET /p/<name>` answered 200.
 * The name is percent-decoded and ASCII case-folded as the server does (`/p/ALICE` is alice's
 * page); the query is ignored; deeper paths (`/p/alice/x`) are not the page.
 */
export function profileViewOf(entry: LogEntry): string | undefined {
  if (entry.method !== 'GET' || entry.status !== 200) return undefined;
  let path = entry.target.replace(/^https?:\/\/[^/]+/i, '');
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  if (!path.startsWith('/p/')) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(path.slice(3));
  } catch {
    return undefined;
  }
  if (name === '' || name.includes('/')) return undefined;
  return foldAscii(name);
}

/** What was read and what was done with each line; the lines add up to `lines`. */
export interface ImportReport {
  files: number;
  lines: number;
  /** Not combined log format (or blank). */
  malformed: number;
  /** Not a `GET /p/<name>` answered 200: other paths, methods (HEAD included) and statuses. */
  notViews: number;
  bots: number;
  /** The same client, profile and UTC day again. */
  repeats: number;
  /** Page views of names that have no profile. */
  unknownUser: number;
  /** Views counted. */
  counted: number;
  unknownNames: Map<string, number>;
  /** The first few malformed lines, as `file:line`, to see what format the log is in. */
  malformedSamples: string[];
}

/** How far the reading of one log has got, for progress lines. */
export interface ReadProgress {
  /** The file as the user named it. */
  file: string;
  lines: number;
  /** Bytes of the file read so far: compressed bytes for a gzip file, like `totalBytes`. */
  bytesRead: number;
  totalBytes: number;
}

export class ViewCounter {
  readonly views = new Map<string, number>();
  readonly report: ImportReport = {
    files: 0, lines: 0, malformed: 0, notViews: 0, bots: 0, repeats: 0, unknownUser: 0, counted: 0,
    unknownNames: new Map(), malformedSamples: [],
  };
  readonly #seen = new Set<string>();
  readonly #isProfile: (username: string) => boolean;
  #reading: { file: string; lines: number; stream: fs.ReadStream; size: number } | undefined;

  /** @param isProfile whether a (folded) username has a profile */
  constructor(isProfile: (username: string) => boolean) {
    this.#isProfile = isProfile;
  }

  add(line: string, where = ''): void {
    const r = this.report;
    r.lines++;
    const entry = parseCombinedLogLine(line);
    if (!entry) {
      r.malformed++;
      if (r.malformedSamples.length < 3) r.malformedSamples.push(`${where}${where ? ': ' : ''}${line.length > 120 ? `${line.slice(0, 120)}…` : line}`);
      return;
    }
    const username = profileViewOf(entry);
    if (username === undefined) { r.notViews++; return; }
    if (isBotUserAgent(entry.userAgent)) { r.bots++; return; }
    if (!USERNAME_PATTERN.test(username) || !this.#isProfile(username)) {
      r.unknownUser++;
      // Bounded, so a scan of a million random names cannot fill memory with the report.
      if (r.unknownNames.has(username) || r.unknownNames.size < 1000) r.unknownNames.set(username, (r.unknownNames.get(username) ?? 0) + 1);
      return;
    }
    const key = `${username} ${entry.client} ${new Date(entry.time).toISOString().slice(0, 10)}`;
    if (this.#seen.has(key)) { r.repeats++; return; }
    this.#seen.add(key);
    r.counted++;
    this.views.set(username, (this.views.get(username) ?? 0) + 1);
  }

  /** The file being read, or read last; undefined before the first. */
  get progress(): ReadProgress | undefined {
    const r = this.#reading;
    return r && { file: r.file, lines: r.lines, bytesRead: r.stream.bytesRead, totalBytes: r.size };
  }

  /** Reads a log file line by line (gzip when it starts with the gzip magic bytes, whatever its name). */
  async addFile(file: string, displayName = file): Promise<void> {
    const fd = fs.openSync(file, 'r');
    const magic = Buffer.alloc(2);
    const got = fs.readSync(fd, magic, 0, 2, 0);
    const size = fs.fstatSync(fd).size;
    fs.closeSync(fd);
    const raw = fs.createReadStream(file);
    const reading = { file: displayName, lines: 0, stream: raw, size };
    this.#reading = reading;
    const input: Readable = got === 2 && magic[0] === 0x1f && magic[1] === 0x8b ? raw.pipe(zlib.createGunzip()) : raw;
    // A broken gzip stream must fail the import rather than end it quietly half-way.
    const failed = new Promise<never>((_, reject) => {
      raw.once('error', reject);
      input.once('error', reject);
    });
    this.report.files++;
    const lines = readline.createInterface({ input, crlfDelay: Infinity });
    const done = (async () => {
      for await (const line of lines) this.add(line, `${displayName}:${++reading.lines}`);
    })();
    done.catch(() => {}); // its failure is `failed`'s
    try {
      await Promise.race([done, failed]);
    } finally {
      raw.destroy();
    }
  }
}

const MB = 1024 * 1024;
const thousands = (n: number) => n.toLocaleString('en-US');

/** One progress line, what matters first: `access.log.1.gz: 34% (120.4 of 350.0 MB), 1,234,567 lines`. */
export function formatReadProgress(p: ReadProgress): string {
  const percent = p.totalBytes > 0 ? `${Math.floor((100 * p.bytesRead) / p.totalBytes)}% ` : '';
  return `${p.file}: ${percent}(${(p.bytesRead / MB).toFixed(1)} of ${(p.totalBytes / MB).toFixed(1)} MB), ${thousands(p.lines)} ${p.lines === 1 ? 'line' : 'lines'}`;
}

/**
 * Rewrites one status line on `stream` every `ms` while work goes on, when `stream` is a terminal;
 * nothing otherwise, so cron mail and CI logs get only the final report. Plain text, no colour or
 * escape sequences: a carriage return and spaces rewrite the line. The returned function stops it
 * and blanks the line, so what is printed next starts clean.
 */
export function showProgress(stream: NodeJS.WriteStream, line: () => string | undefined, ms = 2000): () => void {
  if (!stream.isTTY) return () => {};
  let width = 0;
  const write = (text: string) => {
    stream.write(`\r${text.padEnd(width)}`);
    width = text.length;
  };
  const timer = setInterval(() => {
    const text = line();
    if (text !== undefined) write(text.slice(0, Math.max(0, (stream.columns || 80) - 1)));
  }, ms);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (width) {
      write('');
      stream.write('\r');
    }
  };
}

/** The comment at the top of a new views file; `schemaPath` is relative to the file. */
export const viewsFileHeader = (schemaPath: string) => [
  ` yaml-language-server: $schema=${schemaPath}`,
  ' Page views per profile, `username: count`, kept sorted. Written by `npm run views:import`, which adds',
  ' the views it finds in access logs. A count here replaces the profile\'s own `views`.',
].join('\n');

export interface ViewsChange {
  username: string;
  before: number;
  after: number;
  /** Not in the file before: `before` is the profile's own `views`. */
  fromProfile: boolean;
}

/**
 * Adds `added` to the counts in the views file's text (undefined when there is no file yet) and
 * returns the new text, sorted by username, with its comments kept: the comment above the first
 * key stays at the top, a comment above any other key moves with it. A profile not yet in the file
 * starts from `startOf(username)`, its own `views`, because a count in the file replaces that value:
 * starting from 0 would lose the views the profile already showed.
 */
export function mergeViewCounts(
  text: string | undefined, added: ReadonlyMap<string, number>, startOf: (username: string) => number, header = viewsFileHeader('../../public/schemas/views.schema.json'),
): { text: string; changes: ViewsChange[] } {
  const doc: Document = text === undefined ? new Document({}) : parseDocument(text, { version: '1.2' });
  if (text === undefined) doc.commentBefore = header;
  if (doc.errors.length) throw new Error(`the views file cannot be read as YAML: ${doc.errors[0]!.message}`);
  if (doc.contents === null) doc.contents = doc.createNode({});
  const map = doc.contents;
  if (!isMap(map)) throw new Error('the views file is not a mapping of `username: count` lines');
  // The comment above the first key is the file's header, which the parser attaches to that key
  // when no blank line follows it: keep it at the top rather than let sorting carry it away.
  const first = map.items[0]?.key;
  if (!doc.commentBefore && isScalar(first) && first.commentBefore) {
    doc.commentBefore = first.commentBefore;
    first.commentBefore = undefined;
  }

  const changes: ViewsChange[] = [];
  for (const username of [...added.keys()].sort()) {
    const n = added.get(username)!;
    if (n <= 0) continue;
    const current = doc.get(username);
    const fromProfile = typeof current !== 'number';
    const before = fromProfile ? startOf(username) : current;
    doc.set(username, before + n);
    changes.push({ username, before, after: before + n, fromProfile });
  }
  const keyOf = (p: Pair) => String(isScalar(p.key) ? p.key.value : p.key);
  (map.items as Pair[]).sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  return { text: doc.toString(), changes };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The report `npm run views:import` prints: every line read is in exactly one row. */
export function formatImportReport(r: ImportReport): string {
  const rows: [number, string][] = [
    [r.counted, `${r.counted === 1 ? 'view' : 'views'} counted (GET /p/<name> answered 200; one per client, profile and UTC day)`],
    [r.malformed, `${r.malformed === 1 ? 'line' : 'lines'} not in the combined log format (or blank)`],
    [r.notViews, 'not profile views (other paths and deeper /p/ paths, HEAD and other methods, statuses other than 200)'],
    [r.bots, 'from bots, crawlers and tools (by user agent)'],
    [r.repeats, `${r.repeats === 1 ? 'repeat' : 'repeats'} of a counted view (same client, profile and UTC day)`],
    [r.unknownUser, `for names without a profile${r.unknownNames.size ? `: ${[...r.unknownNames].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5).map(([n, c]) => `${n} (${c})`).join(', ')}${r.unknownNames.size > 5 ? ', ...' : ''}` : ''}`],
  ];
  const width = String(Math.max(...rows.map(([n]) => n))).length;
  const out = [`Read ${plural(r.files, 'log file')}, ${plural(r.lines, 'line')}:`, ...rows.map(([n, what]) => `  ${String(n).padStart(width)} ${what}`)];
  if (r.malformedSamples.length) out.push('Lines not in the combined log format, for example:', ...r.malformedSamples.map((s) => `  ${s}`));
  return out.join('\n');
}

/** The changes to the views file, biggest first, at most `limit` rows. */
export function formatViewsChanges(changes: readonly ViewsChange[], limit = 20): string {
  const rows = [...changes].sort((a, b) => (b.after - b.before) - (a.after - a.before) || (a.username < b.username ? -1 : 1));
  const nameWidth = Math.max(...rows.map((c) => c.username.length));
  const out = rows.slice(0, limit).map((c) =>
    `  ${c.username.padEnd(nameWidth)} ${c.before} -> ${c.after} (+${c.after - c.before})${c.fromProfile ? ', starting from the profile\'s own `views`' : ''}`);
  if (rows.length > limit) out.push(`  ... and ${rows.length - limit} more`);
  return out.join('\n');
}
