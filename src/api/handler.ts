// The on-demand handler: one function of a request and a release's files that answers everything a
// static file alone cannot (the query form, other casings, JSON errors, avatars, decorations, the
// creators list with a query, custom domains, case redirects of pages, the 404 page), and the
// static files themselves by their address. It reads only the build's own output through
// `ReleaseFiles`, so it keeps no index of the profiles and runs the same on our Node server
// (src/server), on Cloudflare Workers (src/edge) and under `astro dev`.
import { HOST_PATTERN, USERNAME_PATTERN, USERNAME_RULE, foldAscii } from '../schemas/common.ts';
import { DEFAULT_LIMIT, MAX_QUERY_USERNAME_LENGTH, UsernameQuerySchema } from '../schemas/queries.ts';
import { creatorsPage, parseCreatorsQuery, sortedCreators, type CreatorRow, type CreatorSort, type CreatorsQuery } from '../model/creators-list.ts';
import { defaultAvatarSvg } from '../ui/default-avatar.ts';
import { escapeHtml } from '../ui/html.ts';
import {
  HTML_HEADERS, acceptedEncodings, encodedEtag, encodedHeaders, filesAt, identityHeaders, isCompressible, pageLinkHeaders, staticFileHeaders,
  type Encoding, type PageLinks,
} from '../http/headers.ts';
import {
  elapsed, errorJson, etagOf, finish, imageResponse, runtimeEncoded, isReadMethod, methodNotAllowed, notFound, notFoundPage, nowIso, permanentRedirect, preflight, badRequestPage, targetTooLong, lookupRedirect,
  successJson, svgResponse, toWebResponse, type ApiResponse,
} from '../http/response.ts';
import { MAX_TARGET_BYTES, fromWebRequest, type ApiRequest } from '../http/request.ts';
import { CREATORS_ROWS_FILE, imageTypeOf, lookup, userNames, type CreatorsRows, type MaybePromise, type ReleaseFiles } from './release-files.ts';
import type { NameFilter } from './name-filter.ts';

export const USERS_PATH = '/api/v1/users';
export const USER_PREFIX = `${USERS_PATH}/`;
export const CREATORS_PATH = '/service-api/v1/creators';
export const AVATAR_PATH = '/api/avatar';
export const DECORATION_PATH = '/api/decoration';

/** Path prefixes whose every answer is JSON (or an image), never an HTML page. */
export const API_PREFIXES = ['/api/', '/service-api/'];
export const isApiPath = (path: string) => API_PREFIXES.some((p) => path.startsWith(p)) || path === '/api' || path === '/service-api';

/** The file of a user's pre-rendered answer, by exact (lowercase) username. */
const USERS_DIR = USER_PREFIX.slice(1);
export const userFile = (username: string) => `${USERS_DIR}${username}`;
export const CREATORS_FILE = CREATORS_PATH.slice(1);
export const NOT_FOUND_PAGE_FILE = '404.html';
/** The lookup box's form (src/layouts/LookupBox.astro): `GET /lookup?u=<name>`. */
export const LOOKUP_PATH = '/lookup';
export const LOOKUP_PARAM = 'u';
/** The page `/lookup` answers with when the name is missing or not a username (src/pages/lookup.astro). */
export const LOOKUP_PAGE_FILE = 'lookup.html';
export const avatarMediaFile = (file: string) => `media/avatars/${file}`;
export const decorationMediaFile = (file: string) => `media/decorations/${file}`;

type Checked = { ok: true; username: string } | { ok: false; response: ApiResponse };

/** The 400 of an empty username (a static build's `_errors/missing-username.json` says it too). */
export const MISSING_USERNAME_MESSAGE = 'A username is required.';
/** The 400 of a name no casing makes a username (and `_errors/invalid-username.json`'s). */
export const INVALID_USERNAME_MESSAGE = `This is not a valid username: a username is ${USERNAME_RULE}.`;
/** The 400 of `@` in the path form (and `_errors/username-at.json`'s). */
export const USERNAME_AT_MESSAGE = '`@` is not part of a username: use /api/v1/users/alice, or the query form /api/v1/users?username=@alice.';

