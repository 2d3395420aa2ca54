// The OpenAPI 3.1 document, generated from the Zod schemas in src/schemas (zod 4 converts them to
// JSON Schema 2020-12, OpenAPI 3.1's dialect) and from real answers of this build as examples.
// Never written by hand: a change to a schema changes the document.
import { z } from 'astro/zod';
import { API_VERSION, CreatorsBodySchema, ErrorBodySchema, UserBodySchema, type PublicUser } from '../schemas/api.ts';
import { CreatorsQuerySchema, DecorationFileSchema, UsernameParamSchema, UsernameQuerySchema } from '../schemas/queries.ts';
import { AVATAR_PATH, CREATORS_PATH, DECORATION_FILE_REQUIRED, DECORATION_PATH, USERNAME_AT_MESSAGE, USERS_PATH, creatorsAnswer } from './handler.ts';
import { ALLOWED_METHODS, CACHE_CONTROL, COMMON_HEADERS, HTML_CSP, NO_STORE, PREFLIGHT_HEADERS, REQUEST_ERROR_HEADERS, SVG_CSP } from '../http/headers.ts';
import { MAX_TARGET_BYTES } from '../http/request.ts';
import { errorJson, requestError, serverError, successJson, type ApiResponse } from '../http/response.ts';
import type { SiteIndex } from '../model/site-index.ts';
import { creatorsRows } from './release-files.ts';
import { sortedCreators } from '../model/creators-list.ts';

type Json = Record<string, unknown>;

const schema = (s: z.ZodType): Json => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as Json;
  return rest;
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const body = (r: ApiResponse) => JSON.parse(typeof r.body === 'string' ? r.body : Buffer.from(r.body ?? '').toString('utf8'));

/** The operations a path item of OpenAPI 3.1 can hold. */
const OPENAPI_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const ANSWERED = new Set(ALLOWED_METHODS.toLowerCase().split(', '));
/**
 * Every method but GET, HEAD and OPTIONS is a 405. They are described once (the info and
 * `components.responses.MethodNotAllowed`), not as operations: a client generator makes a
 * function for every operation, and one that can only fail is no use to anyone.
 */
const REFUSED_METHODS = OPENAPI_METHODS.filter((m) => !ANSWERED.has(m));

const titleCase = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
const constHeader = (description: string, value: string) => ({ description, schema: { type: 'string', const: value } });

/** The headers every answer carries, values from the policy (src/http/headers.ts); Cache-Control varies by answer. */
const COMMON_RESPONSE_HEADERS: Json = Object.fromEntries(Object.entries(COMMON_HEADERS)
  .filter(([name]) => name !== 'cache-control')
  .map(([name]) => [titleCase(name), { $ref: `#/components/headers/${titleCase(name).replaceAll('-', '')}` }]));
const CACHEABLE_HEADERS = { ...COMMON_RESPONSE_HEADERS, 'Cache-Control': { $ref: '#/components/headers/CacheControl' } };
const NO_STORE_HEADERS = { ...COMMON_RESPONSE_HEADERS, 'Cache-Control': { $ref: '#/components/headers/CacheControlNoStore' } };
/** An answer the server may send from the build's files: in the coding the client takes, which it says. */
const CODED = { Vary: { $ref: '#/components/headers/Vary' }, 'Content-Encoding': { $ref: '#/components/headers/ContentEncoding' } };
const WITH_ETAG = { ...CACHEABLE_HEADERS, ETag: { $ref: '#/components/headers/ETag' }, ...CODED };
/** What HTML pages carry besides. */
const PAGE_HEADERS = { 'Content-Security-Policy': { $ref: '#/components/headers/ContentSecurityPolicy' }, 'X-Frame-Options': { $ref: '#/components/headers/XFrameOptions' } };
/** A 400 or 405: the error of the URL, kept by caches, or of the request itself, never stored. */
const ERROR_HEADERS = { ...COMMON_RESPONSE_HEADERS, 'Cache-Control': { $ref: '#/components/headers/CacheControlOfError' } };

