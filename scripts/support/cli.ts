// What every CLI in scripts/ does the same way: read its arguments (`--help`/`-h` prints the usage),
// and fail with one line that names the command, an optional hint, and an exit code: 2 for wrong
// usage, 1 when the work was refused.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** Prints `<name>: <message>` (and the hint) to stderr and exits with `code`. */
export type Fail = (code: number, message: string, hint?: string) => never;

export function failWith(name: string): Fail {
  return (code, message, hint) => {
    console.error(`${name}: ${message}${hint ? `\n    hint: ${hint}` : ''}`);
    process.exit(code);
  };
}

/**
 * The options and positional arguments of this process. Wrong usage exits 2 with the usage line;
 * `--help` prints it and exits 0.
 */
export function parseCli<const O extends ParseArgsOptionsConfig>(name: string, usage: string, options: O) {
  const config = { allowPositionals: true, options: { ...options, help: { type: 'boolean', short: 'h' } } } as const;
  let parsed: ReturnType<typeof parseArgs<typeof config>>;
  try {
    parsed = parseArgs(config);
  } catch (e) {
    return failWith(name)(2, `${(e as Error).message}\n${usage}`);
  }
  // `help` is in every CLI's options; TypeScript cannot see it through the generic `O`.
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return parsed;
}
