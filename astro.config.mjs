// @ts-check
import { defineConfig } from 'astro/config';
import node from '@astrojs/node';

// The build script (scripts/build-site.ts) builds into a fresh folder and swaps it in only when
// everything succeeded, so it passes `outDir`; `astro dev` needs none of this.
export default defineConfig({
  site: (process.env.SITE_URL || 'http://localhost:4321').replace(/\/+$/, ''),
  output: 'static',
  // Middleware mode: our own server (src/server) serves the static files with the right headers
  // and hands the few on-demand routes to Astro.
  adapter: node({ mode: 'middleware' }),
  // `/p/alice` is written as `p/alice.html`, which static hosts serve at `/p/alice` without a redirect.
  build: { format: 'file', inlineStylesheets: 'never' },
  trailingSlash: 'never',
  // A read-only public API: no sessions, no cookies.
  session: false,
  devToolbar: { enabled: false },
});
