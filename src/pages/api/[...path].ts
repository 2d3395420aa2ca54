// Every /api/* address that is not a pre-rendered file: see src/api/handler.ts for the routes.
export const prerender = false;
export { ALL } from '../../api/astro-route.ts';
