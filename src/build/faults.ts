// Fault injection for the tests of the build's crash safety (test/build/releases-crash.test.ts);
// nothing here runs unless `BUILD_FAULT` is set. Comma-separated, each one of:
//   <step>          the build kills itself with SIGKILL when it reaches <step>: no handler, no cleanup
//   enospc@<step>   a write at <step> fails as on a full disk (ENOSPC)
//   pause@<step>    the build prints `PAUSED <step>` and waits until its stdin closes
// The steps, in order, are `BUILD_STEPS`; `compiling` is the compile's (`COMPILE_STEP`), `users` the
// user answers' writer's (`USERS_STEP`, enospc only).

/** The named points of a build, in the order it reaches them. */
export const BUILD_STEPS = ['locked', 'cleaned', 'validated', 'rendering', 'rendered', 'written', 'sealed', 'switching', 'switched'] as const;
/** The point where the compile of a first build of new code, a process of its own (astro/compile-process.ts), begins: reached only by such builds. */
export const COMPILE_STEP = 'compiling';
export type BuildStep = (typeof BUILD_STEPS)[number] | typeof COMPILE_STEP | typeof COMPILED_STEP;
/** The compile's end, after `astro build` (and Cloudflare's plugin) wrote its files, before the process exits. */
export const COMPILED_STEP = 'compiled';
/** Where the user answers are written, beside the rendering (write-build.ts): a full disk there fails the build after the render. */
export const USERS_STEP = 'users';
/** Every step a fault may name. */
const FAULT_STEPS: readonly string[] = [...BUILD_STEPS, COMPILE_STEP, COMPILED_STEP, USERS_STEP];

const faults = (env: NodeJS.ProcessEnv) => (env.BUILD_FAULT ?? '').split(',').filter(Boolean).map((f) => {
  const at = f.indexOf('@');
  return at < 0 ? { kind: 'kill', step: f } : { kind: f.slice(0, at), step: f.slice(at + 1) };
});

/** The error a write on a full disk throws, as `enospc@<step>` makes it. */
const fullDisk = (step: string) => Object.assign(new Error(`ENOSPC: no space left on device, write (BUILD_FAULT at ${step})`), { code: 'ENOSPC', errno: -28, syscall: 'write' });

/** Dies, throws or pauses here when `BUILD_FAULT` names this step; `detail` goes into the message. */
export async function faultPoint(step: BuildStep, detail = '', env: NodeJS.ProcessEnv = process.env): Promise<void> {
  for (const f of faults(env)) {
    if (f.step !== step) continue;
    if (f.kind === 'kill') {
      process.stderr.write(`BUILD_FAULT: SIGKILL at ${step}${detail ? ` (${detail})` : ''}\n`);
      process.kill(process.pid, 'SIGKILL');
    } else if (f.kind === 'enospc') {
      throw fullDisk(step);
    } else if (f.kind === 'pause') {
      process.stdout.write(`PAUSED ${step}\n`);
      await new Promise<void>((resolve) => {
        process.stdin.once('close', resolve).once('end', resolve).resume();
      });
      process.stdin.pause();
    }
  }
}

/** `enospc@<step>` where the code at `step` cannot wait (a thread writing files): throws as a full disk does. */
export function diskFullAt(step: typeof USERS_STEP, env: NodeJS.ProcessEnv = process.env): void {
  if (faults(env).some((f) => f.kind === 'enospc' && f.step === step)) throw fullDisk(step);
}

/** Throws when `BUILD_FAULT` holds a step that does not exist: a misspelt fault would test nothing. */
export function checkFaults(env: NodeJS.ProcessEnv = process.env): void {
  for (const f of faults(env)) {
    if (!FAULT_STEPS.includes(f.step) || !['kill', 'enospc', 'pause'].includes(f.kind)) {
      throw new Error(`BUILD_FAULT: no fault \`${f.kind === 'kill' ? f.step : `${f.kind}@${f.step}`}\`; steps: ${FAULT_STEPS.join(', ')}`);
    }
  }
}

/** Error codes of a disk that is full (a quota, a file size limit) or failing: the disk's fault, not the build's. */
const DISK_CODES = ['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO'] as const;

/**
 * The code of a failure that is the disk's (DISK_CODES), found on the error, its causes, or in
 * their messages (an error from a thread arrives as text): what the build then says in words.
 */
export function diskFault(e: unknown): (typeof DISK_CODES)[number] | undefined {
  for (let x = e, depth = 0; x !== undefined && x !== null && depth < 5; x = (x as { cause?: unknown }).cause, depth++) {
    const code = (x as NodeJS.ErrnoException).code;
    if (DISK_CODES.includes(code as never)) return code as (typeof DISK_CODES)[number];
    const named = /\b(ENOSPC|EDQUOT|EFBIG|EIO)\b/.exec(String((x as Error).message ?? x));
    if (named) return named[1] as (typeof DISK_CODES)[number];
  }
  return undefined;
}

/** What a build stopped by the disk says: the folder, what to do, and that nothing is left to clean. */
export function diskFaultMessage(code: NonNullable<ReturnType<typeof diskFault>>, folder: string): string {
  const what = code === 'EIO' ? 'could not be written (EIO: full, or failing)' : code === 'EFBIG' ? 'refused a file as too large (EFBIG: a file size limit, such as `ulimit -f`)' : `is full (${code})`;
  return `the disk holding ${folder} ${what}: free space there${code === 'EIO' ? ' or check the disk' : ''}, then build again. Nothing needs cleaning up: what this build wrote is removed, and the next build removes anything left.`;
}