function checkUsername(req: ApiRequest, raw: string): Checked {
  if (raw === '') return { ok: false, response: errorJson(400, 'MISSING_USERNAME', MISSING_USERNAME_MESSAGE, req) };
  const username = foldAscii(raw);
  if (!USERNAME_PATTERN.test(username)) {
    return { ok: false, response: errorJson(400, 'INVALID_USERNAME', INVALID_USERNAME_MESSAGE, req) };
  }
  return { ok: true, username };
}

/** A query parameter given `count` times that is read once. */
const givenTwice = (req: ApiRequest, param: string, count: number) => errorJson(400, 'INVALID_PARAMETER', `Give \`${param}\` once; it was given ${count} times.`, req);

/** The query form: trim spaces, strip one leading `@`, fold ASCII case. */
function usernameFromQuery(req: ApiRequest, param: string): Checked {
  const values = req.query.getAll(param);
  if (values.length === 0) {
    return { ok: false, response: errorJson(400, 'MISSING_USERNAME', `The \`${param}\` query parameter is required, e.g. ?${param}=alice.`, req) };
  }
  if (values.length > 1) {
    return { ok: false, response: givenTwice(req, param, values.length) };
  }
  // The bound UsernameQuerySchema (and so the OpenAPI's maxLength) gives, counted before trimming as
  // it counts, in code points; a value no longer in UTF-16 units is within it, and not parsed.
  if (values[0]!.length > MAX_QUERY_USERNAME_LENGTH && !UsernameQuerySchema.safeParse(values[0]).success) {
    return { ok: false, response: errorJson(400, 'INVALID_PARAMETER', `\`${param}\` is longer than ${MAX_QUERY_USERNAME_LENGTH} characters.`, req) };
  }
  return checkUsername(req, queryName(values[0]!));
}

/** A name as people type it: spaces around it and one leading `@` dropped (case is folded after). */
function queryName(raw: string): string {
  const trimmed = raw.trim();
  return trimmed.startsWith('@') ? trimmed.slice(1) : trimmed;
}

const userNotFound = (req: ApiRequest, username: string) => errorJson(404, 'USER_NOT_FOUND', `No user is called \`${username}\`.`, req);

const decoder = new TextDecoder();
const SUCCESS_HEAD = '{"success":true,"data":';
const META_KEY = new TextEncoder().encode(',"meta":');

/**
 * `data` of a pre-rendered answer, as its bytes: the file is `{"success":true,"data":…,"meta":…}`
 * (src/build/files/write-build.ts), and `,"meta":` cannot occur unescaped inside `data` after its last
 * own key, so the last one ends it.
 */
export function dataOf(file: Uint8Array): Uint8Array {
  let end = file.length - META_KEY.length;
  outer: for (; end > SUCCESS_HEAD.length; end--) {
    for (let i = 0; i < META_KEY.length; i++) if (file[end + i] !== META_KEY[i]) continue outer;
    break;
  }
  return file.subarray(SUCCESS_HEAD.length, end);
}

/**
 * A user's file, or undefined when there is none: a name the release's filter of names excludes is
 * not read at all (an unknown name on disk was an lstat in a folder of 100,000 names).
 */
function readUser(files: ReleaseFiles, username: string): MaybePromise<Uint8Array | undefined> {
  // A body the reader holds is a known name's: the filter is for names it has not read.
  const kept = files.kept?.(userFile(username));
  if (kept !== undefined) return kept;
  const names = userNames(files);
  // A promise only for the first request of a release that must wait for the filter's file.
  if (names instanceof Promise) return names.then((n) => readUserAfter(files, n, username));
  return readUserAfter(files, names, username);
}

const readUserAfter = (files: ReleaseFiles, names: NameFilter | null, username: string) =>
  (names === null || names.has(username) ? files.read(userFile(username)) : undefined);

/** A user's answer: the pre-rendered file's own bytes for the exact name, else made on demand around its `data`. */
function userAnswer(req: ApiRequest, files: ReleaseFiles, checked: Checked, exact: boolean): MaybePromise<ApiResponse> {
  if (!checked.ok) return checked.response;
  const { username } = checked;
  const file = readUser(files, username);
  // No promise when the reader answered at once: the lookups' hot path.
  return file instanceof Promise ? file.then((f) => userFileAnswer(req, files, username, f, exact)) : userFileAnswer(req, files, username, file, exact);
}

/** The policy's headers of a user file (the same frozen object every time). */
const USER_FILE_HEADERS = staticFileHeaders(USER_PREFIX, '');

