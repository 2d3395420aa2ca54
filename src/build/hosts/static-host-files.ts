// The files a host with files only needs beside the site (DEPLOY_TARGET=static), for answers it
// cannot make itself: the handler's JSON 404s as files a server (scripts/deploy/nginx-static.conf)
// can send, and `.nojekyll`, without which GitHub Pages publishes a branch through Jekyll, which
// drops every name starting with `_`, `_astro/` (the pages' only stylesheet) among them.
import fs from 'node:fs';
import path from 'node:path';
import { METHOD_NOT_ALLOWED_MESSAGE, errorJson, notFound, requestError } from '../../http/response.ts';
import { INVALID_USERNAME_MESSAGE, MISSING_USERNAME_MESSAGE, NOT_FOUND_PAGE_FILE, USERNAME_AT_MESSAGE } from '../../api/handler.ts';

/** Where the error answers live: a folder that is never served at its own address (NOT_SERVED_DIRS in src/http/headers.ts). */
export const ERRORS_DIR = '_errors';
/** The 404 of `/api/v1/users/<name>` for a name with no profile. */
export const USER_NOT_FOUND_FILE = `${ERRORS_DIR}/user-not-found.json`;
/** The 404 of any other address under `/api/` or `/service-api/` that is no file. */
export const API_NOT_FOUND_FILE = `${ERRORS_DIR}/not-found.json`;
/** The 400 of the query form `/api/v1/users?username=` with no name. */
export const MISSING_USERNAME_FILE = `${ERRORS_DIR}/missing-username.json`;
/** The 400 of `/api/v1/users/<name>` for a name no casing makes a username (`alice.gz`, `a b`, too long). */
export const INVALID_USERNAME_FILE = `${ERRORS_DIR}/invalid-username.json`;
/** The 400 of `/api/v1/users/@alice`: `@` belongs to the query form only. */
export const USERNAME_AT_FILE = `${ERRORS_DIR}/username-at.json`;
/** The 405 of any method but GET, HEAD and OPTIONS. */
export const METHOD_NOT_ALLOWED_FILE = `${ERRORS_DIR}/method-not-allowed.json`;
/** The 400 of the query form with `username` given more than once. */
export const USERNAME_REPEATED_FILE = `${ERRORS_DIR}/username-repeated.json`;
/**
 * The server's own refusals of a request (400, 412, 414, 431): one file for all, since the
 * status says which; the Node server's `requestError`s, which also say why in the message.
 */
export const REQUEST_ERROR_FILE = `${ERRORS_DIR}/request-error.json`;
/** Tells GitHub Pages to publish the folder as it is, without Jekyll. */
export const NOJEKYLL_FILE = '.nojekyll';

/**
 * The handler's unknown-user answer cannot name the user here, since one file answers every name;
 * everything else is the handler's: status, code, envelope.
 */
export const USER_NOT_FOUND_MESSAGE = 'No user is called by the name in this address.';
/** The handler's message names how many times; one file cannot. */
export const USERNAME_REPEATED_MESSAGE = 'Give `username` once.';
export const REQUEST_ERROR_MESSAGE = 'The request could not be answered as it was sent (its form, its size, or a precondition it sets): the status says which.';

/**
 * The body of an error answer as `errorJson` makes it, with `meta.timestamp` the build's time, so a
 * build with the same SOURCE_DATE_EPOCH writes the same bytes.
 */
function errorFileBody(body: string | Uint8Array | null, builtAt: string): string {
  const parsed = JSON.parse(String(body)) as { meta: { timestamp: string } };
  parsed.meta.timestamp = builtAt;
  return JSON.stringify(parsed);
}

/** The files (path relative to the client folder, with `/`) and their bytes, for a build made at `builtAt`. */
export function staticHostFiles(builtAt: string): Record<string, string> {
  return {
    [USER_NOT_FOUND_FILE]: errorFileBody(errorJson(404, 'USER_NOT_FOUND', USER_NOT_FOUND_MESSAGE).body, builtAt),
    [API_NOT_FOUND_FILE]: errorFileBody(notFound().body, builtAt),
    [MISSING_USERNAME_FILE]: errorFileBody(errorJson(400, 'MISSING_USERNAME', MISSING_USERNAME_MESSAGE).body, builtAt),
    [INVALID_USERNAME_FILE]: errorFileBody(errorJson(400, 'INVALID_USERNAME', INVALID_USERNAME_MESSAGE).body, builtAt),
    [USERNAME_AT_FILE]: errorFileBody(errorJson(400, 'INVALID_USERNAME', USERNAME_AT_MESSAGE).body, builtAt),
    [METHOD_NOT_ALLOWED_FILE]: errorFileBody(errorJson(405, 'METHOD_NOT_ALLOWED', METHOD_NOT_ALLOWED_MESSAGE).body, builtAt),
    [USERNAME_REPEATED_FILE]: errorFileBody(errorJson(400, 'INVALID_PARAMETER', USERNAME_REPEATED_MESSAGE).body, builtAt),
    [REQUEST_ERROR_FILE]: errorFileBody(requestError(400, REQUEST_ERROR_MESSAGE).body, builtAt),
    // Its presence is all GitHub reads.
    [NOJEKYLL_FILE]: '',
  };
}

/**
 * Writes them into `clientDir`, once the pages are there: the HTML 404 page every static host
 * sends for an unknown address (GitHub Pages and nginx-static.conf by its name) must be among them.
 */
export function writeStaticHostFiles(clientDir: string, builtAt: string): void {
  if (!fs.existsSync(path.join(clientDir, NOT_FOUND_PAGE_FILE))) throw new Error(`${NOT_FOUND_PAGE_FILE} is missing from ${clientDir}: static hosts send it for every unknown address`);
  for (const [file, text] of Object.entries(staticHostFiles(builtAt))) {
    const to = path.join(clientDir, ...file.split('/'));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, text);
  }
}

/**
 * Netlify refuses a deploy with more files than this in one folder
 * (https://docs.netlify.com/site-deploys/overview/), and `netlify dev` does not check it.
 */
export const NETLIFY_FOLDER_LIMIT = 54_000;
/** The folders of a static build that hold a file (and its compressed siblings) per profile. */
export const PER_PROFILE_FOLDERS = ['p', 'api/v1/users'] as const;

/** The per-profile folders of `clientDir` holding more than `limit` entries, with how many. */
export function foldersPastLimit(clientDir: string, limit = NETLIFY_FOLDER_LIMIT): { folder: string; files: number }[] {
  const out: { folder: string; files: number }[] = [];
  for (const folder of PER_PROFILE_FOLDERS) {
    let files: number;
    try { files = fs.readdirSync(path.join(clientDir, ...folder.split('/'))).length; } catch { continue; }
    if (files > limit) out.push({ folder, files });
  }
  return out;
}

/** What a static build says of a folder past Netlify's limit: which, how many, and what to do. */
export function folderLimitWarning(past: { folder: string; files: number }, precompressed: boolean, limit = NETLIFY_FOLDER_LIMIT): string {
  return `warning: ${past.folder}/ holds ${past.files.toLocaleString('en')} files: Netlify refuses a deploy with more than ${limit.toLocaleString('en')} in one folder. `
    + 'Other static hosts take it as it is. For Netlify, '
    + (precompressed ? 'build with PRECOMPRESS=0 (no .br and .gz files: Netlify compresses itself), or ' : '')
    + 'serve more profiles with the Node server or Workers (docs/deploying.md#netlify).';
}
