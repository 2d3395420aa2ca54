// The compile of a first build of new code, in a process of its own (../render.ts `compileRenderer`):
// `astro build` of the code from an empty index, its pages thrown away, keeping its renderer
// (keep-renderer.ts). What the compile holds (Vite's module graph, rolldown's memory, Astro's own
// modules: about 280 MB at 20,000 profiles) goes back to the system when it exits, instead of
// staying in the build's process while it renders every page.
// Usage: node src/build/astro/compile-process.ts '<CompileJob as JSON>'; the environment is the build's (render.ts `setAstroEnv`).
import { buildSiteIndex } from '../../model/site-index.ts';
import { mediaAddressesFor } from '../../model/public-user.ts';
import type { DeployTarget } from '../../config.ts';
import { handOverSiteIndex } from './page-data.ts';
import { keepRendererIn, type KeptRendererKey } from './keep-renderer.ts';
import { COMPILED_STEP, COMPILE_STEP, faultPoint } from '../faults.ts';

/** What the compile needs of the build. */
export interface CompileJob {
  root: string;
  contentDir: string;
  siteUrl: string;
  /** The build's time (ISO). */
  builtAt: string;
  target: DeployTarget;
  key: KeptRendererKey;
  keptDir: string;
  /** Where `astro build` writes its pages, thrown away by the build. */
  outDir: string;
  logLevel: string | undefined;
}

const job = JSON.parse(process.argv[2] ?? 'null') as CompileJob | null;
if (!job) {
  console.error('Usage: node src/build/astro/compile-process.ts <job as JSON> (the build runs it: src/build/render.ts)');
  process.exit(2);
}
// The compiled code holds no content: its pages are rendered from an empty index.
handOverSiteIndex(buildSiteIndex({ dir: job.contentDir, profiles: new Map(), creators: new Map(), decorations: new Map(), views: new Map() }, { siteUrl: job.siteUrl, builtAt: new Date(job.builtAt), media: mediaAddressesFor(job.target) }), new Set());
keepRendererIn({ ...job.key, dir: job.keptDir });
await faultPoint(COMPILE_STEP);
const { build } = await import('astro');
const compile = () => build({ root: job.root, outDir: job.outDir, logLevel: job.logLevel as 'info' | undefined ?? 'warn' });
// Cloudflare's plugin points `wrangler deploy` at what it built, here a scratch folder: the build's
// process puts the redirect back once this process has ended (wrangler-deploy-config.ts).
await compile();
await faultPoint(COMPILED_STEP);
// Its peak, for the build's summary line; then nothing is left to wait for: a handle Vite or a
// plugin left open must not keep the build waiting.
process.send?.({ maxRssKb: process.resourceUsage().maxRSS }, () => process.exit(0));
if (!process.send) process.exit(0);
