// @ts-check
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'astro/config';
import node from '@astrojs/node';
import { requireBuildScript } from './src/build/astro/require-build-script.ts';
import { requireServeScript } from './src/build/astro/require-serve-script.ts';
import { keepRenderer } from './src/build/astro/keep-renderer.ts';
import { sharePageData } from './src/build/astro/page-data.ts';
import { reloadOnContentEdits, unwatchedByDev } from './src/build/astro/dev-watch.ts';

// Where the build will run: `node` (default) for our own server, `cloudflare` for a Worker with
// static assets (docs/deploying.md#cloudflare-workers), `static` for a host with files only.
const DEPLOY_TARGETS = {
  // Middleware mode: our own server (src/server) serves the static files with the right headers
  // and hands the few on-demand routes to Astro.
  node: () => node({ mode: 'middleware' }),
  // Files only (docs/deploying.md#a-static-host-without-a-function): nothing runs, but Astro needs an
  // adapter for the on-demand routes that `astro dev` serves.
  static: () => node({ mode: 'middleware' }),
  // The Worker is src/edge/worker.ts (`main` in wrangler.jsonc), not Astro's handler. Pages are
  // pre-rendered in Node, not workerd: they read the index the build script hands over in memory
  // (src/build/astro/page-data.ts), and the kept renderer runs in Node worker threads.
  // Imported only for this target: it loads wrangler's Vite plugin, which the Node build never needs.
  cloudflare: async () => (await import('@astrojs/cloudflare')).default({ prerenderEnvironment: 'node', imageService: 'passthrough' }),
};
const target = process.env.DEPLOY_TARGET || 'node';
if (!Object.hasOwn(DEPLOY_TARGETS, target)) {
  throw new Error(`DEPLOY_TARGET must be one of ${Object.keys(DEPLOY_TARGETS).join(', ')}, not \`${target}\``);
}

// The build script (scripts/build-site.ts) builds into a fresh folder and swaps it in only when
// everything succeeded, so it passes `outDir`; `astro dev` needs none of this.
export default defineConfig({
  site: (process.env.SITE_URL || 'http://localhost:4321').replace(/\/+$/, ''),
  output: 'static',
  adapter: await DEPLOY_TARGETS[/** @type {keyof typeof DEPLOY_TARGETS} */ (target)](),
  // `astro build` on its own stops with a sentence naming `npm run build`, and `astro preview` (but
  // for Cloudflare, where it serves the build) with one naming what serves it. A build keeps the
  // compiled pages, which render every profile page (src/build/astro/keep-renderer.ts).
  integrations: [requireBuildScript(), ...(target === 'cloudflare' ? [] : [requireServeScript(/** @type {'node' | 'static'} */ (target))]), keepRenderer()],
  // `/p/alice` is written as `p/alice.html`, which static hosts serve at `/p/alice` without a redirect.
  // Pages render a few at a time, since rendering waits on file writes (measured: docs/scale.md).
  build: { format: 'file', inlineStylesheets: 'never', concurrency: 4 },
  // No `experimental.incrementalBuild`: the build script reuses unchanged profile pages itself
  // (src/build/reuse/page-reuse.ts), at a fraction of its cost at 100,000 profiles.
  trailingSlash: 'never',
  // A read-only public API: no sessions, no cookies.
  session: false,
  devToolbar: { enabled: false },
  vite: {
    // Pages and the build script share src/build/astro/page-data.ts, which hands the index over.
    // Under `astro dev`, an edit to the content reloads the pages (dev-watch.ts).
    plugins: [sharePageData(), reloadOnContentEdits()],
    // `astro dev` watches the code, not the content folder or the builds' releases: one watch per
    // file there made it start in 28 s and use up the machine's watches (dev-watch.ts).
    server: { watch: { ignored: unwatchedByDev(fileURLToPath(new URL('.', import.meta.url))) } },
    // The few brand icons the pages use bundled with them, not the 5 MB simple-icons module imported whole
    // at render time: ~300 ms off an edit build's render (src/build/astro/page-renderer.ts).
    environments: { prerender: { resolve: { noExternal: ['simple-icons'] } } },
    // For Workers: no separate middleware chunk beside the Worker's bundle (Astro splits it out only
    // for other targets); our Worker does not use Astro's middleware, which is Node code.
    ...(target === 'cloudflare' && { ssr: { target: 'webworker' } }),
  },
});