function userFileAnswer(req: ApiRequest, files: ReleaseFiles, username: string, file: Uint8Array | undefined, exact: boolean): MaybePromise<ApiResponse> {
  if (!file) return userNotFound(req, username);
  // The address of the file itself: the answer a static host gives (meta of the build, a strong ETag).
  if (exact) return fileAnswer(req, files, userFile(username), file, USER_FILE_HEADERS);
  // The ETag covers `data` only, so it stays the same while `meta.timestamp` moves. Where `data`
  // ends and its weak ETag are found once per bytes object: hashing `data` cost 1.9-4.6 µs of a
  // query lookup's 11-14 µs (in-process, 100,000 profiles).
  const memo = memoOf(file);
  if (memo.dataEtag === undefined) {
    const data = dataOf(file);
    memo.dataEnd = SUCCESS_HEAD.length + data.length;
    memo.dataEtag = `W/${etagOf(data)}`;
  }
  return successJson(file.subarray(SUCCESS_HEAD.length, memo.dataEnd) as Buffer, { etag: memo.dataEtag, timestamp: nowIso(), executionTimeMs: elapsed(req) });
}

/**
 * What the handler works out once per file bytes object and reuses for every answer of it (a
 * reader that caches returns the same object), in one object per file rather than one per fact.
 * It lives as long as the reader keeps the bytes.
 */
interface FileMemo {
  /** Strong ETag of the bytes. */
  etag: string | undefined;
  /** The policy's headers `headers` were made from. */
  base: Readonly<Record<string, string>> | undefined;
  /** `base` with the ETag and length: shared by every answer of the file, never modified. */
  headers: Record<string, string> | undefined;
  /** User files: where `data` ends, and its weak ETag. */
  dataEnd: number;
  dataEtag: string | undefined;
  /** Compressed siblings the file has not (a bit per encoding: `ENCODING_BIT`), so a miss is looked for once per bytes. */
  absent: number;
}
/**
 * Where a memo is kept: on the bytes object itself, under a symbol no other code knows, since a
 * lookup touches that object anyway; a WeakMap's entry was one more place in memory to reach for
 * each answer (at 1,000,000 profiles a table of a million, 3-4% of a path lookup's CPU).
 */
const MEMO = Symbol('file memo');
type MemoHolder = Uint8Array & { [MEMO]?: FileMemo };
/** For bytes that take no property (frozen, or not extensible). */
const memos = new WeakMap<Uint8Array, FileMemo>();
function memoOf(bytes: Uint8Array): FileMemo {
  let memo = (bytes as MemoHolder)[MEMO] ?? memos.get(bytes);
  if (memo === undefined) {
    memo = { etag: undefined, base: undefined, headers: undefined, dataEnd: 0, dataEtag: undefined, absent: 0 };
    if (Object.isExtensible(bytes)) (bytes as MemoHolder)[MEMO] = memo;
    else memos.set(bytes, memo);
  }
  return memo;
}

/** `decodeURIComponent`, skipped when there is nothing to decode (it returns such a string as it is). */
const decodePath = (s: string) => (s.includes('%') ? decodeURIComponent(s) : s);

/** GET /api/v1/users/<username>: the pre-rendered file for the exact name; other casings and unknown names on demand. */
function userByPath(req: ApiRequest, files: ReleaseFiles, segment: string): MaybePromise<ApiResponse> {
  let raw: string;
  try {
    raw = decodePath(segment);
  } catch {
    return errorJson(400, 'INVALID_USERNAME', 'The username in the path is not valid percent-encoding.', req);
  }
  if (raw.includes('@')) {
    return errorJson(400, 'INVALID_USERNAME', USERNAME_AT_MESSAGE, req);
  }
  const checked = checkUsername(req, raw);
  // `%61lice` is the file's address too, as a static host decodes it; `ALICE` is not.
  return userAnswer(req, files, checked, checked.ok && checked.username === raw);
}

/** The creators list without parameters: the first page in the default order. */
export const DEFAULT_CREATORS_QUERY: CreatorsQuery = { limit: DEFAULT_LIMIT, sort: 'featured' };

