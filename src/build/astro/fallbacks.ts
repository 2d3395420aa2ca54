// Each use of an Astro internal (README.md here) has a fallback to public API; `ASTRO_FALLBACK`
// forces some, so a test proves each fallback still builds the same site. Comma-separated, of:
//   kept-renderer      no kept renderer: `astro build` renders every page (setInternals, setOptions,
//                      the .prerender folder and its prerender-entry.*.mjs)
//   static-paths       the pages that are not profile pages made by `astro build`, not by
//                      astro/runtime/prerender/static-paths.js
//   resolve-streaming  pages streamed as Astro streams them, BuildApp's resolveStreaming left alone
//   page-map           each page's module imported through Astro's manifest as Astro does, page
//                      after page, not once (the entry's `manifest.pageMap`)
//   wrangler-redirect  no `.wrangler/deploy/config.json` (@cloudflare/vite-plugin's redirect): the
//                      build names `wrangler deploy --config <DIST_DIR>/server/wrangler.json`
//   content-changed    `astro dev` restarts after an edit of the content (Vite's `server.restart()`)
//                      instead of sending Astro's `astro:content-changed` (dev-watch.ts)
export const ASTRO_FALLBACKS = ['kept-renderer', 'static-paths', 'resolve-streaming', 'page-map', 'wrangler-redirect', 'content-changed'] as const;
export type AstroFallback = (typeof ASTRO_FALLBACKS)[number];

/** Whether `ASTRO_FALLBACK` forces `name`'s fallback; a name that is not one throws, so a typo tests nothing silently. */
export function astroFallback(name: AstroFallback, env: NodeJS.ProcessEnv = process.env): boolean {
  const forced = (env.ASTRO_FALLBACK ?? '').split(',').filter(Boolean);
  for (const f of forced) if (!(ASTRO_FALLBACKS as readonly string[]).includes(f)) throw new Error(`ASTRO_FALLBACK: no fallback \`${f}\`; fallbacks: ${ASTRO_FALLBACKS.join(', ')}`);
  return forced.includes(name);
}
