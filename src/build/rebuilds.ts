// `npm start`'s builder: one process (`npm run build -- --rebuilds`) that builds edit after edit,
// so what every edit build would read first is read once, while no edit waits: Node and the code
// (0.4 s), and the served release's record (plan.ts `servedRecord`: 2 s at 1,000,000 profiles;
// after a build, the record it wrote, handed over). The builds are the same as `npm run build`'s,
// one at a time, with the same lock.
// - The watcher (scripts/start-site.ts) writes one line of JSON per build to its stdin: the
//   variables of that build (CHANGED_FILES, CHANGED_SINCE) over the builder's environment.
// - The builder prints the build's output as a build does, then `END` and the exit code as a line of
//   its own on stdout and on stderr: the watcher takes each stream's output up to it as that build's.
// - A build that must read every profile is run by `npm run build` in a process of its own (the
//   builder's memory holds the record, and such a build at 1,000,000 profiles needs 4 GB more);
//   then the builder exits, and the watcher starts another, which reads the new record. The same
//   after a crash.
// - A build told which files changed is checked after it served (build-site.ts): here by a process
//   of its own at the lowest priority, which takes no lock while it looks (pipeline.ts), so the next
//   edit is not kept waiting (at 1,000,000 profiles the look takes 6 s). One check at a time: a newer
//   one, or a build that read every profile, makes the running one pointless, and it is stopped.
//   What a check printed reaches the watcher, after `CHECKED` and its exit code, only when it built
//   something or failed.
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import readline from 'node:readline';
import type { BuildResult } from './pipeline.ts';

/** The exit code of a build with `editOnly` (pipeline.ts) that must read every profile: run it in a process of its own. */
export const EX_ELSEWHERE = 65;

/** The line that ends a build's output on each stream: `END <code>`, then `leaving` when the builder exits after it. */
export const END = '\u001eend of build';
/** The line that ends what a check printed, on each stream: `CHECKED <code>`. */
export const CHECKED = '\u001echecked';

/** What the builder runs. */
export interface Rebuilds {
  /** One build of a request's variables; `checkBefore`: it trusted a list of changed files, and a check must look at what changed before then. */
  build(request: Record<string, string | undefined>): Promise<BuildResult & { checkBefore?: number }>;
  /** Reads what the next build reads first (the served record...), before the first build and after each. */
  read(): void;
  /** scripts/build-site.ts: a check, and a build of every profile, run as processes of their own. */
  script: string;
}

