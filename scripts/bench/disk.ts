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
