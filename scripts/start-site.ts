// Usage: npm start                 (the environment of npm run build and npm run serve)
//
// Builds the content (npm run build), then serves it (npm run serve): each runs as its npm script
// does, with the Node flags package.json gives it, so the two stay the one place they are set.
// A failed build serves nothing and exits with the build's code. Ctrl-C reaches the server from the
// terminal; SIGTERM and SIGHUP sent to this process are passed on to it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from '../src/cli.ts';

parseCli({
  name: 'start',
  usage: 'Usage: npm start                 (builds, then serves: the environment of npm run build and npm run serve)',
  env: {
    CONTENT_DIR: 'the content folder to build (default ./content); npm run build -- --help lists the rest',
    SITE_URL: 'the public address every absolute URL starts with',
    DIST_DIR: 'where the build goes and what is served (default ./dist)',
    HOST: 'the address to listen on (default localhost); npm run serve -- --help lists the rest',
    PORT: 'the port (default 4321)',
  },
});

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const scripts = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The Node arguments of `npm run <name>` (`node <flags> <file>`), for this same Node to run. */
function nodeArgs(command: string | undefined): string[] {
  const words = command?.split(/\s+/) ?? [];
  if (words[0] !== 'node' || !words.at(-1)?.endsWith('.ts') || words.some((w) => /[&|;'"$<>]/.test(w))) {
    throw new Error(`package.json: expected \`node <flags> <file>.ts\`, not \`${command}\``);
  }
  return words.slice(1);
}

/** Runs `npm run <name>`'s command in this environment, its output on ours, and resolves with its exit code. */
function run(name: string): Promise<number> {
  const child = spawn(process.execPath, nodeArgs(scripts[name]), { cwd: root, stdio: 'inherit' });
  const pass = (signal: NodeJS.Signals) => child.kill(signal);
  // Ctrl-C is sent to the whole process group, the child included: this process only waits for it.
  const waitForChild = () => {};
  process.on('SIGTERM', pass).on('SIGHUP', pass).on('SIGINT', waitForChild);
  return new Promise((resolve) => child.once('close', (code, signal) => {
    process.off('SIGTERM', pass).off('SIGHUP', pass).off('SIGINT', waitForChild);
    // Ended by a signal: the shell's code for it, and no server after a build cut short.
    resolve(code ?? 128 + os.constants.signals[signal!]);
  }));
}

const built = await run('build');
process.exitCode = built !== 0 ? built : await run('serve');
