// What every CLI does the same way: read its arguments, print its help, and fail with one line.
// `--help`/`-h` prints the usage, the options and the environment variables the command reads to
// stdout and exits 0 before any work; wrong usage (an unknown option, a missing or bad argument) is
// one line on stderr, `<name>: <what> (see --help)`, and exit code 2; refused work is exit code 1.
// `step` prints a line while long work runs, so no command is silent for more than a few seconds.
// No colour anywhere; if some is ever added, honour NO_COLOR (https://no-color.org).
// Used by scripts/ and by src/server/main.ts, so it lives in src/ with the code the server ships.
import path from 'node:path';
import { parseArgs, type ParseArgsOptionDescriptor } from 'node:util';

/** Prints `<name>: <message>` (and the hint) to stderr and exits with `code`. */
export type Fail = (code: number, message: string, hint?: string) => never;

export function failWith(name: string): Fail {
  return (code, message, hint) => {
    console.error(`${name}: ${message}${hint ? `\n    hint: ${hint}` : ''}`);
    process.exit(code);
  };
}

/** An option as node:util parseArgs takes it, with what `--help` says about it. */
export type CliOption = ParseArgsOptionDescriptor & {
  /** One line for `--help`: what it does, and its default. */
  help: string;
  /** How its value shows in `--help`, such as `<dir>`; string options only. */
  value?: string;
};

export interface CliSpec<O extends Record<string, CliOption>> {
  /** The npm script (`build`, `views:import`): the first word of every error line. */
  name: string;
  /** The usage line(s), as the file's first comment has them. */
  usage: string;
  /** Positional arguments and what each is; none are accepted without this. */
  args?: Record<string, string>;
  options?: O;
  /** The environment variables the command reads, and what each does. */
  env?: Record<string, string>;
}

const HELP = { type: 'boolean', short: 'h', help: 'print this help and exit' } as const satisfies CliOption;

/** The text `--help` prints: usage, arguments, options and environment, each in aligned columns. */
export function helpText(spec: CliSpec<Record<string, CliOption>>): string {
  const options: Record<string, CliOption> = { ...spec.options, help: HELP };
  const sections: [string, [string, string][]][] = [
    ['Arguments', Object.entries(spec.args ?? {})],
    ['Options', Object.entries(options).map(([key, o]) => [
      `${o.short ? `-${o.short}, ` : ''}--${key}${o.type === 'string' ? ` ${o.value ?? '<value>'}` : ''}`,
      o.help,
    ])],
    ['Environment', Object.entries(spec.env ?? {})],
  ];
  const width = Math.max(...sections.flatMap(([, rows]) => rows.map(([left]) => left.length)));
  const lines = [spec.usage];
  for (const [title, rows] of sections) {
    if (!rows.length) continue;
    lines.push('', `${title}:`, ...rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`));
  }
  return lines.join('\n');
}

/** A one-line reason for a parseArgs error, in our words rather than Node's paragraph. */
function usageProblem(e: Error & { code?: string }): string {
  const quoted = /'([^']*)'/.exec(e.message)?.[1] ?? '';
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument \`${quoted}\``;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const option = quoted.split(' ')[0];
      return /does not take an argument/.test(e.message) ? `${option} takes no value` : `${option} needs a value`;
    }
    default:
      return e.message.split('\n')[0]!;
  }
}

/**
 * The options and positional arguments of this process. `--help` anywhere before a `--` prints
 * the help and exits 0, even beside a wrong option; wrong usage exits 2 with one line.
 * `usageError` ends the process the same way for the checks the command makes itself.
 */
export function parseCli<const O extends Record<string, CliOption>>(spec: CliSpec<O>, argv: string[] = process.argv.slice(2)) {
  const usageError = (message: string): never => {
    console.error(`${spec.name}: ${message} (see --help)`);
    process.exit(2);
  };
  const beforeDashes = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  if (beforeDashes.includes('--help') || beforeDashes.includes('-h')) {
    console.log(helpText(spec));
    process.exit(0);
  }
  // `help` and `value` are ours; parseArgs ignores properties it does not know.
  const config = { args: argv, allowPositionals: spec.args !== undefined, options: (spec.options ?? {}) as O } as const;
  try {
    return { ...parseArgs(config), usageError };
  } catch (e) {
    return usageError(usageProblem(e as Error));
  }
}

/** The value of a numeric option, or a usage error naming it: `--duration must be a positive number, not `x``. */
export function numberOption(cli: { usageError: (message: string) => never }, name: string, raw: string, { integer = false, min = 0 } = {}): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n <= min) {
    cli.usageError(`--${name} must be ${integer ? 'a whole' : 'a'} number above ${min}, not \`${raw}\``);
  }
  return n;
}

/**
 * Runs long work with a line when it starts and one every `everyMs` while it runs, so a command is
 * never silent long enough to look hung. `quiet`: no line at the start, so work that is usually
 * quick prints only when it is not. The work must not block the event loop (no spawnSync).
 */
export async function step<T>(label: string, work: () => Promise<T>, { everyMs = 5000, quiet = false } = {}): Promise<T> {
  const started = performance.now();
  if (!quiet) console.log(`${label} ...`);
  const timer = setInterval(() => {
    const s = ((performance.now() - started) / 1000).toFixed(0);
    console.log(quiet ? `${label}: ${s} s so far ...` : `  ... ${s} s`);
  }, everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** `value` as one shell word: as it is when plain, else in single quotes. */
const shellWord = (value: string) => (/^[\w./:@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`);

/**
 * A path as messages print it: relative to the working folder when inside it (`content`, `dist/`),
 * else absolute, which says more than `../../../srv/profiles`.
 */
export function shownPath(p: string, cwd = process.cwd()): string {
  const absolute = path.resolve(cwd, p);
  const relative = path.relative(cwd, absolute);
  if (relative === '') return '.';
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative) ? absolute : relative;
}

/**
 * The `npm run check` that checks `contentDir` again, to copy as it is: the folder unless it is the
 * default `./content` (relative when inside the working directory), and `siteUrl` when the checked
 * run had one (a custom domain that is the site's own host is a problem only with it).
 */
export function checkCommand(contentDir: string, siteUrl?: string): string {
  const dir = path.resolve(contentDir);
  return `${siteUrl ? `SITE_URL=${shellWord(siteUrl)} ` : ''}npm run check${dir === path.resolve('content') ? '' : ` -- ${shellWord(shownPath(dir))}`}`;
}