/** A path's one operation, its GET: HEAD, OPTIONS and the refused methods are the same on every path, described once. */
interface ReadRoute {
  id: string;
  tag: string;
  summary: string;
  description: string;
  parameters: Json[];
  responses: Record<string, Json>;
}

/** One document per index: the docs page and /openapi.json both render it, and it sorts every creator. */
const documents = new WeakMap<SiteIndex, Json>();

export function buildOpenApi(index: SiteIndex): Json {
  let doc = documents.get(index);
  if (!doc) documents.set(index, doc = makeOpenApi(index));
  // A copy: a caller may change its document (the docs page reads it only, but nothing says so).
  return structuredClone(doc);
}

/** Whether a profile shows most of the object: a decoration, socials, active. */
export const showsEveryPart = (user: PublicUser): boolean => user.avatarDecoration !== null && user.socials.length > 0 && user.status === 'active';

/** The profile the examples show: the first that shows every part, else the first; `full` says which. */
export function exampleUser(users: readonly PublicUser[]): { user: PublicUser; full: boolean } | undefined {
  for (const user of users) if (showsEveryPart(user)) return { user, full: true };
  return users.length ? { user: users[0]!, full: false } : undefined;
}

/**
 * The `meta.timestamp` of the examples: the start of the build's day (UTC), not its instant, so a
 * rebuild on the same day leaves /openapi.json and /docs byte for byte as they were (a deploy
 * uploads neither, CDN copies stay valid) unless their example profile or creators changed; the
 * example's `accountAgeDays` changes with the day anyway.
 */
export const exampleTimestamp = (builtAt: string): string => `${builtAt.slice(0, 10)}T00:00:00.000Z`;