/** One page of the creators list as an answer: the pre-rendered default and every on-demand page. */
export function creatorsAnswer(sorted: Record<CreatorSort, CreatorRow[]>, siteUrl: string, query: CreatorsQuery, timestamp: string, executionTimeMs: number): ApiResponse {
  const page = creatorsPage(sorted, query, (params) => `${siteUrl}${CREATORS_PATH}?${params}`);
  return successJson(JSON.stringify(page.items), {
    timestamp,
    executionTimeMs,
    metaExtra: `,"total":${page.total},"limit":${query.limit}`,
    links: { next: page.next, prev: page.prev },
  });
}

/**
 * The creators rows of a release, sorted each way: read and sorted once per release files (the
 * memory of this grows with the number of creators, not of profiles), then shared by every request.
 */
const creatorsOf = new WeakMap<ReleaseFiles, Promise<{ siteUrl: string; sorted: Record<CreatorSort, CreatorRow[]> } | undefined>>();

function releaseCreators(files: ReleaseFiles) {
  let rows = creatorsOf.get(files);
  if (!rows) {
    rows = Promise.resolve(files.read(CREATORS_ROWS_FILE)).then((bytes) => {
      if (!bytes) return undefined;
      const { siteUrl, rows } = JSON.parse(decoder.decode(bytes)) as CreatorsRows;
      return { siteUrl, sorted: sortedCreators(rows) };
    });
    // A failed read is tried again by the next request, not remembered.
    rows.catch(() => creatorsOf.delete(files));
    creatorsOf.set(files, rows);
  }
  return rows;
}

/** GET /service-api/v1/creators?limit=&cursor=&category=&featured=&sort= */
async function creators(req: ApiRequest, files: ReleaseFiles): Promise<ApiResponse> {
  const parsed = parseCreatorsQuery(req.query);
  if (!parsed.ok) return errorJson(400, 'INVALID_PARAMETER', parsed.message, req);
  const release = await releaseCreators(files);
  if (!release) return notFound(req);
  return creatorsAnswer(release.sorted, release.siteUrl, parsed.query, nowIso(), elapsed(req));
}

/** GET /api/avatar?u=<username>: the avatar image, or a generated one for a profile without. */
async function avatar(req: ApiRequest, files: ReleaseFiles): Promise<ApiResponse> {
  const checked = usernameFromQuery(req, 'u');
  if (!checked.ok) return checked.response;
  const [user, file] = await Promise.all([readUser(files, checked.username), lookup(files, 'avatars', checked.username)]);
  if (!user) return userNotFound(req, checked.username);
  const type = file && imageTypeOf(file);
  const bytes = type && await files.read(avatarMediaFile(file));
  if (bytes) return imageResponse(bytes, type, etagOfBytes(bytes));
  const { displayName } = JSON.parse(decoder.decode(dataOf(user))) as { displayName: string };
  return svgResponse(defaultAvatarSvg(checked.username, displayName));
}

export const DECORATION_FILE_REQUIRED = 'The `f` query parameter is required: a decoration file name, e.g. ?f=sakura.png.';

/** GET /api/decoration?f=<file>: only files declared in content/decorations/, which the build copied. */
async function decoration(req: ApiRequest, files: ReleaseFiles): Promise<ApiResponse> {
  const names = req.query.getAll('f');
  if (names.length > 1) return givenTwice(req, 'f', names.length);
  if (!names[0]) return errorJson(400, 'INVALID_PARAMETER', DECORATION_FILE_REQUIRED, req);
  const name = names[0]!;
  // A plain image file name or nothing: no path ever reaches the files.
  const type = imageTypeOf(name);
  const bytes = type && await files.read(decorationMediaFile(name));
  if (!bytes) return errorJson(404, 'DECORATION_NOT_FOUND', 'There is no decoration with this file name.', req);
  return imageResponse(bytes, type, etagOfBytes(bytes));
}

/** The routing table of the API. Anything else under /api/ and /service-api/ is a JSON 404. */
function apiRoute(req: ApiRequest, files: ReleaseFiles): MaybePromise<ApiResponse> {
  const path = req.path;
  if (path === USERS_PATH) return userAnswer(req, files, usernameFromQuery(req, 'username'), false);
  if (path.startsWith(USER_PREFIX)) {
    const segment = path.slice(USER_PREFIX.length);
    // One segment only: `/api/v1/users/alice/x.css` must not be a profile an edge would cache as CSS.
    if (segment.includes('/')) return notFound(req);
    // `/api/v1/users/?username=alice` is a path form with no name: say where the name goes.
    if (segment === '') return errorJson(400, 'MISSING_USERNAME', `${MISSING_USERNAME_MESSAGE} Put it in the path (\`${USER_PREFIX}alice\`) or the query with no \`/\` before \`?\` (\`${USERS_PATH}?username=alice\`).`, req);
    return userByPath(req, files, segment);
  }
  if (path === CREATORS_PATH) return req.search === '' ? creatorsFirstPage(req, files) : creators(req, files);
  if (path === AVATAR_PATH) return avatar(req, files);
  if (path === DECORATION_PATH) return decoration(req, files);
  return notFound(req);
}

