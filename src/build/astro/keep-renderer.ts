// Keeps the code `astro build` compiled to pre-render the pages, so that a later build of the same
// code can render the few pages an edit changed with it (src/build/page-renderer.ts) instead of
// running Vite again. Astro writes that code to `<server dir>/.prerender/` and removes it when the
// pages are written; `astro:build:generated` runs just before the removal, which is what it is for
// (https://docs.astro.build/en/reference/integrations-reference/#astrobuildgenerated).
// The kept code holds no content: the pages read the index handed over at render time
// (page-data.ts, imported by its address), so it serves every build whose code, config and SITE_URL give the same
// `renderFingerprint` (page-reuse.ts) and whose deploy target is the same.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AstroIntegration } from 'astro';
import { PAGE_DATA_URL } from './page-data.ts';
import { processRuns } from '../../release/lock.ts';

/** What the build script asked to keep: Astro imports astro.config.mjs natively, so this module is the build script's. */
let keepRequest: (KeptRendererKey & { dir: string }) | undefined;
const KEPT_VERSION = 4;
/** The file beside the kept code that says what it was built from. */
export const KEPT_FILE = 'kept.json';
/**
 * Astro's server output of the same build (its adapter's entry and chunks), kept beside the
 * pre-render code: a build rendered with the kept renderer copies it, and the kept `_astro/`
 * (the bundled styles), into its own release, as `astro build` would have written them.
 */
export const KEPT_SERVER_DIR = 'server';
/**
 * What an adapter writes into the client folder beside the pages, kept in `KEPT_CLIENT_DIR` and
 * copied into each release as `astro build` would have written it: @cloudflare/vite-plugin's
 * `.assetsignore` (the files `wrangler deploy` must not upload as assets).
 */
export const ADAPTER_CLIENT_FILES = ['.assetsignore'];
export const KEPT_CLIENT_DIR = 'client';
/** How many kept renderers the store holds; those used longest ago are removed when a build keeps a new one. */
export const KEPT_RENDERERS = 8;

export interface KeptRendererKey {
  /** `renderFingerprint` of the code being built. */
  fingerprint: string;
  /** `DEPLOY_TARGET`: another adapter compiles other code. */
  target: string;
}

export interface KeptRendererInfo extends KeptRendererKey {
  version: number;
  /** Astro's pre-render entry module, relative to the kept folder. */
  entry: string;
  /** The address the kept code imports page-data.ts by: a copy of the project elsewhere has another. */
  pageData: string;
}

/** Where kept renderers live: a build cache, inside the project because the kept code imports its packages by name. */
export const rendererStore = (root: string) => path.join(root, 'node_modules', '.cache', 'profile-lookup', 'renderers');

/** The folder of the renderer kept for `key`. */
export const rendererDir = (root: string, key: KeptRendererKey) => path.join(rendererStore(root), `${key.target}-${key.fingerprint}`);

/** Asks the Astro build in this process to keep its pre-render code in `dir` (the build script calls this; shards do not). */
export function keepRendererIn(request: (KeptRendererKey & { dir: string }) | undefined): void {
  keepRequest = request;
}

/** The kept renderer in `dir` if it was built for `key`, else why not. */
export function readKept(dir: string, key: KeptRendererKey): KeptRendererInfo | string {
  let info: KeptRendererInfo;
  try {
    info = JSON.parse(fs.readFileSync(path.join(dir, KEPT_FILE), 'utf8')) as KeptRendererInfo;
  } catch {
    return `no renderer kept in ${dir}`;
  }
  if (info.version !== KEPT_VERSION) return `the renderer in ${dir} is of an older format`;
  if (info.fingerprint !== key.fingerprint || info.target !== key.target) return `the renderer in ${dir} was built from other code`;
  if (info.pageData !== PAGE_DATA_URL) return `the renderer in ${dir} was built in another folder`;
  if (!fs.existsSync(path.join(dir, info.entry))) return `the renderer in ${dir} is incomplete`;
  return info;
}