function makeOpenApi(index: SiteIndex): Json {
  const timestamp = exampleTimestamp(index.builtAt);
  const sampleUser = exampleUser(index.users)?.user;
  const name = sampleUser?.username ?? 'alice';
  const userExample = body(successJson(JSON.stringify(sampleUser ?? null), { timestamp, executionTimeMs: 0 }));
  const creatorsPage = creatorsAnswer(sortedCreators(creatorsRows(index).rows), index.siteUrl, { limit: 2, sort: 'featured' }, timestamp, 0);
  const creatorsExample = body(creatorsPage);
  const example = (r: ApiResponse) => {
    const e = body(r);
    e.meta.timestamp = timestamp;
    e.meta.executionTimeMs = 0.05;
    return e;
  };
  const error = (status: number, code: Parameters<typeof errorJson>[1], message: string) => example(errorJson(status, code, message));

  const json = (schemaRef: Json, description: string, ex: unknown) => ({
    description, headers: WITH_ETAG, content: { 'application/json': { schema: schemaRef, example: ex } },
  });
  const err = (description: string, ex: unknown, headers: Json = CACHEABLE_HEADERS) => ({
    description, headers, content: { 'application/json': { schema: ref('Error'), example: ex } },
  });
  const notModified = { description: 'Not modified: the `If-None-Match` ETag still matches.', headers: WITH_ETAG };
  // Images are sent as they are (compressed already), with no coding to vary by; SVG with its own CSP.
  const image = (description: string) => ({
    description,
    headers: { ...CACHEABLE_HEADERS, ETag: { $ref: '#/components/headers/ETag' }, 'Content-Security-Policy': { $ref: '#/components/headers/ContentSecurityPolicy' } },
    content: Object.fromEntries(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/svg+xml']
      .map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])),
  });
  const requestErrorHeaders = { ...NO_STORE_HEADERS, Connection: constHeader('The connection is closed after the answer.', REQUEST_ERROR_HEADERS.connection!) };
  // Any request, whatever its method and path, can get these: about the request's bytes, or a
  // failure of ours. Shared components, referenced by every operation.
  const UNROUTED: Record<string, [string, Json]> = {
    414: ['UriTooLong', err('The request target is too long. Never stored by a cache.', example(requestError(414, `The request target is longer than ${MAX_TARGET_BYTES} bytes.`)), requestErrorHeaders)],
    408: ['RequestTimeout', err('The request\'s headers did not arrive in time. Never stored by a cache.', example(requestError(408, 'The request did not arrive in time: send its headers within the time the server allows.')), requestErrorHeaders)],
    417: ['ExpectationFailed', err('An `Expect` header other than `100-continue`. Never stored by a cache.', example(requestError(417, 'Expect: only 100-continue is understood.')), requestErrorHeaders)],
    431: ['HeaderFieldsTooLarge', err('The request headers are too large. Never stored by a cache.', example(requestError(431, 'The request headers are too large: send fewer or shorter headers (16 KiB in all at most).')), requestErrorHeaders)],
    500: ['InternalError', err('A failure of the server, never of the input. Never stored by a cache.', example(serverError()), NO_STORE_HEADERS)],
  };
  const responseComponents: Json = {};
  for (const [name, response] of Object.values(UNROUTED)) responseComponents[name] = response;
  const unrouted = () => Object.fromEntries(Object.entries(UNROUTED).map(([status, [name]]) => [status, { $ref: `#/components/responses/${name}` }]));
  // The answers of every path to the methods that are not its GET, described once (the info says
  // so) rather than as operations on every path; no operation references them.
  responseComponents.Preflight = {
    description: 'The answer to `OPTIONS` on any path: a CORS preflight, allowed.',
    headers: {
      ...CACHEABLE_HEADERS,
      'Access-Control-Allow-Methods': constHeader('The methods answered.', PREFLIGHT_HEADERS['access-control-allow-methods']!),
      'Access-Control-Allow-Headers': constHeader('`*` does not cover `Authorization`, so it is named.', PREFLIGHT_HEADERS['access-control-allow-headers']!),
      'Access-Control-Max-Age': constHeader('Seconds a browser may keep this preflight.', PREFLIGHT_HEADERS['access-control-max-age']!),
    },
  };
  responseComponents.MethodNotAllowed = {
    description: `The answer to any method but ${ALLOWED_METHODS} on any path: the API is read-only.`,
    // A method HTTP does not define is also a request error: `no-store`, the connection closed after it.
    headers: { ...ERROR_HEADERS, Allow: constHeader('The methods answered.', ALLOWED_METHODS) },
    content: {
      'application/json': {
        schema: ref('Error'),
        examples: Object.fromEntries(REFUSED_METHODS.map((m) => m.toUpperCase()).map((verb) => [verb, {
          summary: `${verb} refused`, value: error(405, 'METHOD_NOT_ALLOWED', `${verb} is not allowed: this API is read-only (${ALLOWED_METHODS}).`),
        }])),
      },
    },
  };

  /** The path item of a read-only route: its GET alone (HEAD, OPTIONS and the 405s are in the info). */
  const readOnly = (route: ReadRoute): Json => ({
    get: {
      operationId: route.id, tags: [route.tag], summary: route.summary, description: route.description,
      // A 400 may also be about the request itself (unparseable, no `Host`): `BAD_REQUEST`, never stored.
      parameters: route.parameters, responses: { ...route.responses, ...(route.responses[400] && { 400: { ...route.responses[400], headers: ERROR_HEADERS } }), ...unrouted() },
    },
  });
  const usernameMissing = error(400, 'MISSING_USERNAME', 'A username is required.');
  const userNotFound = error(404, 'USER_NOT_FOUND', 'No user is called `nobody`.');

  const creatorParams = Object.entries((schema(CreatorsQuerySchema).properties ?? {}) as Record<string, Json>).map(([key, s]) => ({
    name: key, in: 'query', required: false, description: s.description, schema: s,
  }));

  return {
    openapi: '3.1.0',
    info: {
      title: 'Profile lookup API',
      version: API_VERSION,
      description: [
        'Read-only public profiles. No key (`security: []`); open CORS. Successes and the errors of a URL itself '
        + `(a bad parameter, 404, 405) are cacheable by an edge for 30 s and may be served stale 60 s more (\`${CACHE_CONTROL}\`). `
        + 'Errors about the request rather than its URL (unparseable or without `Host`: 400; headers too slow: 408; 414; an `Expect` not met: 417; 431; '
        + 'a method HTTP does not define: 405) and failures of the server (500) '
        + `are \`Cache-Control: ${NO_STORE}\`, since a cache keys on the URL alone.`,
        `Every path answers the same three methods (\`Allow: ${ALLOWED_METHODS}\`); only GET is listed as an operation. `
        + '`HEAD` gets the status and headers `GET` would (`ETag`, `Content-Length`), without a body. `OPTIONS` is a CORS preflight: '
        + '`204` with the headers of `components.responses.Preflight`. Any other method '
        + `(${REFUSED_METHODS.map((m) => `\`${m.toUpperCase()}\``).join(', ')}, or one HTTP does not define) is a \`405\` `
        + `with \`Allow: ${ALLOWED_METHODS}\` and a \`METHOD_NOT_ALLOWED\` error: \`components.responses.MethodNotAllowed\`.`,
        `Any other address under \`/api/\` or \`/service-api/\` is a \`404\` with a \`NOT_FOUND\` error (\`${USERS_PATH}/\` with no name: the \`400\` of \`MISSING_USERNAME\`); `
        + 'any other address elsewhere the HTML 404 page.',
        `JSON answers carry \`meta\`. ${PRERENDERED_META} ${ON_DEMAND_META} Each operation says which of its answers are which.`,
      ].join('\n\n'),
    },
    servers: [{ url: index.siteUrl }],
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    // Nothing needs a key: an empty list says so, rather than leaving it unsaid.
    security: [],
    tags: [
      { name: 'users', description: 'Public profiles, by username.' },
      { name: 'creators', description: 'The list of active creators, paginated.' },
      { name: 'images', description: 'Avatars and avatar decorations.' },
      { name: 'pages', description: 'The HTML profile pages.' },
    ],
    paths: {
      [`${USERS_PATH}/{username}`]: readOnly({
        id: 'getUser',
        tag: 'users',
        summary: 'A user by username',
        description: 'Pre-rendered at the lowercase path; any other ASCII casing is answered on demand with the same `data`. `@` is not accepted here.\n\n'
          + `\`meta\`: at the lowercase path, the pre-rendered file's: \`timestamp\` is when its \`data\` last changed, \`executionTimeMs\` is 0. `
          + 'Other casings and errors are made on demand: `timestamp` is when the answer was made, `executionTimeMs` the time spent on it.',
        parameters: [{ name: 'username', in: 'path', required: true, schema: schema(UsernameParamSchema), example: name }],
        responses: {
          200: json(ref('UserBody'), 'The user. A suspended profile is 200 with `status: "suspended"` and `banInfo`.', userExample),
          304: notModified,
          400: err('Not a valid username (or `@` in the path).', error(400, 'INVALID_USERNAME', USERNAME_AT_MESSAGE)),
          404: err('No such user, or extra path segments.', userNotFound),
        },
      }),
      [USERS_PATH]: readOnly({
        id: 'findUser',
        tag: 'users',
        summary: 'A user by the query form',
        description: 'The same answer as the path form, for input as people type it: spaces trimmed, one leading `@` stripped, ASCII case folded.\n\n'
          + '`meta`: made on demand: `timestamp` is when the answer was made, `executionTimeMs` the time spent on it. '
          + 'A static host (no handler) serves the lowercase name\'s pre-rendered file instead, with its `meta`: `timestamp` when its `data` last changed, `executionTimeMs` 0.',
        parameters: [{ name: 'username', in: 'query', required: true, schema: schema(UsernameQuerySchema), example: `@${name}` }],
        responses: {
          200: json(ref('UserBody'), 'The user.', userExample),
          304: notModified,
          400: err('Missing, empty, repeated or malformed username.', usernameMissing),
          404: err('No such user.', userNotFound),
        },
      }),
      [CREATORS_PATH]: readOnly({
        id: 'listCreators',
        tag: 'creators',
        summary: 'Active creators, one page at a time',
        description: 'Without parameters this is a pre-rendered file (the first page). Follow `links.next` to page on: cursors are keyset positions, so creators added or removed by a rebuild between two pages make no other item repeat or go missing (a creator whose own sort value changes in between can appear twice, or not at all).\n\n'
          + '`meta`: without parameters, the pre-rendered file\'s: `timestamp` is when the first page last changed, `executionTimeMs` is 0. '
          + 'With any parameter, and for errors, made on demand: `timestamp` is when the answer was made, `executionTimeMs` the time spent on it.',
        parameters: creatorParams,
        responses: {
          200: {
            ...json(ref('CreatorsBody'), 'One page of creators.', creatorsExample),
            headers: {
              ...WITH_ETAG,
              Link: {
                description: 'The neighbouring pages (RFC 8288): `<links.next>; rel="next"` and `<links.prev>; rel="prev"`, the same addresses as in the body; absent when both are null. The pre-rendered first page has it too.',
                schema: { type: 'string' },
                ...(creatorsPage.headers.link && { example: creatorsPage.headers.link }),
              },
            },
          },
          304: { ...notModified, headers: { ...notModified.headers, Link: { description: 'As on the 200: the neighbouring pages.', schema: { type: 'string' } } } },
          400: err('A parameter value is invalid; the message names it and what is allowed.', error(400, 'INVALID_PARAMETER', '`limit` must be a whole number from 1 to 100 (default 50)')),
        },
      }),
      [AVATAR_PATH]: readOnly({
        id: 'getAvatar',
        tag: 'images',
        summary: "A user's avatar image",
        description: "The avatar file the profile names, or a generated SVG (initials) for a profile without one. Same username rules as the query form.",
        parameters: [{ name: 'u', in: 'query', required: true, schema: schema(UsernameQuerySchema), example: name }],
        responses: {
          200: image('The avatar file, or a generated SVG for a profile without one.'),
          304: notModified,
          400: err('Missing or malformed username.', usernameMissing),
          404: err('No such user.', userNotFound),
        },
      }),
      [DECORATION_PATH]: readOnly({
        id: 'getDecoration',
        tag: 'images',
        summary: 'An avatar decoration image',
        description: 'Only file names the content declares are served; any other name, or a path, is a 404.',
        parameters: [{ name: 'f', in: 'query', required: true, schema: schema(DecorationFileSchema), example: sampleUser?.avatarDecoration?.file ?? 'sakura.png' }],
        responses: {
          200: image('The decoration image.'),
          304: notModified,
          400: err('No file name, or more than one.', error(400, 'INVALID_PARAMETER', DECORATION_FILE_REQUIRED)),
          404: err('Not a declared decoration file.', error(404, 'DECORATION_NOT_FOUND', 'There is no decoration with this file name.')),
        },
      }),
      '/p/{username}': readOnly({
        id: 'getProfilePage',
        tag: 'pages',
        summary: 'The profile page (HTML)',
        description: 'A pre-rendered page at the lowercase address; other casings and a trailing slash redirect there.',
        parameters: [{ name: 'username', in: 'path', required: true, schema: { type: 'string' }, example: name }],
        responses: {
          200: { description: 'The page.', headers: { ...WITH_ETAG, ...PAGE_HEADERS }, content: { 'text/html': { schema: { type: 'string' } } } },
          304: notModified,
          308: { description: 'Another casing: a redirect to the lowercase address, with the query as it came.', headers: { ...CACHEABLE_HEADERS, Location: { description: 'The canonical address.', schema: { type: 'string' } } } },
          404: { description: 'The 404 page.', headers: { ...CACHEABLE_HEADERS, ...PAGE_HEADERS, ...CODED }, content: { 'text/html': { schema: { type: 'string' } } } },
        },
      }),
    },
    components: {
      schemas: {
        UserBody: schema(UserBodySchema),
        CreatorsBody: schema(CreatorsBodySchema),
        Error: schema(ErrorBodySchema),
      },
      responses: responseComponents,
      headers: {
        ...Object.fromEntries(Object.entries(COMMON_HEADERS).filter(([n]) => n !== 'cache-control')
          .map(([n, v]) => [titleCase(n).replaceAll('-', ''), constHeader(COMMON_HEADER_NOTES[n] ?? 'Sent on every answer.', v)])),
        CacheControl: constHeader('An edge keeps the answer 30 s and may serve it stale 60 s more while it refreshes.', CACHE_CONTROL),
        CacheControlNoStore: constHeader('Never stored: the answer depends on more than the URL, or on a failure of ours.', NO_STORE),
        CacheControlOfError: {
          description: `The error of a URL is kept by an edge as an answer is (\`${CACHE_CONTROL}\`); one about the request itself (\`BAD_REQUEST\`: unparseable, no \`Host\` or several; a method HTTP does not define) is \`${NO_STORE}\`, since a cache keys on the URL alone.`,
          schema: { type: 'string', enum: [CACHE_CONTROL, NO_STORE] },
        },
        // An enum of one, not a `const`: a `const` header is one every such answer carries.
        Vary: { description: 'On answers sent from the build\'s files (pre-rendered JSON, pages), which come in the coding the client accepts: a cache keeps one copy per coding. Absent on answers made on demand.', schema: { type: 'string', enum: ['Accept-Encoding'] } },
        ContentEncoding: { description: 'The coding of the body, when the client accepts one and the file has it: `br` before `gzip`. Absent: the body as it is.', schema: { type: 'string', enum: ['br', 'gzip'] } },
        ContentSecurityPolicy: { description: 'HTML: only the site\'s own files, no inline script, no framing. SVG: no script, sandboxed.', schema: { type: 'string', enum: [HTML_CSP, SVG_CSP] } },
        XFrameOptions: constHeader('HTML only: never in a frame.', 'DENY'),
        ETag: { description: 'Send it back in `If-None-Match` to get a 304.', schema: { type: 'string' } },
      },
    },
  };
}

/** What `meta` says on an answer the build wrote as a file (src/api/prerendered.ts). */
const PRERENDERED_META = 'On an answer the build pre-rendered as a file (a user at the lowercase path, the creators list without parameters, '
  + 'and an error file of a static host), `meta.timestamp` is the time of the build that last changed its `data` (an error file: the build\'s time), '
  + 'not when the answer was sent, and `meta.executionTimeMs` is 0.';
/** What `meta` says on an answer the handler makes (src/http/response.ts). */
const ON_DEMAND_META = 'On an answer made on demand (other casings, the query form, the creators list with parameters, errors from the server or a Worker), '
  + '`meta.timestamp` is when the answer was made and `meta.executionTimeMs` the milliseconds from the request\'s arrival to the answer (0 on a 5xx, which is not timed).';

const COMMON_HEADER_NOTES: Record<string, string> = {
  'access-control-allow-origin': 'Open CORS: any origin may read the answer.',
  'access-control-expose-headers': 'Headers a browser script may read besides the safelisted ones.',
  'x-content-type-options': 'The declared type is the type.',
  'referrer-policy': 'Only the origin is sent to other sites.',
};
