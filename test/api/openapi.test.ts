// /openapi.json: valid OpenAPI 3.1, generated from the Zod schemas, and every real answer of every
// route and status validates against the schema it declares.
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { z } from 'astro/zod';
import { describe, expect, test } from 'vitest';
import { buildOpenApi } from '../../src/api/openapi.ts';
import { CreatorsBodySchema, ErrorBodySchema, UserBodySchema } from '../../src/schemas/api.ts';
import { BUILD_EPOCH, sharedBuild } from '../support/built-server.ts';
import { SITE_URL, fixtureSite } from '../support/helpers.ts';
import { buildSiteIndex } from '../../src/model/site-index.ts';

type Json = Record<string, any>;
const { content, index } = fixtureSite();
const doc = buildOpenApi(index) as Json;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** Responses every request can get, whatever its method: the ones GET references besides its own. */
const UNROUTED = ['414', '431', '500'];

/**
 * The responses a request can get, as the document says: GET is the path's one operation; HEAD gets
 * GET's statuses and headers without a body; OPTIONS and every other method get the shared
 * answers the info names (and, like any request, 414, 431 or 500).
 */
function responsesFor(method: string, pathname: string): Json | undefined {
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (!pattern.test(pathname)) continue;
    const get = (item as Json).get.responses as Json;
    if (method === 'GET' || method === 'HEAD') return get;
    const unrouted = Object.fromEntries(UNROUTED.map((s) => [s, get[s]]));
    const shared = method === 'OPTIONS' ? { 204: { $ref: '#/components/responses/Preflight' } } : { 405: { $ref: '#/components/responses/MethodNotAllowed' } };
    return { ...unrouted, ...shared };
  }
  return undefined;
}

/** A response, header or schema, with a local `$ref` followed. */
const resolve = (o: Json): Json => (o.$ref ? o.$ref.slice(2).split('/').reduce((at: Json, key: string) => at[key], doc) : o);

/**
 * Checks one real answer against the document: the status is declared, every header the document
 * fixes has that value, and a JSON body matches its schema.
 */
