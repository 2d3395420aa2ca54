/// <reference types="astro/client" />

declare namespace App {
  interface Locals {
    /** The release's files the on-demand routes answer from (src/api/release-files.ts); set by src/middleware.ts. */
    files: import('./api/release-files.ts').ReleaseFiles;
  }
}
