// How Astro hands the profile pages to the disk, at a fraction of its own cost per page (measured:
// docs/scale.md, "Where a cold build's time goes"). Through Astro's public hook for adapters
// (`setPrerenderer`), this wraps its default prerenderer so that each profile page is
// - rendered to one string, not streamed: the build is "server-like" (it has on-demand routes), so
//   Astro would stream every page through an async iterable, a ReadableStream and a Response, only
//   to collect the bytes again;
// - written here with one synchronous write (its folder made once), and handed back to Astro with
//   no body, which Astro then does not write: its awaited mkdir and writeFile are three trips
//   through libuv's threads per page.
// The bytes are the same either way (test/build/page-renderer.test.ts builds the fixture both ways);
// other pages are Astro's as before. The kept renderer (keep-renderer.ts) copies the same `.prerender/` code.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AstroIntegration } from 'astro';

/**
 * The profile pages' route, and the address Astro renders each at (`build.format: 'file'` puts the
 * file name in it): a username (USERNAME_PATTERN) needs no encoding.
 */
const PROFILE_ROUTE = '/p/[username]';
const PROFILE_PATH = /^\/p\/([a-z0-9][a-z0-9_-]{0,31})\.html$/;

/** Profile pages written here in this process, whichever copy of this module Astro's config loaded. */
const WRITTEN = Symbol.for('profile-lookup.profile-page-writes');
const counter = globalThis as { [WRITTEN]?: number };
export const profilePagesWritten = () => counter[WRITTEN] ?? 0;

/** What the default prerenderer keeps of Astro's app: its streaming choice is an override of BuildApp. */
type AppWithStreaming = { resolveStreaming?: () => boolean | undefined };

export const profilePageWrites = (): AstroIntegration => {
  let pagesDir = '';
  let madeDir = false;
  return {
    name: 'profile-lookup:profile-page-writes',
    hooks: {
      // `build.format: 'file'`: `/p/alice.html` is `<client>/p/alice.html`, as Astro names it.
      'astro:config:done': ({ config }) => {
        pagesDir = path.join(fileURLToPath(config.build.client), 'p');
        madeDir = false; // another build in this process: another folder
      },
      // With a prerenderer of an integration's, Astro leaves the prerender bundle's entry to it: its own.
      'astro:build:setup': ({ vite, target }) => {
        if (target !== 'server') return;
        vite.environments ??= {};
        vite.environments.prerender ??= {};
        vite.environments.prerender.build ??= {};
        vite.environments.prerender.build.rolldownOptions ??= {};
        vite.environments.prerender.build.rolldownOptions.input = 'astro/entrypoints/prerender';
      },
      'astro:build:start': ({ setPrerenderer }) => {
        setPrerenderer((defaults) => ({
          ...defaults,
          name: 'profile-lookup:profile-page-writes',
          async setup() {
            await defaults.setup?.();
            const app = (defaults as { app?: AppWithStreaming }).app;
            if (typeof app?.resolveStreaming === 'function') app.resolveStreaming = () => false;
          },
          async render(request, options) {
            const rendered = await defaults.render(request, options);
            const response = rendered instanceof Response ? rendered : rendered.response;
            const page = options.routeData.route === PROFILE_ROUTE && PROFILE_PATH.exec(new URL(request.url).pathname);
            if (!page || response.status !== 200 || !response.body) return rendered;
            const body = new Uint8Array(await response.arrayBuffer());
            if (!madeDir) {
              fs.mkdirSync(pagesDir, { recursive: true });
              madeDir = true;
            }
            fs.writeFileSync(path.join(pagesDir, `${page[1]}.html`), body);
            counter[WRITTEN] = profilePagesWritten() + 1;
            const written = new Response(null, { status: response.status, headers: response.headers });
            return rendered instanceof Response ? written : { ...rendered, response: written };
          },
        }));
      },
    },
  };
};
