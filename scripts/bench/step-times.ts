// The time of each step of a build, from the lines it prints (`Validating content… 0.4 s`,
// src/build/pipeline.ts), and the table that shows whether any step grows worse than linearly with
// the number of profiles (issue 31): each step's time per size, and its time per profile against
// the size before.

export interface StepTime {
  /** The step as the build named it: `Rendering 500 of 500 profile pages with … (and writing the API files)`. */
  name: string;
  /** The same for every size, so the steps of two builds line up: numbers become N, and what follows ` with ` goes. */
  key: string;
  seconds: number;
}

/** A step's name without what changes with the size or the way it ran: `Rendering N of N profile pages`. */
export const stepKey = (name: string) => name.replace(/\d[\d,]*/g, 'N').replace(/ with .*$/, '').trim();

/**
 * Every step a build's stdout reports, in order. A step prints `Name…` when it starts and ` 1.2 s`
 * when it ends; lines printed in between (the render step's progress) push its time onto a later
 * line, `  finished: 1.2 s` or a bare ` 1.2 s`.
 */
export function parseSteps(stdout: string): StepTime[] {
  const steps: StepTime[] = [];
  let open: string | undefined;
  for (const line of stdout.split('\n')) {
    const started = /^(\S.*?)…(.*)$/.exec(line);
    if (started) {
      open = started[1]!;
      const done = /^ (\d+(?:\.\d+)?) s$/.exec(started[2]!);
      if (done) {
        steps.push({ name: open, key: stepKey(open), seconds: Number(done[1]) });
        open = undefined;
      }
      continue;
    }
    const done = open === undefined ? null : /^\s*(?:finished:)?\s*(\d+(?:\.\d+)?) s$/.exec(line);
    if (done) {
      steps.push({ name: open!, key: stepKey(open!), seconds: Number(done[1]) });
      open = undefined;
    }
  }
  return steps;
}

/** The median over several runs of one build, per step (runs lacking a step do not count for it). */
export function medianSteps(runs: StepTime[][]): Map<string, number> {
  const byKey = new Map<string, number[]>();
  for (const run of runs) {
    // Two steps of one run with the same key (none today) add up.
    const sums = new Map<string, number>();
    for (const s of run) sums.set(s.key, (sums.get(s.key) ?? 0) + s.seconds);
    for (const [key, seconds] of sums) byKey.set(key, [...(byKey.get(key) ?? []), seconds]);
  }
  return new Map([...byKey].map(([key, xs]) => [key, [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!]));
}

/**
 * One row per step, one column per size: its seconds and, from the second size on, its time per
 * profile over the size before's (1.0x is linear; a quadratic step doubles it each time the size
 * doubles). A step too quick to time (under 0.1 s) at the size before shows no ratio.
 */
export function stepTable(bySize: [number, Map<string, number>][]): string {
  const keys = [...new Set(bySize.flatMap(([, steps]) => [...steps.keys()]))];
  const head = `| step | ${bySize.map(([n], i) => `${n.toLocaleString('en')}${i ? ' | per profile vs the size before' : ''}`).join(' | ')} |`;
  const rule = `|---|${bySize.map((_, i) => (i ? '---|---|' : '---|')).join('')}`;
  const rows = keys.map((key) => {
    const cells = bySize.map(([n, steps], i) => {
      const s = steps.get(key);
      const cell = s === undefined ? '–' : `${s.toFixed(1)} s`;
      if (!i) return cell;
      const [m, before] = bySize[i - 1]!;
      const b = before.get(key);
      const ratio = s === undefined || b === undefined || b < 0.1 ? '–' : `${((s / n) / (b / m)).toFixed(2)}x`;
      return `${cell} | ${ratio}`;
    });
    return `| ${key} | ${cells.join(' | ')} |`;
  });
  return [head, rule, ...rows].join('\n');
}
