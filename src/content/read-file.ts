// Reading content files without following links. Content arrives by pull request from strangers,
// and git stores symbolic links: a link committed as `decorations/x.png` that pointed at
// `/proc/self/environ` would otherwise publish the build machine's secrets. So every file is
// opened with O_NOFOLLOW (a link as the last part of the path fails to open), checked on the open
// descriptor (fstat: a regular file, within its size limit), and, where /proc tells, checked to be
// the very file its path names inside the content folder (no folder on the way was a link). The
// checks and the read use one descriptor, so nothing can be swapped in between.
import fs from 'node:fs';
import path from 'node:path';
import { MAX_CONTENT_BYTES, MAX_IMAGE_BYTES, MAX_VIEWS_FILE_BYTES, MAX_YAML_FILE_BYTES, formatBytes } from '../schemas/limits.ts';
import { imageProblem } from '../schemas/image-signature.ts';
import type { ContentProblem } from './problems.ts';

export type ReadResult = { ok: true; bytes: Buffer } | { ok: false; problems: ContentProblem[] };

/** What a limit is for and how to get under it, for the message of a file that is too big. */
export interface SizeLimit {
  bytes: number;
  /** e.g. `a profile file`. */
  what: string;
  hint: string;
}

export const YAML_LIMIT: SizeLimit = {
  bytes: MAX_YAML_FILE_BYTES,
  what: 'a content YAML file',
  hint: 'shorten it: a profile needs far less (long notes under `private:` belong elsewhere, they are never published)',
};

export const VIEWS_LIMIT: SizeLimit = {
  bytes: MAX_VIEWS_FILE_BYTES,
  what: '`stats/views.yaml`',
  hint: 'keep one `username: count` line per profile and nothing else (`npm run views:import` writes it)',
};

/** Content files are UTF-8; `fatal` so a bad byte is an error with its line, never a silent U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The offset of the first byte of `bytes` that does not start (or continue) a valid UTF-8 sequence (RFC 3629 §4), or -1. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    if (b < 0x80) { i++; continue; }
    const n = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n < 0 || i + n >= bytes.length + (n ? 0 : 1)) return i;
    // The second byte's range excludes overlong forms, surrogates (ED A0-BF) and code points past U+10FFFF.
    const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    if (bytes[i + 1]! < lo || bytes[i + 1]! > hi) return i;
    for (let k = 2; k <= n; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return -1;
}

const lineAt = (bytes: Uint8Array, offset: number) => {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
};

/**
 * The text of a YAML file, which must be UTF-8 (a leading BOM is dropped) with no NUL: UTF-16, a
 * stray Latin-1 byte or binary data is an error naming its line, not text quietly changed.
 */
export function decodeText(file: string, bytes: Uint8Array): { ok: true; text: string } | { ok: false; problems: ContentProblem[] } {
  const fail = (line: number, message: string, hint: string) => ({ ok: false as const, problems: [{ file, line, column: 1, message, hint }] });
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return fail(1, 'is UTF-16 text: content files are UTF-8', 'save it as UTF-8 (your editor\'s "Save with encoding" or `iconv -f UTF-16 -t UTF-8`)');
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) return fail(lineAt(bytes, nul), 'holds a NUL byte: it is binary, or UTF-16 text without a byte order mark', 'save it as UTF-8 text');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    return fail(lineAt(bytes, Math.max(0, at)), 'is not valid UTF-8 on this line (a byte of another encoding, such as Latin-1 or Windows-1252)', 'save the file as UTF-8, or retype the character on this line');
  }
  return { ok: true, text };
}

export const IMAGE_LIMIT: SizeLimit = {
  bytes: MAX_IMAGE_BYTES,
  what: 'an image',
  hint: 'scale it down (it is shown at most a few hundred pixels wide) or compress it',
};

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0; // a FIFO opens at once instead of waiting for a writer
const FD_PATHS = '/proc/self/fd';

