// The OpenAPI 3.1 document, generated from the Zod schemas in src/schemas (zod 4 converts them to
// JSON Schema 2020-12, OpenAPI 3.1's dialect) and from real answers of this build as examples.
// Never written by hand: a change to a schema changes the document.
import { z } from 'astro/zod';
import { API_VERSION, CreatorsBodySchema, ErrorBodySchema, UserBodySchema, type PublicUser } from '../schemas/api.ts';
import { CreatorsQuerySchema, DecorationFileSchema, UsernameParamSchema, UsernameQuerySchema } from '../schemas/queries.ts';
import { AVATAR_PATH, CREATORS_PATH, DECORATION_PATH, USERS_PATH, creatorsAnswer } from './handler.ts';
import { ALLOWED_METHODS, CACHE_CONTROL } from '../http/headers.ts';
import { errorJson, successJson, type ApiResponse } from '../http/response.ts';
import type { Site } from './site.ts';

type Json = Record<string, unknown>;

const schema = (s: z.ZodType): Json => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as Json;
  return rest;
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const body = (r: ApiResponse) => JSON.parse(typeof r.body === 'string' ? r.body : Buffer.from(r.body ?? '').toString('utf8'));

const COMMON_RESPONSE_HEADERS = {
  'Access-Control-Allow-Origin': { $ref: '#/components/headers/AccessControlAllowOrigin' },
  'Cache-Control': { $ref: '#/components/headers/CacheControl' },
};

