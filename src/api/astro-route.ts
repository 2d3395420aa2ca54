// The Astro side of the handler: the catch-all routes under src/pages/api and src/pages/service-api
// re-export this. `locals.files` is the release's files: the content folder made into files under
// `astro dev` (src/middleware.ts), the static assets on Cloudflare (src/edge).
import type { APIRoute } from 'astro';
import { handle } from './handler.ts';

export const ALL: APIRoute = ({ request, locals }) => handle(request, locals.files);
