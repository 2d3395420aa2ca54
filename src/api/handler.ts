// The on-demand API: every route that cannot be a static file, as plain functions of
// (Site, ApiRequest) -> ApiResponse. The Node server and the Astro catch-all routes both call
// `dispatch`, so there is one routing table.
import { USERNAME_PATTERN, USERNAME_RULE, foldAscii } from '../schemas/common.ts';
import { DEFAULT_LIMIT } from '../schemas/queries.ts';
import { creatorsPage, parseCreatorsQuery, type CreatorsQuery } from '../model/creators-list.ts';
import { defaultAvatarSvg } from '../ui/default-avatar.ts';
import { JSON_HEADERS } from '../http/headers.ts';
import {
  elapsed, errorJson, etagOf, finish, imageResponse, isReadMethod, methodNotAllowed, notFound, nowIso, preflight, successBody, successJson,
  svgResponse, type ApiResponse,
} from '../http/response.ts';
import type { ApiRequest } from '../http/request.ts';
import type { Site } from './site.ts';

export const USERS_PATH = '/api/v1/users';
export const USER_PREFIX = `${USERS_PATH}/`;
export const CREATORS_PATH = '/service-api/v1/creators';
export const AVATAR_PATH = '/api/avatar';
export const DECORATION_PATH = '/api/decoration';

/** Path prefixes whose every answer is JSON (or an image), never an HTML page. */
export const API_PREFIXES = ['/api/', '/service-api/'];
export const isApiPath = (path: string) => API_PREFIXES.some((p) => path.startsWith(p)) || path === '/api' || path === '/service-api';

type Checked = { ok: true; username: string } | { ok: false; response: ApiResponse };

function checkUsername(req: ApiRequest, raw: string): Checked {
  if (raw === '') return { ok: false, response: errorJson(400, 'MISSING_USERNAME', 'A username is required.', req) };
  const username = foldAscii(raw);
  if (!USERNAME_PATTERN.test(username)) {
    return { ok: false, response: errorJson(400, 'INVALID_USERNAME', `This is not a valid username: a username is ${USERNAME_RULE}.`, req) };
  }
  return { ok: true, username };
}

/** The query form: trim spaces, strip one leading `@`, fold ASCII case. */
function usernameFromQuery(req: ApiRequest, param: string): Checked {
  const values = req.query.getAll(param);
  if (values.length === 0) {
    return { ok: false, response: errorJson(400, 'MISSING_USERNAME', `The \`${param}\` query parameter is required, e.g. ?${param}=alice.`, req) };
  }
  if (values.length > 1) {
    return { ok: false, response: errorJson(400, 'INVALID_PARAMETER', `Give \`${param}\` once; it was given ${values.length} times.`, req) };
  }
  const trimmed = values[0]!.trim();
  return checkUsername(req, trimmed.startsWith('@') ? trimmed.slice(1) : trimmed);
}

function userAnswer(req: ApiRequest, site: Site, checked: Checked): ApiResponse {
  if (!checked.ok) return checked.response;
  const entry = site.user(checked.username);
  if (!entry) return errorJson(404, 'USER_NOT_FOUND', `No user is called \`${checked.username}\`.`, req);
  return successJson(entry.data, { etag: entry.etag, timestamp: nowIso(), executionTimeMs: elapsed(req) });
}

/**
 * The pre-rendered answer of `/api/v1/users/<username>`, as the build writes its file (meta.timestamp
 * the build time, executionTimeMs 0); the Node server answers these same bytes from memory, which
 * is faster than from disk at scale (docs/scale.md). `username` must be exact (lowercase); the ETag
 * is strong, the hash of these bytes, as a static host's would be.
 */
export function prerenderedUser(site: Site, username: string): ApiResponse | undefined {
  const entry = site.user(username);
  if (!entry) return undefined;
  const body = prerenderedUserBody(site, entry.data);
  entry.fileEtag ??= etagOf(body);
  return { status: 200, headers: { ...JSON_HEADERS, etag: entry.fileEtag }, body };
}

/** The bytes of a user's pre-rendered answer (`prerenderedUser`), as the build writes them. */
export const prerenderedUserBody = (site: Site, data: Buffer) => successBody(data, { timestamp: site.builtAt, executionTimeMs: 0 });

/** GET /api/v1/users/<username>: the on-demand twin of the pre-rendered file, for other casings and unknown names. */
export function userByPath(site: Site, req: ApiRequest, segment: string): ApiResponse {
  let raw: string;
  try {
    raw = decodeURIComponent(segment);
  } catch {
    return errorJson(400, 'INVALID_USERNAME', 'The username in the path is not valid percent-encoding.', req);
  }
  if (raw.includes('@')) {
    return errorJson(400, 'INVALID_USERNAME', '`@` is not part of a username: use /api/v1/users/alice, or the query form /api/v1/users?username=@alice.', req);
  }
  return userAnswer(req, site, checkUsername(req, raw));
}

