// An Astro integration that stops `astro preview` at once for the node and static targets: the node
// adapter's preview in middleware mode serves only Astro's on-demand routes, so every page and API
// answer would be a 404. (For Cloudflare, `astro preview` runs wrangler on the build and serves it.)
import type { AstroIntegration } from 'astro';

/** What to run instead of `astro preview`, by deploy target, in one sentence. */
export const PREVIEW_MESSAGES = {
  node: 'Preview a build with `npm run serve` (after `npm run build`): `astro preview` would serve only Astro\'s on-demand routes, not the pages, API answers and headers of our server.',
  static: 'Preview a static build with `npm run preview:nginx -- --recipe static`: `astro preview` would serve only Astro\'s on-demand routes, not the files a static host serves.',
} as const;

export const requireServeScript = (target: keyof typeof PREVIEW_MESSAGES): AstroIntegration => ({
  name: 'profile-lookup:require-serve-script',
  hooks: {
    'astro:config:setup': ({ command }) => {
      if (command !== 'preview') return;
      console.error(PREVIEW_MESSAGES[target]);
      process.exit(1);
    },
  },
});
