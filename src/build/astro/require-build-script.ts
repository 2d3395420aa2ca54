// An Astro integration that stops a bare `astro build` at once: only `npm run build` validates the
// content, writes the API files and the site index, and swaps the build in, so Astro's output
// alone is a build the server refuses to start.
import type { AstroIntegration } from 'astro';
import { siteIndexHandedOver } from './page-data.ts';

export const BARE_BUILD_MESSAGE = 'Build with `npm run build`: `astro build` alone makes only the pages, not the API files and site index the server needs.';

export const requireBuildScript = (): AstroIntegration => ({
  name: 'profile-lookup:require-build-script',
  hooks: {
    'astro:config:setup': ({ command }) => {
      if (command !== 'build' || siteIndexHandedOver()) return;
      console.error(BARE_BUILD_MESSAGE);
      process.exit(1);
    },
  },
});
