// Counts the work a function does, as V8's block coverage counts it: how many times each function
// and each block of code ran. Deterministic where time is not, so a test can assert how the work
// grows with the input (linear or quadratic) without a wall-clock threshold.
import { Session } from 'node:inspector';
import { filesRun } from './files-run.ts';

function post<T>(session: Session, method: string, params?: object): T {
  let out: T | undefined;
  let error: Error | null = null;
  // A session on this thread answers synchronously: the callback has run when `post` returns.
  session.post(method, params, (e, result) => { error = e; out = result as T; });
  if (error) throw error;
  return out!;
}

type Coverage = { result: { functions: { ranges: { count: number }[] }[] }[] };

// Started once, when this module loads, and never stopped: V8 adds block counters to a function
// when it compiles it, so code compiled before coverage started, or between two starts, would not
// be counted. Import this module before the code to measure.
// A worker that ran other test files compiled their code uncounted (vitest.config.ts `isolate: false`).
if (filesRun() > 1) {
  throw new Error('This test file counts operations: it must run in a process of its own. Add it to OWN_PROCESS in vitest.config.ts.');
}
const session = new Session();
session.connect();
post(session, 'Profiler.enable');
post(session, 'Profiler.startPreciseCoverage', { callCount: true, detailed: true });

/** Blocks of JavaScript executed by `work` (in any module), counted with repeats. */
export function countOperations(work: () => void): number {
  post<Coverage>(session, 'Profiler.takePreciseCoverage'); // resets the counters
  work();
  const { result } = post<Coverage>(session, 'Profiler.takePreciseCoverage');
  let total = 0;
  for (const script of result) for (const fn of script.functions) for (const r of fn.ranges) total += r.count;
  return total;
}
