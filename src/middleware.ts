import { defineMiddleware } from 'astro:middleware';
import { getReleaseFiles } from './build/astro/page-data.ts';

// Under `astro dev` the on-demand routes answer from the content folder made into a release's
// files in memory. Pre-rendering needs none; our Node server calls the handler itself (src/server).
export const onRequest = defineMiddleware((context, next) => {
  if (!context.isPrerendered && !context.locals.files) context.locals.files = getReleaseFiles();
  return next();
});
