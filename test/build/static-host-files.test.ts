// The files a static build adds for hosts with files only (src/build/hosts/static-host-files.ts): the
// handler's own error answers as far as a file can hold them, and never served at their own address.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { answer } from '../../src/api/handler.ts';
import { API_NOT_FOUND_FILE, INVALID_USERNAME_FILE, METHOD_NOT_ALLOWED_FILE, NOJEKYLL_FILE, REQUEST_ERROR_FILE, USERNAME_AT_FILE, USERNAME_REPEATED_FILE, USER_NOT_FOUND_FILE, staticHostFiles, writeStaticHostFiles } from '../../src/build/hosts/static-host-files.ts';
import { staticHostHeaders } from '../../src/build/hosts/static-host-headers.ts';
import { ErrorBodySchema } from '../../src/schemas/api.ts';
import { filesAt, isServedFile } from '../../src/http/headers.ts';
import { bodyJson, fixtureSite, request } from '../support/helpers.ts';

const BUILT_AT = '2026-01-15T12:00:00.000Z';
const { files } = fixtureSite();

describe('static host files', () => {
  test('each error file is the handler\'s answer for its case: status code, error code, envelope; only the unknown user\'s name is missing', async () => {
    const written = staticHostFiles(BUILT_AT);
    const cases = [
      [USER_NOT_FOUND_FILE, request('/api/v1/users/nobody')],
      [API_NOT_FOUND_FILE, request('/api/v2/anything')],
      [METHOD_NOT_ALLOWED_FILE, request('/api/v1/users/alice', { method: 'POST' })],
      [USERNAME_REPEATED_FILE, request('/api/v1/users?username=bob&username=alice')],
      [INVALID_USERNAME_FILE, request('/api/v1/users/alice.gz')],
      [USERNAME_AT_FILE, request('/api/v1/users/@alice')],
    ] as const;
    const statuses = { [USER_NOT_FOUND_FILE]: 404, [API_NOT_FOUND_FILE]: 404, [METHOD_NOT_ALLOWED_FILE]: 405, [USERNAME_REPEATED_FILE]: 400, [INVALID_USERNAME_FILE]: 400, [USERNAME_AT_FILE]: 400 };
    for (const [file, req] of cases) {
      const handler = await answer(req, files);
      const fromHandler = bodyJson(handler);
      const body = JSON.parse(written[file]!);
      expect(ErrorBodySchema.safeParse(body).success, file).toBe(true);
      expect(body.error.code, file).toBe(fromHandler.error.code);
      expect(Object.keys(body), file).toEqual(Object.keys(fromHandler));
      expect({ ...body.meta, timestamp: 0, executionTimeMs: 0 }).toEqual({ ...fromHandler.meta, timestamp: 0, executionTimeMs: 0 });
      expect(body.meta.timestamp).toBe(BUILT_AT);
      // The status nginx-static.conf sends the file with is the handler's.
      expect(handler.status, file).toBe(statuses[file]);
      // A name's 400 names no name: the handler's very words.
      if (file === INVALID_USERNAME_FILE || file === USERNAME_AT_FILE) expect(body.error.message, file).toBe(fromHandler.error.message);
    }
    // The server's refusals of a request's bytes are its `requestError`s (src/server/server.ts): BAD_REQUEST, never stored.
    const refused = JSON.parse(written[REQUEST_ERROR_FILE]!);
    expect(ErrorBodySchema.safeParse(refused).success).toBe(true);
    expect(refused.error.code).toBe('BAD_REQUEST');
    expect(JSON.parse(written[API_NOT_FOUND_FILE]!).error.message).toBe(bodyJson(await answer(request('/api/v2/anything'), files)).error.message);
    expect(JSON.parse(written[USER_NOT_FOUND_FILE]!).error.message).not.toMatch(/nobody/);
  });

  test('the same build time makes the same bytes', () => {
    expect(staticHostFiles(BUILT_AT)).toEqual(staticHostFiles(BUILT_AT));
    expect(staticHostFiles(BUILT_AT)[USER_NOT_FOUND_FILE]).not.toBe(staticHostFiles('2027-01-01T00:00:00.000Z')[USER_NOT_FOUND_FILE]);
  });

  test('none is served at an address of its own, nor given a `_headers` rule', () => {
    for (const file of Object.keys(staticHostFiles(BUILT_AT))) {
      expect(isServedFile(file), file).toBe(false);
      expect(filesAt(`/${file}`), file).toEqual([]);
    }
    const rules = staticHostHeaders([...Object.keys(staticHostFiles(BUILT_AT)), 'index.html', 'p/alice.html']);
    expect(rules).not.toMatch(/_errors|nojekyll/);
  });

  test('written beside the pages, and refused where the 404 page is missing', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'static-host-files-'));
    try {
      expect(() => writeStaticHostFiles(dir, BUILT_AT)).toThrow(/404\.html is missing/);
      fs.writeFileSync(path.join(dir, '404.html'), '<!doctype html>');
      writeStaticHostFiles(dir, BUILT_AT);
      for (const [file, text] of Object.entries(staticHostFiles(BUILT_AT))) expect(fs.readFileSync(path.join(dir, file), 'utf8'), file).toBe(text);
      expect(fs.statSync(path.join(dir, NOJEKYLL_FILE)).size).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
