// Problems found in the content folder, and how they are printed: one line each with the file,
// line and column, the key path, what is wrong and how to fix it.
import path from 'node:path';
import { shownPath } from '../cli.ts';

export interface ContentProblem {
  /** The file, relative to the content folder's parent when possible. */
  file: string;
  line?: number;
  column?: number;
  /** The key path inside the file, e.g. `socials[1].url`. */
  keyPath?: string;
  message: string;
  hint?: string;
}

/** `socials[1].url` from a Zod/YAML path. */
export function formatKeyPath(keys: readonly PropertyKey[]): string {
  let out = '';
  for (const k of keys) out += typeof k === 'number' ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out;
}

/**
 * `s` with its control characters written out (`\e`, `\n`, `\x07`): messages quote keys and file
 * names from content, and an escape sequence in one would rewrite the terminal or CI log it is
 * printed to (`Content OK` over the error, hidden text), a line break forge a line of its own.
 */
export function visible(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    const named = ({ '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' } as Record<string, string>)[c];
    return named ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}

export function formatProblem(p: ContentProblem, cwd = process.cwd()): string {
  const file = path.isAbsolute(p.file) ? shownPath(p.file, cwd) : p.file;
  const where = p.line ? `${visible(file)}:${p.line}:${p.column ?? 1}` : visible(file);
  const key = p.keyPath ? ` \`${visible(p.keyPath)}\`` : '';
  return `${where}${key}: ${visible(p.message)}${p.hint ? `\n    hint: ${visible(p.hint)}` : ''}`;
}

// GitHub's workflow-command escaping (actions/toolkit, command.ts): message data escapes `%`, CR
// and LF; a property value also `:` and `,`, so a file name from a pull request cannot end the
// properties (`::`) or add one (`,title=`).
const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** GitHub Actions workflow commands, so a pull request shows the problem on its line. */
export function formatProblemGithub(p: ContentProblem, cwd = process.cwd()): string {
  const file = path.isAbsolute(p.file) ? path.relative(cwd, p.file) : p.file;
  const loc = p.line ? `,line=${p.line},col=${p.column ?? 1}` : '';
  const key = p.keyPath ? `\`${p.keyPath}\`: ` : '';
  // The file name as it is, so that the annotation lands on its file; the text, which GitHub's log
  // shows with the colours of any escape sequence in it, written out as in the plain form.
  return `::error file=${escapeProperty(file)}${loc}::${escapeData(visible(`${key}${p.message}${p.hint ? ` (${p.hint})` : ''}`))}`;
}

/** Levenshtein distance, for "did you mean" hints on misspelt keys and names. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The closest of `options` to `word`, when it is close enough to be a likely typo. */
export function closest(word: string, options: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const o of options) {
    const d = editDistance(word.toLowerCase(), o.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [o, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}