/** The builder's side: a build for each line read from stdin. */
export async function serveRebuilds({ build, read, script }: Rebuilds): Promise<void> {
  // Reading ahead only saves time: what fails here, the build reports (bad options, a broken record).
  const warm = () => {
    try {
      read();
    } catch { /* the build says */ }
  };
  let building = false;
  /** What checks printed that the watcher has not been given: written between builds. */
  const said: string[][] = [];
  const flush = () => {
    if (building) return;
    for (const [out, err] of said.splice(0)) {
      process.stdout.write(out!);
      process.stderr.write(err!);
    }
  };
  let checking: ChildProcess | undefined;
  let elsewhere: ChildProcess | undefined;
  // The builder stopped (stdin closed, a signal): so are its children, which would write into closed
  // pipes (a build stopped half-way leaves the last good release served).
  const stopChildren = () => {
    checking?.kill();
    if (elsewhere?.exitCode === null) elsewhere.kill();
  };
  process.once('exit', stopChildren);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  const startCheck = (before: number) => {
    checking?.kill();
    const child = spawnCheck(script, before);
    checking = child;
    // The lowest priority: the thread that looks and the threads it starts yield to the next edit's build.
    try { os.setPriority(child.pid!, 19); } catch { /* not allowed: it runs as any build */ }
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => { out += d; });
    child.stderr!.on('data', (d: Buffer) => { err += d; });
    child.once('close', (code, signal) => {
      if (checking === child) checking = undefined;
      // Stopped for a newer one, or refused by a build's lock (75): that build or check covers it.
      if (signal || code === 75 || (code === 0 && !/^Built /m.test(out))) return;
      const end = `\n${CHECKED} ${code}\n`;
      said.push([`${out}${end}`, `${err}${end}`]);
      flush();
    });
  };
  warm();
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let result: BuildResult & { checkBefore?: number };
    building = true;
    try {
      const request = requestOf(line);
      result = await build(request);
      // A build of every profile: by `npm run build` in a process of its own, printing into the same streams.
      if (result.code === EX_ELSEWHERE) result = { code: await runElsewhere(script, request, (child) => { elsewhere = child; }), readEveryProfile: true };
    } catch (e) {
      console.error(`build: ${(e as Error).stack ?? e}`);
      result = { code: 1, readEveryProfile: true };
    }
    building = false;
    const leaving = result.readEveryProfile;
    // A build that read every profile saw every change a check would look for.
    if (leaving) checking?.kill();
    // Pipes are written synchronously on Linux and macOS: the line follows everything the build printed.
    const end = `\n${END} ${result.code}${leaving ? ' leaving' : ''}\n`;
    process.stdout.write(end);
    process.stderr.write(end);
    flush();
    if (leaving) process.exit(0);
    if (result.checkBefore !== undefined) startCheck(result.checkBefore);
    warm();
  }
  checking?.kill();
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
  readonly #onCheck: (checked: Rebuilt) => void;

  /**
   * `start`: spawns `npm run build -- --rebuilds` with stdin, stdout and stderr piped (`spawnBuilder`).
   * `onCheck`: what a check after a build printed, when it built something or failed.
   */
  constructor(start: () => ChildProcess, onCheck: (checked: Rebuilt) => void = () => {}) {
    this.#start = start;
    this.#onCheck = onCheck;
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

  /** When both streams have the end of a build or of a check: its result, and a new builder if this one leaves. */
  #ended(state: { child: ChildProcess; out: Record<Stream, string> }): void {
    for (;;) {
      const marks = (['stdout', 'stderr'] as const).map((stream) => {
        const text = state.out[stream];
        const at = text.indexOf('\n\u001e');
        const eol = at < 0 ? -1 : text.indexOf('\n', at + 1);
        return eol < 0 ? undefined : { before: text.slice(0, at), line: text.slice(at + 1, eol), after: text.slice(eol + 1) };
      });
      if (!marks[0] || !marks[1]) return;
      const [out, err] = marks as [NonNullable<(typeof marks)[0]>, NonNullable<(typeof marks)[0]>];
      state.out = { stdout: out.after, stderr: err.after };
      const lines = (text: string) => (text && !text.endsWith('\n') ? `${text}\n` : text);
      if (out.line.startsWith(`${CHECKED} `)) {
        this.#onCheck({ code: Number(out.line.slice(CHECKED.length + 1)), stdout: lines(out.before), stderr: lines(err.before) });
        continue;
      }
      const [code, leaving] = out.line.slice(END.length + 1).split(' ');
      if (leaving) this.#spawn();
      this.#waiting?.({ code: Number(code), stdout: lines(out.before), stderr: lines(err.before) });
      return;
    }
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

/** `script` (scripts/build-site.ts) with this process's Node arguments and environment, with `vars` set (undefined: unset). */
function spawnScript(script: string, vars: Record<string, string | undefined>, stdio: 'pipe' | 'inherit'): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(vars)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return spawn(process.execPath, [...process.execArgv, script], { stdio: ['ignore', stdio, stdio], env });
}

/** A check: BUILD_IF_CHANGED=`before`, not told of changed files; its stdout and stderr piped. */
const spawnCheck = (script: string, before: number) => spawnScript(script, { BUILD_IF_CHANGED: String(before), CHANGED_FILES: undefined, CHANGED_SINCE: undefined }, 'pipe');

/** The build of `request` by a process of its own, printing into this one's stdout and stderr; resolves with its exit code. */
function runElsewhere(script: string, request: Record<string, string | undefined>, started: (child: ChildProcess) => void): Promise<number> {
  const child = spawnScript(script, request, 'inherit');
  started(child);
  return new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? 128 + os.constants.signals[signal!])));
}
