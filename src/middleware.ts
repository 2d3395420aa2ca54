import { defineMiddleware } from 'astro:middleware';
import { getSite } from './build/page-data.ts';

// Our server (src/server) passes the built Site as `locals.site`; under `astro dev` it is made here
// from the content folder. Pre-rendering needs none.
export const onRequest = defineMiddleware((context, next) => {
  if (!context.isPrerendered && !context.locals.site) context.locals.site = getSite();
  return next();
});
