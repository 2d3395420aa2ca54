// @ts-check
import { defineConfig } from 'astro/config';
import node from '@astrojs/node';
import { requireBuildScript } from './src/build/require-build-script.ts';

// The build script (scripts/build-site.ts) builds into a fresh folder and swaps it in only when
// everything succeeded, so it passes `outDir`; `astro dev` needs none of this.
export default defineConfig({
  site: (process.env.SITE_URL || 'http://localhost:4321').replace(/\/+$/, ''),
  output: 'static',
  // Middleware mode: our own server (src/server) serves the static files with the right headers
  // and hands the few on-demand routes to Astro.
  adapter: node({ mode: 'middleware' }),
  // `astro build` on its own stops with a sentence naming `npm run build`.
  integrations: [requireBuildScript()],
  // `/p/alice` is written as `p/alice.html`, which static hosts serve at `/p/alice` without a redirect.
  // Pages render a few at a time, since rendering waits on file writes (measured: docs/scale.md).
  build: { format: 'file', inlineStylesheets: 'never', concurrency: Number(process.env.ASTRO_CONCURRENCY || 4) },
  // No `experimental.incrementalBuild`: the build script reuses unchanged profile pages itself
  // (src/build/page-reuse.ts), at a fraction of its cost at 100,000 profiles.
  trailingSlash: 'never',
  // A read-only public API: no sessions, no cookies.
  session: false,
  devToolbar: { enabled: false },
});
