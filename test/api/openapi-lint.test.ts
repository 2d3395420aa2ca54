// /openapi.json through the linters API consumers run on it, with their default rules: Redocly's
// `recommended` and Spectral's `spectral:oas`. No errors; the only warnings are the ones docs/api.md
// justifies, so a new warning fails here until it is fixed or justified there.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildOpenApi } from '../../src/api/openapi.ts';
import { ROOT, fixtureSite } from '../support/helpers.ts';

const run = promisify(execFile);
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);
/** The answers described once for every path (the info names them), which no operation references. */
const SHARED_ANSWERS = ['#/components/responses/MethodNotAllowed', '#/components/responses/Preflight'];

interface Problem { rule: string; severity: 'error' | 'warning'; at: string }

let dir: string;
let file: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(buildOpenApi(fixtureSite().index), null, 2));
  fs.writeFileSync(path.join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs a linter CLI; both exit non-zero when they find errors, and still print their report. */
async function lint(args: string[]): Promise<string> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  try {
    return (await run(process.execPath, args, { cwd: dir, env, maxBuffer: 64 << 20 })).stdout;
  } catch (e) {
    const out = (e as { stdout?: string }).stdout;
    if (!out) throw e;
    return out;
  }
}

async function redocly(): Promise<Problem[]> {
  const report = JSON.parse(await lint([bin('redocly'), 'lint', file, '--extends=recommended', '--format=json']));
  return report.problems.map((p: { ruleId: string; severity: string; location: { pointer: string }[] }) => ({
    rule: p.ruleId, severity: p.severity === 'error' ? 'error' : 'warning', at: p.location[0]?.pointer ?? '',
  }));
}

async function spectral(): Promise<Problem[]> {
  const report = JSON.parse(await lint([bin('spectral'), 'lint', file, '--ruleset', path.join(dir, '.spectral.yaml'), '--format=json', '--quiet']));
  return report.map((p: { code: string; severity: number; path: string[] }) => ({
    rule: p.code, severity: p.severity === 0 ? 'error' : 'warning', at: p.path.join('/'),
  }));
}

/** The JSON pointer of a problem's place, as `#/a/b`. */
const pointer = (at: string) => (at.startsWith('#/') ? at : `#/${at}`);

describe('the OpenAPI document in third-party linters', () => {
  test('Redocly (recommended): no errors; warnings only where docs/api.md says why', async () => {
    const problems = await redocly();
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    const rules = new Set(problems.map((p) => p.rule));
    expect([...rules].sort()).toEqual(['info-license', 'no-unused-components']);
    // Every operation has a 2xx; the only components unused are the answers described once.
    const unused = problems.filter((p) => p.rule === 'no-unused-components').map((p) => pointer(p.at)).sort();
    expect(unused).toEqual(SHARED_ANSWERS);
  }, 60_000);

  test('Spectral (spectral:oas): no errors; warnings only where docs/api.md says why', async () => {
    const problems = await spectral();
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    const rules = new Set(problems.map((p) => p.rule));
    expect([...rules].sort()).toEqual(['info-contact', 'oas3-unused-component']);
    const unused = problems.filter((p) => p.rule === 'oas3-unused-component').map((p) => pointer(p.at)).sort();
    expect(unused).toEqual(SHARED_ANSWERS);
  }, 60_000);
});