export function buildOpenApi(site: Site): Json {
  const timestamp = site.builtAt;
  // The first profile that shows most of the object (a decoration, socials, active), else the first.
  let sampleUser: PublicUser | undefined;
  for (const entry of site.users()) {
    const user = JSON.parse(entry.data.toString('utf8')) as PublicUser;
    sampleUser ??= user;
    if (user.avatarDecoration && user.socials.length && user.status === 'active') {
      sampleUser = user;
      break;
    }
  }
  const name = sampleUser?.username ?? 'alice';
  const userExample = body(successJson(JSON.stringify(sampleUser ?? null), { timestamp, executionTimeMs: 0 }));
  const creatorsExample = body(creatorsAnswer(site, { limit: 2, sort: 'featured' }, timestamp, 0));
  const error = (status: number, code: Parameters<typeof errorJson>[1], message: string) => {
    const e = body(errorJson(status, code, message));
    e.meta.timestamp = timestamp;
    e.meta.executionTimeMs = 0.05;
    return e;
  };

  const json = (schemaRef: Json, description: string, example: unknown) => ({
    description,
    headers: { ...COMMON_RESPONSE_HEADERS, ETag: { $ref: '#/components/headers/ETag' } },
    content: { 'application/json': { schema: schemaRef, example } },
  });
  const err = (description: string, example: unknown) => ({
    description, headers: COMMON_RESPONSE_HEADERS, content: { 'application/json': { schema: ref('Error'), example } },
  });
  const notModified = { description: 'Not modified: the `If-None-Match` ETag still matches.', headers: COMMON_RESPONSE_HEADERS };
  const image = (description: string) => ({
    description,
    headers: { ...COMMON_RESPONSE_HEADERS, ETag: { $ref: '#/components/headers/ETag' } },
    content: Object.fromEntries(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/svg+xml']
      .map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])),
  });
  // Every path answers OPTIONS (preflight) and refuses writes with a 405.
  const readOnly = (id: string) => ({
    options: { operationId: `${id}Preflight`, summary: 'CORS preflight', responses: { 204: { description: 'Any origin; GET, HEAD, OPTIONS; `Authorization` and any other header.', headers: COMMON_RESPONSE_HEADERS } } },
    post: {
      operationId: `${id}Write`,
      summary: 'Writes are refused: the API is read-only (any method but GET, HEAD and OPTIONS)',
      responses: {
        405: {
          ...err('Method not allowed.', error(405, 'METHOD_NOT_ALLOWED', `POST is not allowed: this API is read-only (${ALLOWED_METHODS}).`)),
          headers: { ...COMMON_RESPONSE_HEADERS, Allow: { schema: { type: 'string', const: ALLOWED_METHODS } } },
        },
      },
    },
  });
  const usernameMissing = error(400, 'MISSING_USERNAME', 'A username is required.');

  const creatorParams = Object.entries((schema(CreatorsQuerySchema).properties ?? {}) as Record<string, Json>).map(([key, s]) => ({
    name: key, in: 'query', required: false, description: s.description, schema: s,
  }));

  return {
    openapi: '3.1.0',
    info: {
      title: 'Profile lookup API',
      version: API_VERSION,
      description: 'Read-only public profiles. No key; open CORS; every answer (errors too) is cacheable by an edge for 30 s '
        + `and may be served stale 60 s more (\`${CACHE_CONTROL}\`). Pre-rendered answers carry the build time in \`meta.timestamp\`.`,
    },
    servers: [{ url: site.siteUrl }],
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths: {
      [`${USERS_PATH}/{username}`]: {
        get: {
          operationId: 'getUser',
          summary: 'A user by username',
          description: 'Pre-rendered at the lowercase path; any other ASCII casing is answered on demand with the same `data`. `@` is not accepted here.',
          parameters: [{ name: 'username', in: 'path', required: true, schema: schema(UsernameParamSchema), example: name }],
          responses: {
            200: json(ref('UserBody'), 'The user. A suspended profile is 200 with `status: "suspended"` and `banInfo`.', userExample),
            304: notModified,
            400: err('Not a valid username (or `@` in the path).', error(400, 'INVALID_USERNAME', '`@` is not part of a username: use /api/v1/users/alice, or the query form /api/v1/users?username=@alice.')),
            404: err('No such user, or extra path segments.', error(404, 'USER_NOT_FOUND', 'No user is called `nobody`.')),
          },
        },
        ...readOnly('getUser'),
      },
      [USERS_PATH]: {
        get: {
          operationId: 'findUser',
          summary: 'A user by the query form',
          parameters: [{ name: 'username', in: 'query', required: true, schema: schema(UsernameQuerySchema), example: `@${name}` }],
          responses: {
            200: json(ref('UserBody'), 'The user.', userExample),
            304: notModified,
            400: err('Missing, empty, repeated or malformed username.', usernameMissing),
            404: err('No such user.', error(404, 'USER_NOT_FOUND', 'No user is called `nobody`.')),
          },
        },
        ...readOnly('findUser'),
      },
      [CREATORS_PATH]: {
        get: {
          operationId: 'listCreators',
          summary: 'Active creators, one page at a time',
          description: 'Without parameters this is a pre-rendered file (the first page). Follow `links.next` to page on: cursors are keyset positions, so pages never repeat or skip an item.',
          parameters: creatorParams,
          responses: {
            200: json(ref('CreatorsBody'), 'One page of creators.', creatorsExample),
            304: notModified,
            400: err('A parameter value is invalid; the message names it and what is allowed.', error(400, 'INVALID_PARAMETER', '`limit` must be a whole number from 1 to 100 (default 50)')),
          },
        },
        ...readOnly('listCreators'),
      },
      [AVATAR_PATH]: {
        get: {
          operationId: 'getAvatar',
          summary: "A user's avatar image",
          parameters: [{ name: 'u', in: 'query', required: true, schema: schema(UsernameQuerySchema), example: name }],
          responses: {
            200: image('The avatar file, or a generated SVG for a profile without one.'),
            304: notModified,
            400: err('Missing or malformed username.', usernameMissing),
            404: err('No such user.', error(404, 'USER_NOT_FOUND', 'No user is called `nobody`.')),
          },
        },
        ...readOnly('getAvatar'),
      },
      [DECORATION_PATH]: {
        get: {
          operationId: 'getDecoration',
          summary: 'An avatar decoration image',
          parameters: [{ name: 'f', in: 'query', required: true, schema: schema(DecorationFileSchema), example: sampleUser?.avatarDecoration?.file ?? 'sakura.png' }],
          responses: {
            200: image('The decoration image.'),
            304: notModified,
            400: err('No file name, or more than one.', error(400, 'INVALID_PARAMETER', 'Give the decoration file once, e.g. ?f=sakura.png.')),
            404: err('Not a declared decoration file.', error(404, 'DECORATION_NOT_FOUND', 'There is no decoration with this file name.')),
          },
        },
        ...readOnly('getDecoration'),
      },
      '/p/{username}': {
        get: {
          operationId: 'getProfilePage',
          summary: 'The profile page (HTML)',
          parameters: [{ name: 'username', in: 'path', required: true, schema: { type: 'string' }, example: name }],
          responses: {
            200: { description: 'The page.', headers: COMMON_RESPONSE_HEADERS, content: { 'text/html': { schema: { type: 'string' } } } },
            304: notModified,
            308: { description: 'Another casing: a redirect to the lowercase address.', headers: { ...COMMON_RESPONSE_HEADERS, Location: { schema: { type: 'string' } } } },
            404: { description: 'The 404 page.', headers: COMMON_RESPONSE_HEADERS, content: { 'text/html': { schema: { type: 'string' } } } },
          },
        },
        ...readOnly('getProfilePage'),
      },
    },
    components: {
      schemas: {
        UserBody: schema(UserBodySchema),
        CreatorsBody: schema(CreatorsBodySchema),
        Error: schema(ErrorBodySchema),
      },
      headers: {
        AccessControlAllowOrigin: { description: 'Open CORS.', schema: { type: 'string', const: '*' } },
        CacheControl: { description: 'Edge caching.', schema: { type: 'string' }, example: CACHE_CONTROL },
        ETag: { description: 'Send it back in `If-None-Match` to get a 304.', schema: { type: 'string' } },
      },
    },
  };
}
