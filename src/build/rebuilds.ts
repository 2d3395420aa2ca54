// `npm start`'s builder: one process (`npm run build -- --rebuilds`) that builds edit after edit,
// so what every edit build would read first is read once, while no edit waits: Node and the code
// (0.4 s), and the served release's record (plan.ts `servedRecord`: 2 s at 1,000,000 profiles,
// read again after each build, before the next edit comes). The builds are the same as `npm run
// build`'s, one at a time, with the same lock.
// - The watcher (scripts/start-site.ts) writes one line of JSON per build to its stdin: the
//   variables of that build (CHANGED_FILES, CHANGED_SINCE) over the builder's environment.
// - The builder prints the build's output as a build does, then `END` and the exit code as a line of
//   its own on stdout and on stderr: the watcher takes each stream's output up to it as that build's.
// - After a build that read every profile (or one refused before it started) the builder exits
//   once it has said so: such a build holds the most memory a build holds, and a process started
//   afresh (the watcher starts one at once) holds only the record. The same after a crash.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import type { BuildResult } from './pipeline.ts';

/** The line that ends a build's output on each stream: `END <code>`, then `leaving` when the builder exits after it. */
export const END = '\u001eend of build';

/** The builder's side: `build` for each line read from stdin, `read` (what the next build reads first) before the first and after each. */
export async function serveRebuilds(build: (request: Record<string, string | undefined>) => Promise<BuildResult>, read: () => void): Promise<void> {
  // Reading ahead only saves time: what fails here, the build reports (bad options, a broken record).
  const warm = () => {
    try {
      read();
    } catch { /* the build says */ }
  };
  warm();
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let result: BuildResult;
    try {
      result = await build(requestOf(line));
    } catch (e) {
      console.error(`build: ${(e as Error).stack ?? e}`);
      result = { code: 1, readEveryProfile: true };
    }
    const leaving = result.readEveryProfile;
    // Pipes are written synchronously on Linux and macOS: the line follows everything the build printed.
    const end = `\n${END} ${result.code}${leaving ? ' leaving' : ''}\n`;
    process.stdout.write(end);
    process.stderr.write(end);
    if (leaving) process.exit(0);
    warm();
  }
}

/** A request's variables: CHANGED_FILES and CHANGED_SINCE only, strings. */
function requestOf(line: string): Record<string, string | undefined> {
  const parsed = JSON.parse(line) as Record<string, unknown>;
  const request: Record<string, string | undefined> = { CHANGED_FILES: undefined, CHANGED_SINCE: undefined };
  for (const name of ['CHANGED_FILES', 'CHANGED_SINCE'] as const) if (typeof parsed[name] === 'string') request[name] = parsed[name];
  return request;
}

/** How a build through the builder ended: its exit code and what it printed on each stream. */
export interface Rebuilt { code: number; stdout: string; stderr: string }

type Stream = 'stdout' | 'stderr';

/** The watcher's side: a builder started at once, and again as soon as the last one has left. */
export class Builder {
  #current: { child: ChildProcess; out: Record<Stream, string> } | undefined;
  #waiting: ((rebuilt: Rebuilt) => void) | undefined;
  readonly #start: () => ChildProcess;

  /** `start`: spawns `npm run build -- --rebuilds` with stdin, stdout and stderr piped (`spawnBuilder`). */
  constructor(start: () => ChildProcess) {
    this.#start = start;
    this.#spawn();
  }

  /** The running builder, for signals. */
  get child(): ChildProcess | undefined {
    return this.#current?.child;
  }

  #spawn(): void {
    const state = { child: this.#start(), out: { stdout: '', stderr: '' } };
    this.#current = state;
    const take = (stream: Stream) => (chunk: Buffer) => {
      state.out[stream] += chunk.toString();
      if (this.#current === state) this.#ended(state);
    };
    // Written to after it died: its 'close' says so.
    state.child.stdin!.on('error', () => {});
    state.child.stdout!.on('data', take('stdout'));
    state.child.stderr!.on('data', take('stderr'));
    state.child.once('close', (code) => {
      if (this.#current !== state) return;
      this.#current = undefined;
      // Died during a build (a crash, the kernel's OOM killer): that build failed, with what it printed.
      this.#waiting?.({ code: code || 1, ...state.out });
    });
  }

  /** When both streams have the end of a build: its result, and a new builder if this one leaves. */
  #ended(state: { child: ChildProcess; out: Record<Stream, string> }): void {
    const marks = (['stdout', 'stderr'] as const).map((stream) => {
      const text = state.out[stream];
      const at = text.indexOf(`\n${END} `);
      const eol = at < 0 ? -1 : text.indexOf('\n', at + 1);
      return eol < 0 ? undefined : { before: text.slice(0, at), line: text.slice(at + 1, eol), after: text.slice(eol + 1) };
    });
    if (!marks[0] || !marks[1]) return;
    const [out, err] = marks as [NonNullable<(typeof marks)[0]>, NonNullable<(typeof marks)[0]>];
    state.out = { stdout: out.after, stderr: err.after };
    const [code, leaving] = out.line.slice(END.length + 1).split(' ');
    if (leaving) this.#spawn();
    const lines = (text: string) => (text && !text.endsWith('\n') ? `${text}\n` : text);
    this.#waiting?.({ code: Number(code), stdout: lines(out.before), stderr: lines(err.before) });
  }

  /** One build with `request`'s variables (CHANGED_FILES, CHANGED_SINCE); one at a time. */
  build(request: Record<string, string>): Promise<Rebuilt> {
    if (!this.#current) this.#spawn();
    return new Promise((resolve) => {
      this.#waiting = (rebuilt) => {
        this.#waiting = undefined;
        resolve(rebuilt);
      };
      this.#current!.child.stdin!.write(`${JSON.stringify(request)}\n`);
    });
  }

  /** Ends the builder: its stdin closes, and it exits after the build it runs, if any. */
  stop(): void {
    this.#current?.child.stdin?.end();
  }
}

/** A builder's process: `npm run build`'s Node arguments with `--rebuilds`, every stream piped. */
export const spawnBuilder = (execPath: string, nodeArgs: string[], cwd: string, env: NodeJS.ProcessEnv) => (): ChildProcess =>
  spawn(execPath, [...nodeArgs, '--rebuilds'], { cwd, stdio: ['pipe', 'pipe', 'pipe'], env });