function conforms(method: string, target: string, status: number, contentType: string | null, body: string, headers?: Headers) {
  const url = new URL(target, 'http://x');
  const responses = responsesFor(method, url.pathname);
  expect(responses, `${method} ${url.pathname} is in the document`).toBeDefined();
  expect(responses![String(status)], `${method} ${target} → ${status} is declared`).toBeDefined();
  const declared = resolve(responses![String(status)]);
  if (method === 'HEAD') expect(body, `HEAD ${target} → ${status} has no body`).toBe('');
  for (const [name, h] of Object.entries((headers && declared.headers) ?? {})) {
    // A `const` header is on every such answer; one of an `enum`, where it is sent, one of its values.
    const { const: fixed, enum: values } = resolve(h as Json).schema ?? {};
    if (fixed !== undefined) expect(headers!.get(name), `${method} ${target} → ${status}: ${name}`).toBe(fixed);
    if (values !== undefined && headers!.has(name)) expect(values, `${method} ${target} → ${status}: ${name}`).toContain(headers!.get(name));
  }
  if (!contentType || status === 304 || method === 'HEAD') return;
  const type = contentType.split(';')[0]!.trim();
  const media = declared.content?.[type];
  expect(media, `${method} ${target} → ${status} declares ${type}`).toBeDefined();
  if (type === 'application/json') {
    let schema = media.schema as Json;
    if (schema.$ref) schema = doc.components.schemas[schema.$ref.split('/').pop()];
    const validate = ajv.compile(schema);
    const ok = validate(JSON.parse(body));
    expect(ok, `${method} ${target}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
}

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  test('is the same for every build of the same content on the same day; the next day its examples say so', () => {
    const at = (iso: string) => JSON.stringify(buildOpenApi(buildSiteIndex(content, { siteUrl: SITE_URL, builtAt: new Date(iso) })));
    const morning = at('2026-01-15T00:00:01Z');
    expect(at('2026-01-15T23:59:59.999Z')).toBe(morning);
    const stamps = (text: string) => [...new Set([...text.matchAll(/"timestamp":"([^"]+)"/g)].map((m) => m[1]))];
    expect(stamps(morning)).toEqual(['2026-01-15T00:00:00.000Z']);
    const nextDay = at('2026-01-16T08:00:00Z');
    expect(stamps(nextDay)).toEqual(['2026-01-16T00:00:00.000Z']);
    // The example's account age moves with the day too: the document is not frozen, only its instant.
    expect(nextDay.replaceAll('2026-01-16T00', '2026-01-15T00')).not.toBe(morning);
  });

  test('needs no key: security is an empty list, not left unsaid', () => {
    expect(doc.security).toEqual([]);
    expect(doc.components.securitySchemes).toBeUndefined();
  });

  test('every path has one operation, its GET: HEAD, OPTIONS and the refused methods are described once', () => {
    const operations = Object.entries(doc.paths as Json).flatMap(([template, item]) => Object.keys(item as Json).map((m) => `${m} ${template}`));
    expect(operations).toEqual([
      'get /api/v1/users/{username}', 'get /api/v1/users', 'get /service-api/v1/creators', 'get /api/avatar', 'get /api/decoration', 'get /p/{username}',
    ]);
    const { MethodNotAllowed, Preflight } = doc.components.responses;
    expect(MethodNotAllowed.headers.Allow.schema.const).toBe('GET, HEAD, OPTIONS');
    expect(Object.keys(MethodNotAllowed.content['application/json'].examples)).toEqual(['PUT', 'POST', 'DELETE', 'PATCH', 'TRACE']);
    expect(Preflight.headers['Access-Control-Allow-Methods'].schema.const).toBe('GET, HEAD, OPTIONS');
    // No operation refers to them: the info does, where a reader and a generator look once.
    expect(JSON.stringify(doc.paths)).not.toMatch(/MethodNotAllowed|Preflight/);
    for (const said of ['`Allow: GET, HEAD, OPTIONS`', '`HEAD` gets the status and headers `GET` would', '`components.responses.Preflight`', '`components.responses.MethodNotAllowed`']) {
      expect(doc.info.description).toContain(said);
    }
  });

  test('says what `meta.timestamp` and `executionTimeMs` mean on each form of each JSON operation', () => {
    expect(doc.info.description).toContain('`meta.timestamp` is the time of the build that last changed its `data`');
    expect(doc.info.description).toContain('`meta.timestamp` is when the answer was made');
    const meta = doc.components.schemas.UserBody.properties.meta.properties;
    expect(meta.timestamp.description).toMatch(/Pre-rendered.*when its `data` last changed/);
    expect(meta.executionTimeMs.description).toMatch(/Pre-rendered: 0/);
    for (const template of ['/api/v1/users/{username}', '/api/v1/users', '/service-api/v1/creators']) {
      const said = doc.paths[template].get.description as string;
      expect(said, template).toMatch(/`executionTimeMs` is 0|`executionTimeMs` 0/);
      expect(said, template).toContain('`timestamp` is when the answer was made');
    }
  });

  test('every operation of a templated path declares its path parameters', () => {
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(item as Json)) {
        const declared = ((op as Json).parameters ?? []).filter((p: Json) => p.in === 'path').map((p: Json) => p.name);
        expect(declared, `${method} ${template}`).toEqual(names);
      }
    }
  });

  test('the username path parameter accepts any ASCII casing, as the server does', () => {
    const param = doc.paths['/api/v1/users/{username}'].get.parameters[0];
    const valid = ajv.compile(param.schema);
    for (const name of ['lena-kowalski', 'LENA-KOWALSKI', 'aLiCe', 'erin_99', 'ERIN_99']) expect(valid(name), name).toBe(true);
    for (const name of ['@alice', 'a.b', '-alice', '', 'é']) expect(valid(name), name).toBe(false);
  });

  test('its schemas are generated from the Zod schemas, not written by hand', () => {
    const generated = (s: z.ZodType) => {
      const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as Json;
      return rest;
    };
    expect(doc.components.schemas.UserBody).toEqual(generated(UserBodySchema));
    expect(doc.components.schemas.CreatorsBody).toEqual(generated(CreatorsBodySchema));
    expect(doc.components.schemas.Error).toEqual(generated(ErrorBodySchema));
    expect(Object.keys(doc.components.schemas.UserBody.properties.data.properties)).toEqual(Object.keys(UserBodySchema.shape.data.shape));
  });

  test('every route has its statuses, and every example validates against its schema', () => {
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      const get = (item as Json).get;
      expect(get, template).toBeDefined();
      expect(Object.keys(get.responses), template).toContain('200');
      for (const [status, r] of Object.entries(get.responses as Json)) {
        const media = resolve(r as Json).content?.['application/json'];
        if (!media) continue;
        expect(media.example, `${template} ${status} example`).toBeDefined();
        conforms('GET', template.replace(/\{[^}]+\}/g, 'x'), Number(status), 'application/json', JSON.stringify(media.example));
      }
    }
    const validate = ajv.compile(doc.components.schemas.Error);
    for (const [name, r] of Object.entries(doc.components.responses as Json)) {
      const media = (r as Json).content?.['application/json'];
      for (const ex of media ? [media.example, ...Object.values(media.examples ?? {}).map((e: any) => e.value)].filter(Boolean) : []) {
        expect(validate(ex), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
  });
});

describe('real answers validate against the document', () => {
  const { base } = sharedBuild();

  // The requests of the shared conformance suite, and one of every other route and status.
  const requests: [string, string, Record<string, string>?][] = [
    ['GET', '/api/v1/users/alice'], ['GET', '/api/v1/users/bob'], ['GET', '/api/v1/users/carol'], ['GET', '/api/v1/users/dave'],
    ['GET', '/api/v1/users/erin_99'], ['GET', '/api/v1/users/ALICE'], ['GET', '/api/v1/users/aLiCe'], ['GET', '/api/v1/users/ERIN_99'],
    ['GET', '/api/v1/users?username=alice'], ['GET', '/api/v1/users?username=ALICE'], ['GET', '/api/v1/users?username=@alice'],
    ['GET', '/api/v1/users?username=%20%40Alice%20'], ['GET', '/api/v1/users?username=carol'], ['GET', '/api/v1/users/@alice'],
    ['GET', '/api/v1/users/nobody'], ['GET', '/api/v1/users?username=nobody'], ['GET', '/api/v1/users?username='],
    ['GET', '/api/v1/users?username=%20%40%20'], ['GET', '/api/v1/users'], ['GET', '/service-api/v1/creators'],
    ['GET', '/service-api/v1/creators?limit=2&sort=views'], ['GET', '/service-api/v1/creators?limit=0'],
    ['GET', '/api/avatar?u=alice'], ['GET', '/api/avatar?u=ALICE'], ['GET', '/api/avatar?u=bob'], ['GET', '/api/avatar?u=nobody'],
    ['GET', '/api/avatar'], ['GET', '/api/decoration?f=sakura.png'], ['GET', '/api/decoration?f=nope.png'],
    ['GET', '/api/decoration?f=..%2F..%2Fpackage.json'], ['GET', '/api/decoration'], ['GET', '/p/alice'], ['GET', '/p/ALICE'],
    ['GET', '/p/carol'], ['GET', '/p/nobody'], ['HEAD', '/api/v1/users/alice'],
    ['OPTIONS', '/api/v1/users/alice', { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' }],
    ['POST', '/api/v1/users/alice'], ['GET', '/api/v1/users/alice', { authorization: 'Bearer x', 'x-api-key': 'k', cookie: 's=1' }],
    ['PUT', '/api/v1/users/alice'], ['DELETE', '/service-api/v1/creators'], ['PATCH', '/p/alice'], ['HEAD', '/service-api/v1/creators'],
    ['HEAD', '/api/v1/users/nobody'], ['HEAD', '/p/ALICE'], ['OPTIONS', '/service-api/v1/creators'], ['GET', `/api/v1/users/${'a'.repeat(9000)}`],
  ];

  // What the descriptions say of `meta`, on real answers of each form.
  test('a pre-rendered answer carries its build time and 0 ms; one made on demand, its own time', async () => {
    const built = new Date(BUILD_EPOCH * 1000).toISOString();
    for (const target of ['/api/v1/users/alice', '/service-api/v1/creators']) {
      const { meta } = await (await fetch(base + target)).json();
      expect(meta, target).toMatchObject({ timestamp: built, executionTimeMs: 0 });
    }
    for (const target of ['/api/v1/users/ALICE', '/api/v1/users?username=alice', '/service-api/v1/creators?limit=2', '/api/v1/users/nobody']) {
      const before = Date.now();
      const { meta } = await (await fetch(base + target)).json();
      const at = Date.parse(meta.timestamp);
      expect(at, target).toBeGreaterThanOrEqual(before - 1);
      expect(at, target).toBeLessThanOrEqual(Date.now());
      expect(meta.executionTimeMs, target).toBeGreaterThanOrEqual(0);
    }
  });

  test.each(requests)('%s %s', async (method, target, headers = {}) => {
    const r = await fetch(base + target, { method, headers, redirect: 'manual', body: ['POST', 'PUT', 'PATCH'].includes(method) ? '{}' : undefined });
    conforms(method, target, r.status, r.headers.get('content-type'), await r.text(), r.headers);
    const etag = r.headers.get('etag');
    if (method === 'GET' && r.status === 200 && etag) {
      const again = await fetch(base + target, { headers: { 'if-none-match': etag }, redirect: 'manual' });
      expect(again.status).toBe(304);
      conforms(method, target, 304, null, '');
    }
  });
});