/**
 * The pre-rendered first page of the creators list, with the `Link` header a file cannot carry
 * (static hosts send it from a `_headers` rule: src/build/hosts/static-host-headers.ts).
 */
async function creatorsFirstPage(req: ApiRequest, files: ReleaseFiles): Promise<ApiResponse> {
  const file = await files.read(CREATORS_FILE);
  if (!file) return creators(req, files);
  return fileAnswer(req, files, CREATORS_FILE, file, creatorsFileHeaders(file));
}

/**
 * The policy's headers of the first page plus its `Link`, read from the file once per bytes object:
 * the same object every time, so `staticAnswer` keeps its headers too.
 */
const creatorsHeaders = new WeakMap<Uint8Array, Readonly<Record<string, string>>>();
function creatorsFileHeaders(file: Uint8Array): Readonly<Record<string, string>> {
  let headers = creatorsHeaders.get(file);
  if (!headers) {
    const { links } = JSON.parse(decoder.decode(file)) as { links?: PageLinks };
    creatorsHeaders.set(file, headers = Object.freeze({ ...staticFileHeaders(CREATORS_PATH, ''), ...(links && pageLinkHeaders(links)) }));
  }
  return headers;
}

/** Strong ETags of file bytes, computed once per bytes object. */
function etagOfBytes(bytes: Uint8Array): string {
  const memo = memoOf(bytes);
  return (memo.etag ??= etagOf(bytes));
}

/**
 * A file's answer: its headers (the policy's for its kind, its ETag and length) are made once per
 * bytes object, so a lookup served from a kept body allocates no headers of its own.
 */
function staticAnswer(bytes: Uint8Array, base: Readonly<Record<string, string>>): ApiResponse {
  const memo = memoOf(bytes);
  if (memo.base !== base || memo.headers === undefined) {
    memo.headers = Object.freeze({ ...base, etag: (memo.etag ??= etagOf(bytes)), 'content-length': String(bytes.byteLength) }) as Record<string, string>;
    memo.base = base;
  }
  return { status: 200, headers: memo.headers, body: bytes };
}

const ENCODING_BIT: Record<Encoding['name'], number> = { br: 1, gzip: 2 };

/**
 * The answer of a build file: for a compressible one (headers.ts `isCompressible`), its compressed
 * sibling in the coding the client wants most (src/build/files/compress.ts wrote it), with its own ETag;
 * else, or when it has none, the file itself. Either way with `Vary: Accept-Encoding`.
 */
function fileAnswer(req: ApiRequest, files: ReleaseFiles, file: string, bytes: Uint8Array, base: Readonly<Record<string, string>>): MaybePromise<ApiResponse> {
  if (!isCompressible(file)) return staticAnswer(bytes, base);
  return encodedAnswer(files, file, bytes, base, acceptedEncodings(req.header('accept-encoding')), 0);
}

function encodedAnswer(files: ReleaseFiles, file: string, bytes: Uint8Array, base: Readonly<Record<string, string>>, wanted: readonly Encoding[], from: number): MaybePromise<ApiResponse> {
  const memo = memoOf(bytes);
  for (let i = from; i < wanted.length; i++) {
    const encoding = wanted[i]!;
    const bit = ENCODING_BIT[encoding.name];
    if (memo.absent & bit) continue;
    const sibling = files.read(file + encoding.suffix);
    if (sibling instanceof Promise) {
      return sibling.then((s) => {
        if (s) return compressedAnswer(bytes, s, base, encoding);
        memo.absent |= bit;
        return encodedAnswer(files, file, bytes, base, wanted, i + 1);
      });
    }
    if (sibling) return compressedAnswer(bytes, sibling, base, encoding);
    memo.absent |= bit;
  }
  return staticAnswer(bytes, identityHeaders(base));
}

