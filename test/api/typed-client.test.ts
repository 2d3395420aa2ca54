// A typed client as API consumers make one: `openapi-typescript` generates types from the served
// /openapi.json, `openapi-fetch` calls the real server with them, and `tsc` checks the calls.
// The types are generated on every run, from the document the server serves, so there is no
// committed copy to go stale.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sharedBuild } from '../support/built-server.ts';
import { ROOT } from '../support/helpers.ts';

const run = promisify(execFile);
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

/** What a consumer writes: every call typed from the generated `paths`, and misuse caught by tsc. */
const CALLS = `
import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

export async function calls(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  // Any ASCII casing is a valid path parameter, as the server answers it.
  const user = await client.GET('/api/v1/users/{username}', { params: { path: { username: 'ALICE' } } });
  const displayName: string | undefined = user.data?.data.displayName;
  const status: 'active' | 'suspended' | undefined = user.data?.data.status;

  const missing = await client.GET('/api/v1/users/{username}', { params: { path: { username: 'nobody' } } });
  // The error codes are the schema's enum, not any string.
  const code: 'USER_NOT_FOUND' | 'MISSING_USERNAME' | 'INVALID_USERNAME' | 'INVALID_PARAMETER' | 'DECORATION_NOT_FOUND'
    | 'NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'BAD_REQUEST' | 'INTERNAL_ERROR' | undefined = missing.error?.error.code;

  const page = await client.GET('/service-api/v1/creators', { params: { query: { limit: 2, sort: 'views' } } });
  const next: string | null | undefined = page.data?.links.next;
  const usernames: string[] | undefined = page.data?.data.map((c) => c.username);
  const following = next ? await client.GET('/service-api/v1/creators', { params: { query: { limit: 2, sort: 'views', cursor: new URL(next).searchParams.get('cursor') ?? undefined } } }) : undefined;

  return {
    user: { status: user.response.status, displayName, accountStatus: status },
    missing: { status: missing.response.status, code },
    page: { status: page.response.status, next, usernames, link: page.response.headers.get('link') },
    following: following && {
      status: following.response.status, usernames: following.data?.data.map((c) => c.username), prev: following.data?.links.prev,
      link: following.response.headers.get('link'),
    },
  };
}

export function misuse(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error not a path of the API
  void client.GET('/api/v2/users');
  // @ts-expect-error the username is a required path parameter
  void client.GET('/api/v1/users/{username}', { params: { path: {} } });
  // @ts-expect-error \`limit\` is a number
  void client.GET('/service-api/v1/creators', { params: { query: { limit: 'two' } } });
  // @ts-expect-error \`sort\` is one of the documented orders
  void client.GET('/service-api/v1/creators', { params: { query: { sort: 'random' } } });
  // @ts-expect-error a refused method is no operation: it could only ever get a 405
  void client.DELETE('/api/v1/users/{username}', { params: { path: { username: 'alice' } } });
  // @ts-expect-error nor is HEAD: the same lookup as GET, without the body
  void client.HEAD('/api/v1/users/{username}', { params: { path: { username: 'alice' } } });
}
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true, noEmit: true, target: 'es2022', module: 'preserve', moduleResolution: 'bundler',
    allowImportingTsExtensions: true, lib: ['es2022', 'dom', 'dom.iterable'], types: [], skipLibCheck: true,
  },
  files: ['calls.ts'],
};

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * What a generator gives a client, read from the generated types with the TypeScript parser: the
 * `METHOD /path` pairs of `paths` typed as an operation (not `never`), and the `operations` names.
 */
function generatedOperations(source: string): { paths: string[]; operations: string[] } {
  const file = ts.createSourceFile('api.ts', source, ts.ScriptTarget.Latest);
  const members = (name: string) => {
    const found = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
    if (!found) throw new Error(`no \`${name}\` interface in the generated types`);
    return found.members.filter(ts.isPropertySignature);
  };
  const key = (m: ts.PropertySignature) => (m.name as ts.Identifier | ts.StringLiteral).text;
  const paths = members('paths').flatMap((item) => (item.type && ts.isTypeLiteralNode(item.type) ? [...item.type.members] : [])
    .filter((m): m is ts.PropertySignature => ts.isPropertySignature(m))
    .filter((m) => HTTP_METHODS.has(key(m)) && m.type?.kind !== ts.SyntaxKind.NeverKeyword)
    .map((m) => `${key(m).toUpperCase()} ${key(item)}`));
  return { paths, operations: members('operations').map(key) };
}

const service = sharedBuild();
let dir: string;
beforeAll(async () => {
  // Outside node_modules (Node and Vite would not compile a .ts file in there), with the
  // project's packages linked in so `openapi-fetch` resolves as in a consumer's project.
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'typed-client-'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  fs.writeFileSync(path.join(dir, 'calls.ts'), CALLS);
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  await run(process.execPath, [bin('openapi-typescript'), `${service.base}/openapi.json`, '--output', path.join(dir, 'api.ts')], { cwd: dir });
}, 120_000);
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a client generated with openapi-typescript and openapi-fetch', () => {
  test('the generated types and the calls type-check with tsc', async () => {
    const tsc = await run(process.execPath, [bin('tsc'), '-p', path.join(dir, 'tsconfig.json')], { cwd: dir }).catch((e) => e);
    expect(`${tsc.stdout ?? ''}${tsc.stderr ?? ''}`).toBe('');
    expect(tsc.code ?? 0).toBe(0);
  }, 60_000);

  test('has one operation per real lookup: a GET on each path, nothing for HEAD, OPTIONS or refused methods', () => {
    const { paths, operations } = generatedOperations(fs.readFileSync(path.join(dir, 'api.ts'), 'utf8'));
    expect(paths).toEqual([
      'GET /api/v1/users/{username}', 'GET /api/v1/users', 'GET /service-api/v1/creators', 'GET /api/avatar', 'GET /api/decoration', 'GET /p/{username}',
    ]);
    expect(operations).toEqual(['getUser', 'findUser', 'listCreators', 'getAvatar', 'getDecoration', 'getProfilePage']);
  });

  test('runs against the real server: a user in any casing, a 404, the creators list, its pages and Link headers', async () => {
    const { calls } = await import(pathToFileURL(path.join(dir, 'calls.ts')).href);
    const result = await calls(service.base);
    expect(result.user).toMatchObject({ status: 200, displayName: expect.any(String), accountStatus: 'active' });
    expect(result.missing).toEqual({ status: 404, code: 'USER_NOT_FOUND' });
    expect(result.page).toMatchObject({ status: 200, usernames: expect.any(Array) });
    expect(result.page.usernames).toHaveLength(2);
    expect(result.page.next).toMatch(/^https:\/\/profiles\.example\.net\/service-api\/v1\/creators\?/);
    expect(result.following.status).toBe(200);
    expect(result.following.prev).toMatch(/cursor=/);
    // The same pages in a Link header (RFC 8288), readable by a browser script (exposed by CORS).
    expect(result.page.link).toBe(`<${result.page.next}>; rel="next"`);
    expect(result.following.link).toContain(`<${result.following.prev}>; rel="prev"`);
    expect(result.following.usernames.some((u: string) => result.page.usernames.includes(u))).toBe(false);
  });
});
