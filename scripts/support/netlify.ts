// `netlify dev --offline` from netlify-cli on a static build's client folder, for the tests and
// `npm run check:deploy`. netlify-cli is big (about 500 MB with Deno), so it is not a dependency:
// CI installs it into node_modules/.cache/netlify-cli (.ci/run), and NETLIFY_CLI may name another
// `bin/run.js`. netlify dev adds `.netlify` to the .gitignore of the git checkout it runs in, so it
// serves a copy in a temp folder outside the project.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './serve-build.ts';

export const NETLIFY_CACHE = path.join(ROOT, 'node_modules', '.cache', 'netlify-cli');
export const NETLIFY_CLI = process.env.NETLIFY_CLI ?? path.join(NETLIFY_CACHE, 'node_modules', 'netlify-cli', 'bin', 'run.js');
export const NETLIFY_INSTALL = 'npm install --prefix node_modules/.cache/netlify-cli --no-save netlify-cli@26.2.0 deno@2.9.6';

/** Why netlify dev cannot run here, or undefined. */
export const netlifyMissing = (): string | undefined => (fs.existsSync(NETLIFY_CLI) ? undefined : `netlify-cli is not installed at ${NETLIFY_CLI} (${NETLIFY_INSTALL})`);

export interface RunningNetlify {
  base: string;
  /** The copy of the client folder it serves. */
  site: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, resolved once it has exited; removes the copy. */
  stop(): Promise<void>;
}

/** Serves a copy of `clientDir` with `netlify dev --offline` on 127.0.0.1:`port`; resolves once it says it is ready. */
export async function startNetlifyDev(clientDir: string, port: number): Promise<RunningNetlify> {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'netlify-dev-'));
  const site = path.join(project, 'site');
  fs.cpSync(clientDir, site, { recursive: true, dereference: true });
  const child = spawn(process.execPath, [NETLIFY_CLI, 'dev', '--offline', '--dir', 'site', '--port', String(port)], {
    cwd: project, stdio: ['ignore', 'pipe', 'pipe'],
    // Deno (from npm, beside netlify-cli) for its edge functions runtime; no browser to open.
    env: { ...process.env, PATH: `${path.join(NETLIFY_CACHE, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`, BROWSER: 'none', NETLIFY_TELEMETRY_DISABLED: '1' },
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(project, { recursive: true, force: true });
  };
  try {
    // Ready when netlify dev says so: checked on each chunk of its output, no timer.
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += d;
        if (/Local dev server ready/.test(out)) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`netlify dev exited (${code}):\n${out.slice(-2000)}`)));
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { base: `http://127.0.0.1:${port}`, site, child, output: () => out, stop };
}
