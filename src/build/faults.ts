// Fault injection for the tests of the build's crash safety (test/build/releases-crash.test.ts);
// nothing here runs unless `BUILD_FAULT` is set. Comma-separated, each one of:
//   <step>          the build kills itself with SIGKILL when it reaches <step>: no handler, no cleanup
//   enospc@<step>   a write at <step> fails as on a full disk (ENOSPC)
//   pause@<step>    the build prints `PAUSED <step>` and waits until its stdin closes
// The steps, in order, are `BUILD_STEPS`; `compiling` is the compile's (`COMPILE_STEP`).

/** The named points of a build, in the order it reaches them. */
export const BUILD_STEPS = ['locked', 'cleaned', 'validated', 'rendering', 'rendered', 'written', 'sealed', 'switching', 'switched'] as const;
/** The point where the compile of a first build of new code, a process of its own (astro/compile-process.ts), begins: reached only by such builds. */
export const COMPILE_STEP = 'compiling';
export type BuildStep = (typeof BUILD_STEPS)[number] | typeof COMPILE_STEP;
/** Every step a fault may name. */
const FAULT_STEPS: readonly string[] = [...BUILD_STEPS, COMPILE_STEP];

const faults = (env: NodeJS.ProcessEnv) => (env.BUILD_FAULT ?? '').split(',').filter(Boolean).map((f) => {
  const at = f.indexOf('@');
  return at < 0 ? { kind: 'kill', step: f } : { kind: f.slice(0, at), step: f.slice(at + 1) };
});

/** Dies, throws or pauses here when `BUILD_FAULT` names this step; `detail` goes into the message. */
export async function faultPoint(step: BuildStep, detail = '', env: NodeJS.ProcessEnv = process.env): Promise<void> {
  for (const f of faults(env)) {
    if (f.step !== step) continue;
    if (f.kind === 'kill') {
      process.stderr.write(`BUILD_FAULT: SIGKILL at ${step}${detail ? ` (${detail})` : ''}\n`);
      process.kill(process.pid, 'SIGKILL');
    } else if (f.kind === 'enospc') {
      throw Object.assign(new Error(`ENOSPC: no space left on device, write (BUILD_FAULT at ${step})`), { code: 'ENOSPC', errno: -28, syscall: 'write' });
    } else if (f.kind === 'pause') {
      process.stdout.write(`PAUSED ${step}\n`);
      await new Promise<void>((resolve) => {
        process.stdin.once('close', resolve).once('end', resolve).resume();
      });
      process.stdin.pause();
    }
  }
}

/** Throws when `BUILD_FAULT` holds a step that does not exist: a misspelt fault would test nothing. */
export function checkFaults(env: NodeJS.ProcessEnv = process.env): void {
  for (const f of faults(env)) {
    if (!FAULT_STEPS.includes(f.step) || !['kill', 'enospc', 'pause'].includes(f.kind)) {
      throw new Error(`BUILD_FAULT: no fault \`${f.kind === 'kill' ? f.step : `${f.kind}@${f.step}`}\`; steps: ${FAULT_STEPS.join(', ')}`);
    }
  }
}
