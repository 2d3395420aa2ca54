// What the benchmark's outputs take on disk, and whether a size fits before it starts: at 1,000,000
// profiles the content, the releases, the floor's and Hugo's folders are millions of files and GBs,
// and a disk or inode table that fills halfway through wastes hours (issue 31).
import fs from 'node:fs';
import path from 'node:path';

export interface Usage {
  /** Bytes the files take on disk (allocated blocks), each inode once: a release's hard links to the last one's pages cost nothing twice. */
  bytes: number;
  inodes: number;
}

/** The disk use of `dir`, folders and links included; nothing when it does not exist. */
export function usage(dir: string): Usage {
  const seen = new Set<number>();
  const total: Usage = { bytes: 0, inodes: 0 };
  const count = (p: string) => {
    let st: fs.BigIntStats;
    try {
      st = fs.lstatSync(p, { bigint: true });
    } catch {
      return;
    }
    const ino = Number(st.ino);
    if (!seen.has(ino)) {
      seen.add(ino);
      total.inodes++;
      total.bytes += Number(st.blocks) * 512;
    }
    if (st.isDirectory()) for (const entry of fs.readdirSync(p)) count(path.join(p, entry));
  };
  count(dir);
  return total;
}

/** Free bytes and inodes for an unprivileged user on the file system holding `dir`. */
export function free(dir: string): Usage {
  const s = fs.statfsSync(dir);
  return { bytes: s.bavail * s.bsize, inodes: s.ffree };
}

export const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;
export const millions = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} million` : Math.round(n).toLocaleString('en'));

/** `per` profile times `n`, and 10% more: a size's files are not all the size of the small build's that were measured. */
export const scaled = (per: Usage, n: number, margin = 1.1): Usage => ({ bytes: per.bytes * n * margin, inodes: per.inodes * n * margin });

export const add = (...us: Usage[]): Usage => ({ bytes: us.reduce((s, u) => s + u.bytes, 0), inodes: us.reduce((s, u) => s + u.inodes, 0) });

/** Null when `need` fits in what `dir`'s file system has free, else the sentence saying what is missing. */
export function shortOf(need: Usage, dir: string, what: string, have = free(dir)): string | null {
  if (need.bytes <= have.bytes && need.inodes <= have.inodes) return null;
  return `${what}: need about ${gb(need.bytes)} and ${millions(need.inodes)} inodes free on the disk of ${dir}; it has ${gb(have.bytes)} and ${millions(have.inodes)}`;
}

/**
 * Whether new files on the file system holding `dir` are slowed by files deleted just before: ext4
 * without a journal (this machine's disk), whose inode allocator skips every inode freed in the
 * last 60 s (fs/ext4/ialloc.c `recently_deleted`; 360 s while the inode's table block is not yet
 * written), looking up that block for each one it passes, for every file it creates. Read from
 * /proc/self/mountinfo (the mount holding `dir`) and /sys/fs/ext4/<device>/journal_task; `read`
 * reads those files (a test gives others).
 */
export function slowAfterDeleting(dir: string, read = (file: string) => fs.readFileSync(file, 'utf8')): boolean {
  let real = path.resolve(dir);
  try {
    real = fs.realpathSync(real);
  } catch { /* not made yet: its path as given */ }
  let best: { point: string; type: string; source: string } | undefined;
  try {
    // Fields: id parent major:minor root mount-point options [optional...] - type source super-options
    for (const line of read('/proc/self/mountinfo').split('\n')) {
      const [left, right] = line.split(' - ');
      if (!left || !right) continue;
      const point = left.split(' ')[4]!.replace(/\\040/g, ' ');
      const [type, source] = right.split(' ');
      const inside = point === '/' || real === point || real.startsWith(`${point}/`);
      if (inside && (!best || point.length >= best.point.length)) best = { point, type: type!, source: source! };
    }
    return best?.type === 'ext4' && read(`/sys/fs/ext4/${path.basename(best.source)}/journal_task`).trim() === '<none>';
  } catch {
    return false;
  }
}
