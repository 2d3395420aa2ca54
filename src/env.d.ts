/// <reference types="astro/client" />

declare namespace App {
  interface Locals {
    /** The public data the on-demand API routes answer from; set by our server, or by the middleware under `astro dev`. */
    site: import('./api/site.ts').Site;
  }
}