/** GET /api/v1/users?username=... */
export const userByQuery = (site: Site, req: ApiRequest) => userAnswer(req, site, usernameFromQuery(req, 'username'));

/** One page of the creators list as an answer: the pre-rendered default and every on-demand page. */
export function creatorsAnswer(site: Site, query: CreatorsQuery, timestamp: string, executionTimeMs: number): ApiResponse {
  const page = creatorsPage(site.sortedCreators, query, (params) => `${site.siteUrl}${CREATORS_PATH}?${params}`);
  return successJson(JSON.stringify(page.items), {
    timestamp,
    executionTimeMs,
    metaExtra: `,"total":${page.total},"limit":${query.limit}`,
    links: { next: page.next, prev: page.prev },
  });
}

/** The creators list without parameters: the first page in the default order. */
export const DEFAULT_CREATORS_QUERY: CreatorsQuery = { limit: DEFAULT_LIMIT, sort: 'featured' };

const prerenderedCreatorsOf = new WeakMap<Site, ApiResponse>();

/**
 * The pre-rendered default page of the creators list, as the build writes its file (meta.timestamp
 * the build time, executionTimeMs 0), with a strong ETag over these bytes. The Node server answers
 * it from memory rather than from the file because a file carries no `Link` header; static hosts
 * get it from a `_headers` rule (src/build/static-host-headers.ts).
 */
export function prerenderedCreators(site: Site): ApiResponse {
  let answer = prerenderedCreatorsOf.get(site);
  if (!answer) {
    const made = creatorsAnswer(site, DEFAULT_CREATORS_QUERY, site.builtAt, 0);
    answer = { ...made, headers: { ...made.headers, etag: etagOf(made.body!) } };
    prerenderedCreatorsOf.set(site, answer);
  }
  return answer;
}

/** GET /service-api/v1/creators?limit=&cursor=&category=&featured=&sort= */
export function creators(site: Site, req: ApiRequest): ApiResponse {
  const parsed = parseCreatorsQuery(req.query);
  if (!parsed.ok) return errorJson(400, 'INVALID_PARAMETER', parsed.message, req);
  return creatorsAnswer(site, parsed.query, nowIso(), elapsed(req));
}

/** GET /api/avatar?u=<username>: the avatar image, or a generated one for a profile without. */
export async function avatar(site: Site, req: ApiRequest): Promise<ApiResponse> {
  const checked = usernameFromQuery(req, 'u');
  if (!checked.ok) return checked.response;
  const entry = site.user(checked.username);
  if (!entry) return errorJson(404, 'USER_NOT_FOUND', `No user is called \`${checked.username}\`.`, req);
  const file = site.avatarFile(checked.username);
  const media = file ? await site.media('avatars', file) : undefined;
  if (media) return imageResponse(media.bytes, media.type, media.etag);
  return svgResponse(defaultAvatarSvg(entry.username, entry.displayName));
}

/** GET /api/decoration?f=<file>: only files declared in content/decorations/. */
export async function decoration(site: Site, req: ApiRequest): Promise<ApiResponse> {
  const files = req.query.getAll('f');
  if (files.length !== 1 || files[0] === '') {
    return errorJson(400, 'INVALID_PARAMETER', 'Give the decoration file once, e.g. ?f=sakura.png.', req);
  }
  const file = files[0]!;
  // The name must be one the build declared: nothing else, and no path, ever reaches the disk.
  const media = site.hasDecorationFile(file) ? await site.media('decorations', file) : undefined;
  if (!media) return errorJson(404, 'DECORATION_NOT_FOUND', 'There is no decoration with this file name.', req);
  return imageResponse(media.bytes, media.type, media.etag);
}

/** An answer now, or later for the routes that read an image file. */
export type Answer = ApiResponse | Promise<ApiResponse>;

/** The routing table of the on-demand API. Anything else under /api/ and /service-api/ is a JSON 404. */
function route(site: Site, req: ApiRequest): Answer {
  const path = req.path;
  if (path === USERS_PATH) return userByQuery(site, req);
  if (path.startsWith(USER_PREFIX)) {
    const segment = path.slice(USER_PREFIX.length);
    // One segment only: `/api/v1/users/alice/x.css` must not be a profile an edge would cache as CSS.
    if (segment.includes('/')) return notFound(req);
    return userByPath(site, req, segment);
  }
  if (path === CREATORS_PATH) return creators(site, req);
  if (path === AVATAR_PATH) return avatar(site, req);
  if (path === DECORATION_PATH) return decoration(site, req);
  return notFound(req);
}

/**
 * Method rules, routing, conditional GET and HEAD for any API request. Never throws for any input.
 * Synchronous but for the image routes, so a lookup costs no promise (measured: commit b3f55d0).
 */
export function dispatch(site: Site, req: ApiRequest): Answer {
  if (req.method === 'OPTIONS') return preflight();
  if (!isReadMethod(req.method)) return methodNotAllowed(req);
  const answer = route(site, req);
  return answer instanceof Promise ? answer.then((r) => finish(req, r)) : finish(req, answer);
}