export const LINK_PROBLEM = {
  message: 'is a symbolic link: links in the content folder are never followed',
  hint: 'commit the file itself instead of a link to it (or delete the link)',
};

/** `a FIFO`, `a socket`, ... for a file that is neither a regular file nor a folder. */
export function fileKind(s: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): string {
  if (s.isSymbolicLink()) return 'a symbolic link';
  if (s.isDirectory()) return 'a folder';
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

export const notRegularProblem = (kind: string) => ({
  message: `is ${kind}, not a regular file`,
  hint: 'content files are plain files: delete it and commit the file itself',
});

/**
 * Opens and reads the files of one content folder. Also keeps the total of the files it opened,
 * against MAX_CONTENT_BYTES: once over, it reports that once and reads nothing more.
 */
export class ContentReader {
  /** The content folder, absolute, as given. */
  readonly root: string;
  /** The same folder with the links of its parents resolved (the operator's machine may have some): what /proc shows. */
  #realRoot: string | undefined;
  #total = 0;
  #over = false;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /**
   * Why the content folder itself cannot be read, or undefined. The folder may not be a link
   * either: the default `./content` is part of the repository, where a pull request could replace
   * it by a link, and a link the operator made cannot be told from one a stranger committed. An
   * operator who keeps content elsewhere sets CONTENT_DIR to that folder (links among its parents
   * are the machine's own and are fine).
   */
  rootProblem(): ContentProblem | undefined {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(this.root);
    } catch {
      return { file: this.root, message: 'the content folder does not exist', hint: 'set CONTENT_DIR to a folder with a `profiles/` folder in it' };
    }
    if (st.isSymbolicLink()) {
      return { file: this.root, message: 'the content folder is a symbolic link: links in the content folder are never followed', hint: 'set CONTENT_DIR to the folder the link points to' };
    }
    if (!st.isDirectory()) return { file: this.root, message: `the content folder is ${fileKind(st)}, not a folder`, hint: 'set CONTENT_DIR to a folder with a `profiles/` folder in it' };
    this.#realRoot = fs.realpathSync(this.root);
    return undefined;
  }

  /** Bytes read from content so far, by `read` and `checkImage` (an image counts whole). */
  get totalBytes() {
    return this.#total;
  }

  /** Reads a whole file of at most `limit.bytes`; a bigger file is refused before any of it is read. */
  read(file: string, limit: SizeLimit): ReadResult {
    const opened = this.#open(file, limit);
    if (!opened.ok) return opened;
    const { fd, size } = opened;
    try {
      // The size fstat gave, never more: a file that grew since is read as it was, within the limit.
      const buf = Buffer.allocUnsafe(size);
      let length = 0;
      for (let n = 1; length < size && n > 0; length += n) n = fs.readSync(fd, buf, length, size - length, null);
      return { ok: true, bytes: buf.subarray(0, length) };
    } catch (e) {
      return { ok: false, problems: [{ file, message: `cannot be read: ${(e as Error).message}` }] };
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Checks an avatar or decoration image: a regular file within MAX_IMAGE_BYTES whose bytes are the
   * type its name says, whole, and within MAX_IMAGE_SIDE; only its header and end are read.
   */
  checkImage(file: string): ContentProblem[] {
    const opened = this.#open(file, IMAGE_LIMIT);
    if (!opened.ok) return opened.problems;
    try {
      const bad = imageProblem(file, opened.size, (offset, length) => {
        const buf = Buffer.alloc(Math.max(0, Math.min(length, opened.size - offset)));
        return buf.subarray(0, buf.length ? fs.readSync(opened.fd, buf, 0, buf.length, offset) : 0);
      });
      return bad ? [{ file, ...bad }] : [];
    } finally {
      fs.closeSync(opened.fd);
    }
  }

  /** A whole image, checked as `checkImage` does: what the build copies into a release. */
  readImage(file: string): ReadResult {
    const r = this.read(file, IMAGE_LIMIT);
    if (!r.ok) return r;
    const bad = imageProblem(file, r.bytes.length, (offset, length) => r.bytes.subarray(offset, offset + length));
    return bad ? { ok: false, problems: [{ file, ...bad }] } : r;
  }

  #open(file: string, limit: SizeLimit): { ok: true; fd: number; size: number } | { ok: false; problems: ContentProblem[] } {
    if (this.#over) return { ok: false, problems: [] };
    const fail = (p: Omit<ContentProblem, 'file'>) => ({ ok: false as const, problems: [{ file, ...p }] });
    if (this.#realRoot === undefined) {
      const p = this.rootProblem();
      if (p) return { ok: false, problems: [p] };
    }
    if (!O_NOFOLLOW) {
      // No O_NOFOLLOW (Windows): check the path first; a window remains there.
      try { if (fs.lstatSync(file).isSymbolicLink()) return fail(LINK_PROBLEM); } catch { /* open reports it */ }
    }
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // ELOOP on Linux and macOS, EMLINK on FreeBSD: the last part of the path is a link.
      if (code === 'ELOOP' || code === 'EMLINK') return fail(LINK_PROBLEM);
      if (code === 'ENOENT') return fail({ message: 'the file is missing' });
      return fail({ message: `cannot be read: ${(e as Error).message}` });
    }
    let keep = false;
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return fail(notRegularProblem(fileKind(st)));
      const opened = openedPath(fd);
      if (opened !== undefined && opened !== path.join(this.#realRoot!, path.relative(this.root, path.resolve(file)))) {
        return fail({ message: 'is reached through a symbolic link to a folder: links in the content folder are never followed', hint: 'commit the folder itself instead of a link to it' });
      }
      if (st.size > limit.bytes) return { ok: false, problems: [this.#tooBig(file, st.size, limit)] };
      this.#total += st.size;
      if (this.#total > MAX_CONTENT_BYTES) {
        this.#over = true;
        return {
          ok: false,
          problems: [{
            file: this.root,
            message: `the content folder holds more than ${formatBytes(MAX_CONTENT_BYTES)} of files (the limit for the whole folder); stopped reading at ${path.relative(this.root, file)}`,
            hint: 'remove files that are not needed (images no profile uses, old profiles), or split the site',
          }],
        };
      }
      keep = true;
      return { ok: true, fd, size: st.size };
    } finally {
      if (!keep) fs.closeSync(fd);
    }
  }

  #tooBig(file: string, size: number, limit: SizeLimit): ContentProblem {
    return {
      file,
      message: `is ${formatBytes(size)}, over the limit of ${formatBytes(limit.bytes)} for ${limit.what}`,
      hint: limit.hint,
    };
  }
}

let procWorks: boolean | undefined;

/** The path the kernel has for an open descriptor (Linux, /proc), or undefined where that cannot be known. */
function openedPath(fd: number): string | undefined {
  if (procWorks === false) return undefined;
  try {
    const p = fs.readlinkSync(`${FD_PATHS}/${fd}`);
    procWorks = true;
    return p;
  } catch {
    procWorks ??= false; // no /proc here: O_NOFOLLOW and the walk of the folder (content-tree.ts) still hold
    return undefined;
  }
}

/**
 * A file's bytes, or undefined: never through a link as the file itself (O_NOFOLLOW), only a
 * regular file (checked on the open descriptor, so a FIFO cannot hang a request), at most
 * `maxBytes` (one byte more than fstat said is read at most: a file that grew since is refused,
 * never read whole).
 */
export async function readRegularFile(file: string, maxBytes: number): Promise<Buffer | undefined> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > maxBytes) return undefined;
    const buf = Buffer.allocUnsafe(st.size + 1);
    let length = 0;
    for (let n; length < buf.length && (n = (await handle.read(buf, length, buf.length - length, length)).bytesRead) > 0;) length += n;
    return length > st.size ? undefined : buf.subarray(0, length);
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}