/** The answer of a compressed sibling: the identity ETag tagged with the coding (headers.ts `encodedEtag`). */
function compressedAnswer(identity: Uint8Array, compressed: Uint8Array, base: Readonly<Record<string, string>>, encoding: Encoding): ApiResponse {
  const memo = memoOf(compressed);
  memo.etag ??= encodedEtag(etagOfBytes(identity), encoding);
  return staticAnswer(compressed, encodedHeaders(base, encoding));
}

/**
 * The build file at a decoded address, with the headers the policy gives it; undefined when there
 * is none. Without `req`, only whether there is one (no compressed sibling is read).
 */
async function staticFile(req: ApiRequest | undefined, files: ReleaseFiles, address: string): Promise<ApiResponse | undefined> {
  for (const file of filesAt(address)) {
    const bytes = await files.read(file);
    if (!bytes) continue;
    const slash = file.lastIndexOf('/');
    const dot = file.lastIndexOf('.');
    const headers = staticFileHeaders(address, dot > slash ? file.slice(dot) : '');
    return req ? fileAnswer(req, files, file, bytes, headers) : staticAnswer(bytes, headers);
  }
  return undefined;
}

/**
 * The host a request was sent to, lowercase, without port or trailing dot; undefined when it is not
 * a host name. An absolute-form target's host stands for `Host` (RFC 9112 §3.2.2).
 */
function hostOf(req: ApiRequest): string | undefined {
  const raw = req.authority ?? req.header('host');
  if (!raw || raw.length > 260) return undefined;
  const host = raw.toLowerCase().replace(/:\d{1,5}$/, '').replace(/\.$/, '');
  return HOST_PATTERN.test(host) ? host : undefined;
}

/**
 * The profile page a custom domain serves at `/`, or undefined. Only the page: every other address
 * on that host, and every address in an answer (from SITE_URL), stays the same as on any host.
 */
async function customDomainPage(req: ApiRequest, files: ReleaseFiles): Promise<ApiResponse | undefined> {
  const host = hostOf(req);
  const username = host && await lookup(files, 'domains', host);
  if (!username) return undefined;
  const file = `p/${username}.html`;
  const page = await files.read(file);
  return page && fileAnswer(req, files, file, page, HTML_HEADERS);
}

/**
 * The lookup box (GET /lookup?u=<name>), for browsers without script: a redirect to the profile's
 * page, or the lookup page with what was typed back in the box and why it led nowhere: a 400 for no
 * or no valid name, a 404 when no profile has it. Cached as briefly as any answer: a profile can be
 * added or removed.
 */
async function lookupAnswer(req: ApiRequest, files: ReleaseFiles): Promise<ApiResponse> {
  const values = req.query.getAll(LOOKUP_PARAM);
  const typed = values.length === 1 ? values[0]!.trim() : '';
  const name = values.length === 1 ? foldAscii(queryName(values[0]!)) : '';
  if (!USERNAME_PATTERN.test(name)) {
    return lookupPage(files, typed, typed === '' ? 'Type a username to find its profile.' : `“${shortened(typed)}” is not a username.`, 400);
  }
  const page = `/p/${name}`;
  return await staticFile(undefined, files, page) ? lookupRedirect(page) : lookupPage(files, typed, `There is no profile called “${name}”.`, 404);
}

/** The empty place on the lookup page (src/pages/lookup.astro) for why a name led nowhere, and the box's input. */
export const LOOKUP_PROBLEM = '<p class="lookup-problem" role="alert"></p>';
export const LOOKUP_INPUT = 'id="lookup-name"';

/** At most this many characters of what was typed are shown back. */
const SHOWN_TYPED = 64;
const shortened = (typed: string) => {
  const chars = [...typed];
  return chars.length > SHOWN_TYPED ? `${chars.slice(0, SHOWN_TYPED).join('')}…` : typed;
};

/** The lookup page, `typed` in its box and `message` in its place, with `status`. */
async function lookupPage(files: ReleaseFiles, typed: string, message: string, status: 400 | 404): Promise<ApiResponse> {
  const page = await files.read(LOOKUP_PAGE_FILE);
  const html = page === undefined
    ? `<!doctype html><title>Find a profile</title><h1>Find a profile</h1><p>${escapeHtml(message)}</p>`
    : decoder.decode(page)
      .replace(LOOKUP_PROBLEM, `<p class="lookup-problem" role="alert">${escapeHtml(message)}</p>`)
      .replace(LOOKUP_INPUT, `${LOOKUP_INPUT} value="${escapeHtml(shortened(typed))}"`);
  return status === 400 ? badRequestPage(html) : notFoundPage(html);
}