/** The Astro integration (astro.config.mjs): does nothing unless `keepRendererIn` asked. */
export const keepRenderer = (): AstroIntegration => {
  let prerenderDir: string | undefined;
  let serverDir: string | undefined;
  let clientDir: string | undefined;
  return {
    name: 'profile-lookup:keep-renderer',
    hooks: {
      // Where Astro's build puts the pre-render code (astro/dist/prerender/utils.js, not public API:
      // a change is caught by test/build/page-renderer.test.ts and only costs edit builds their speed).
      'astro:config:done': ({ config, buildOutput }) => {
        serverDir = buildOutput === 'server' ? path.resolve(fileURLToPath(config.build.server)) : undefined;
        clientDir = config.build.client && fileURLToPath(config.build.client);
        prerenderDir = path.join(serverDir ?? fileURLToPath(config.outDir), '.prerender');
      },
      'astro:build:generated': ({ logger }) => {
        const request = keepRequest;
        if (!request || !prerenderDir) return;
        // Kept already for this code: the same files, which another build may be rendering with
        // now (it imports its chunks as it goes), so they are never replaced.
        if (typeof readKept(request.dir, request) !== 'string') return;
        const entry = safeReaddir(prerenderDir).find((name) => /^prerender-entry\..*\.mjs$/.test(name));
        if (!entry) {
          logger.warn(`no pre-render code in ${prerenderDir}: edit builds will run \`astro build\``);
          return;
        }
        const info: KeptRendererInfo = { version: KEPT_VERSION, fingerprint: request.fingerprint, target: request.target, entry, pageData: PAGE_DATA_URL };
        // Copied, not moved: Astro moves the CSS out of it after this hook. Made beside the store
        // and renamed in, so a reader never sees half of one.
        const staging = `${request.dir}.${process.pid}.tmp`;
        try {
          fs.rmSync(staging, { recursive: true, force: true });
          fs.cpSync(prerenderDir, staging, { recursive: true });
          // Written before the pages are: the adapter's code, without the pre-render code itself.
          if (serverDir) fs.cpSync(serverDir, path.join(staging, KEPT_SERVER_DIR), { recursive: true, filter: (from) => from !== prerenderDir });
          for (const file of ADAPTER_CLIENT_FILES) {
            const from = clientDir && path.join(clientDir, file);
            if (from && fs.existsSync(from)) fs.cpSync(from, path.join(staging, KEPT_CLIENT_DIR, file));
          }
          fs.writeFileSync(path.join(staging, KEPT_FILE), JSON.stringify(info));
          // An incomplete or other-format folder of that name is replaced.
          fs.rmSync(request.dir, { recursive: true, force: true });
          fs.renameSync(staging, request.dir);
          pruneStore(path.dirname(request.dir), request.dir);
        } catch (e) {
          // Only edit builds' speed is lost: never the build.
          fs.rmSync(staging, { recursive: true, force: true });
          // Another build kept the same code in the meantime.
          if (typeof readKept(request.dir, request) !== 'string') return;
          logger.warn(`could not keep the pre-render code (${(e as Error).message}): edit builds will run \`astro build\``);
        }
      },
    },
  };
};

/**
 * Marks the renderer in `dir` as used now: the store keeps the renderers used last, so one that
 * every build opens is never pushed out by others kept since (builds of other SITE_URLs or
 * targets, on the same machine, or at the same time).
 */
export function markRendererUsed(dir: string): void {
  const now = new Date();
  // A store that cannot be written (read-only) still renders; it only prunes by age.
  try { fs.utimesSync(path.join(dir, KEPT_FILE), now, now); } catch { /* kept as it is */ }
}

/** Removes all but the `KEPT_RENDERERS` kept renderers used last, never `keep`, and what killed builds left (half-copied, or their own). */
export function pruneStore(store: string, keep: string): void {
  const names = safeReaddir(store);
  for (const name of names.filter((n) => n.endsWith('.tmp'))) {
    // A build copying its own now (`<dir>.<pid>.tmp`) is left alone: removed under it, that build
    // could rename a half-removed copy into the store, and the builds after it render with that.
    const pid = Number(/\.(\d+)\.tmp$/.exec(name)?.[1]);
    if (pid && processRuns(pid)) continue;
    fs.rmSync(path.join(store, name), { recursive: true, force: true });
  }
  // A KEPT_RENDERER=0 build's own copy (`<dir>.own-<pid>`, pipeline.ts), removed when that build
  // ends: one a killed build left goes now; none counts among the kept, which it would push out.
  const own = (name: string) => /\.own-(\d+)$/.exec(name);
  for (const name of names) {
    const pid = Number(own(name)?.[1]);
    if (pid && !processRuns(pid)) fs.rmSync(path.join(store, name), { recursive: true, force: true });
  }
  const kept = names
    .filter((name) => !name.endsWith('.tmp') && !own(name))
    .map((name) => path.join(store, name))
    .filter((dir) => dir !== keep && fs.existsSync(path.join(dir, KEPT_FILE)))
    .map((dir) => ({ dir, mtime: fs.statSync(path.join(dir, KEPT_FILE)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { dir } of kept.slice(KEPT_RENDERERS - 1)) fs.rmSync(dir, { recursive: true, force: true });
}

function safeReaddir(dir: string): string[] {
  try { return fs.readdirSync(dir); } catch { return []; }
}
