// The `_redirects` file for Netlify serving a static build (DEPLOY_TARGET=static): the answers of the
// on-demand handler that a host with files only can still give, by Netlify's rules (first matching
// rule wins; a rule without `!` applies only where no file is at the address, so files come first).
//
// Only for the static target: Cloudflare Workers read `_redirects` too, before the Worker, and would
// answer from files what the Worker answers better. Cloudflare's parser skips every line here anyway
// (a query condition makes 4 tokens, and it allows no 404 status), so a static build on Cloudflare
// Pages serves as if there were none.
import fs from 'node:fs';
import path from 'node:path';
import { API_PREFIXES, USERS_PATH, USER_PREFIX } from '../../api/handler.ts';
import { API_NOT_FOUND_FILE, USER_NOT_FOUND_FILE } from './static-host-files.ts';

export const REDIRECTS_FILE = '_redirects';

/** The `_redirects` text; `has(file)` tells whether the build holds a file (path relative to the client folder). */
export function staticHostRedirects(has: (file: string) => boolean): string {
  const rules = [
    // The query form of a lookup, for the exact username only: a file cannot fold case or strip `@`.
    `${USERS_PATH}  username=:name  ${USER_PREFIX}:name  200`,
  ];
  // A rewrite with status 404 sends that file where the address has none (Netlify's custom 404s).
  // `:name` is one segment, never none: `/api/v1/users` alone is no lookup of a user.
  if (has(USER_NOT_FOUND_FILE)) rules.push(`${USER_PREFIX}:name  /${USER_NOT_FOUND_FILE}  404`);
  if (has(API_NOT_FOUND_FILE)) for (const prefix of API_PREFIXES) rules.push(`${prefix}*  /${API_NOT_FOUND_FILE}  404`);
  return [
    '# Routes for Netlify serving this folder without the Node server. Written by the build',
    '# (src/build/hosts/static-host-redirects.ts); do not edit. First match wins; files come before these rules.',
    '',
    ...rules,
    '',
  ].join('\n');
}

/** Writes `<clientDir>/_redirects` for the files in it: last in a build, once every file it may name is there. */
export function writeStaticHostRedirects(clientDir: string): void {
  const text = staticHostRedirects((file) => fs.existsSync(path.join(clientDir, ...file.split('/'))));
  fs.writeFileSync(path.join(clientDir, REDIRECTS_FILE), text);
}