async function notFoundHtml(files: ReleaseFiles): Promise<ApiResponse> {
  return notFoundPage(await files.read(NOT_FOUND_PAGE_FILE) ?? '<!doctype html><title>Not found</title><h1>Not found</h1>');
}

/** An escaped slash (`%2F`): a path names a file by its plain slashes only, as nginx's config has it. */
const ESCAPED_SLASH = /%2f/i;

/** The path a file is looked up by; undefined for broken percent-encoding and for an escaped slash. */
function safeDecode(p: string): string | undefined {
  // `/api/v1/users%2Falice` or `/p%2Falice` was alice's file: another address for every file.
  if (ESCAPED_SLASH.test(p)) return undefined;
  try {
    return decodePath(p);
  } catch {
    return undefined;
  }
}

/** Every request, before conditional GET and HEAD: see the module comment. */
function route(req: ApiRequest, files: ReleaseFiles): MaybePromise<ApiResponse> {
  const path = req.path;
  if (isApiPath(path)) {
    // The user files and the creators list's first page are read by the API routes, which know them.
    if (req.search === '' && !path.startsWith(USER_PREFIX) && path !== CREATORS_PATH) return apiFileOrRoute(req, files, path);
    return apiRoute(req, files);
  }
  return pageRoute(req, files, path);
}

async function apiFileOrRoute(req: ApiRequest, files: ReleaseFiles, path: string): Promise<ApiResponse> {
  const decoded = safeDecode(path);
  const file = decoded !== undefined && await staticFile(req, files, decoded);
  return file || apiRoute(req, files);
}

async function pageRoute(req: ApiRequest, files: ReleaseFiles, path: string): Promise<ApiResponse> {
  const decoded = safeDecode(path);
  if (decoded === undefined) return notFoundHtml(files);
  // With no query it is the lookup page itself, as on a static host.
  if (decoded === LOOKUP_PATH && req.search !== '') return lookupAnswer(req, files);
  if (decoded === '/') {
    const page = await customDomainPage(req, files);
    if (page) return page;
  }
  const file = await staticFile(req, files, decoded);
  if (file) return file;
  // `/p/ALICE`, `/p/alice/` and `/docs/` are pages at another address: a permanent redirect keeps
  // one address per page (`/p/` names in any ASCII casing, as the API takes them), and the query
  // (a link's `utm_source`) as it came.
  const trimmed = decoded.replace(/(?<=.)\/+$/, '');
  const wanted = trimmed.startsWith('/p/') ? foldAscii(trimmed) : trimmed;
  if (wanted !== decoded && await staticFile(undefined, files, wanted)) return permanentRedirect(req.search ? `${wanted}?${req.search}` : wanted);
  return notFoundHtml(files);
}

/**
 * Method rules, routing, conditional GET and HEAD for any request: the answer, or a promise of it
 * when a file had to be waited for. Never throws for a request; a failing `files.read` rejects,
 * and the caller answers a 500.
 */
export function answer(req: ApiRequest, files: ReleaseFiles): MaybePromise<ApiResponse> {
  if (req.method === 'OPTIONS') return preflight();
  if (!isReadMethod(req.method)) return methodNotAllowed(req);
  const routed = route(req, files);
  if (files.runtimeEncodes) return Promise.resolve(routed).then((r) => finish(req, runtimeEncoded(req, r), { keepType: true }));
  return routed instanceof Promise ? routed.then((r) => finish(req, r)) : finish(req, routed);
}

/** The handler as a Web-standard function: `Request -> Response`, for Cloudflare Workers and Astro routes. */
export async function handle(request: Request, files: ReleaseFiles): Promise<Response> {
  // The bound the Node server's parser keeps (its 414): workerd takes longer targets.
  const origin = request.url.indexOf('/', request.url.indexOf('//') + 2);
  if (origin >= 0 && request.url.length - origin > MAX_TARGET_BYTES) return toWebResponse(targetTooLong());
  return toWebResponse(await answer(fromWebRequest(request), files));
}
