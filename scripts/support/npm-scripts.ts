// The Node arguments of the project's `npm run` scripts, read from package.json: whatever starts a
// build or a server itself (npm start, the benchmarks, the Cloudflare preview) runs it with the
// flags that ship.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Node arguments of `npm run <name>` (`node <flags> <file>.ts`), for this same Node to run in `root`. */
export function nodeArgsOf(name: string, root = PROJECT): string[] {
  const command = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[name];
  const words = command?.split(/\s+/) ?? [];
  if (words[0] !== 'node' || !words.at(-1)?.endsWith('.ts') || words.some((w) => /[&|;'"$<>]/.test(w))) {
    throw new Error(`package.json: expected \`node <flags> <file>.ts\` for \`${name}\`, not \`${command}\``);
  }
  return words.slice(1);
}
