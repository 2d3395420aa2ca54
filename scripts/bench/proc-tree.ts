// The memory of a process and every process it started, read from /proc while they run: Node gives
// no rusage of a child's children, and a build's peak is the peak of all its processes together
// (issue 31's "peak memory, summed over all its processes"). Linux only; `proc` is a parameter so the
// tests can hand it a fake /proc folder.
import fs from 'node:fs';
import path from 'node:path';

/** A `kB` field of /proc/<pid>/status (VmRSS, VmHWM), or 0 when the process is gone or has none (a zombie). */
export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM', proc = '/proc'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(path.join(proc, String(pid), 'status'), 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // gone between the listing and the read
  }
}

/** The parent of each process now running, from each /proc/<pid>/stat (threads are not listed there, only under task/). */
function parents(proc: string): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(path.join(proc, entry, 'stat'), 'utf8');
    } catch {
      continue;
    }
    // The command name is in parentheses and may hold spaces and parentheses: the fields follow the last `)`.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  return children;
}

/** `root` and its descendants now running, each process once. */
export function processTree(root: number, proc = '/proc'): number[] {
  const children = parents(proc);
  const tree: number[] = [];
  const seen = new Set<number>();
  for (const todo = [root]; todo.length;) {
    const pid = todo.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    tree.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** The RSS of `root` and its descendants now, added up (threads share their process's RSS, so each process counts once). */
export function treeRssKb(root: number, proc = '/proc'): { kb: number; processes: number } {
  const tree = processTree(root, proc);
  return { kb: tree.reduce((sum, pid) => sum + statusKb(pid, 'VmRSS', proc), 0), processes: tree.length };
}

export interface TreePeak {
  /** The highest sum of the tree's RSS over the samples. */
  treeKb: number;
  /** The main process's own high-water mark (VmHWM: exact, not sampled). */
  mainKb: number;
  /** The most processes the tree had at once. */
  processes: number;
}

/**
 * Samples the tree of `pid` every `everyMs` until `stop()`, which returns its peaks. Sampled, so a
 * peak shorter than `everyMs` in a child can be missed; the main process's VmHWM cannot.
 */
export function sampleTree(pid: number, everyMs = 100, proc = '/proc'): { stop: () => TreePeak } {
  const peak: TreePeak = { treeKb: 0, mainKb: 0, processes: 0 };
  const sample = () => {
    const now = treeRssKb(pid, proc);
    peak.treeKb = Math.max(peak.treeKb, now.kb);
    peak.processes = Math.max(peak.processes, now.processes);
    peak.mainKb = Math.max(peak.mainKb, statusKb(pid, 'VmHWM', proc));
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample(); // the last one, before the process is reaped: gone, it reads 0 and changes nothing
      return { ...peak };
    },
  };
}
