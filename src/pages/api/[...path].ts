// Every /api/* address that is not a pre-rendered file: see src/lib/api.ts for the routes.
export const prerender = false;
export { ALL } from '../../lib/astro-api-route.ts';
