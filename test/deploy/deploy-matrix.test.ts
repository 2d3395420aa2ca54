// The deploy matrix's table in docs/deploying.md is the one scripts/deploy/deploy-matrix.ts makes;
// `npm run check:deploy` holds each of its cells to the hosts themselves.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROWS, TABLE_END, TABLE_START, TARGETS, claimOf, matrixTable } from '../../scripts/deploy/deploy-matrix.ts';
import { ROOT } from '../support/helpers.ts';

describe('the deploy matrix', () => {
  test('docs/deploying.md holds the table the matrix makes (npm run check:deploy -- --write-table)', () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'deploying.md'), 'utf8');
    expect(docs).toContain(`${TABLE_START}\n${matrixTable()}\n${TABLE_END}`);
  });

  test('every cell of a target that runs here says yes or no, so check:deploy can hold it to its probe', () => {
    const unchecked = ROWS.flatMap((r) => TARGETS.filter((t) => t.runs && claimOf(r.cells[t.id]) === undefined).map((t) => `${t.id}: ${r.feature}`));
    expect(unchecked).toEqual([]);
  });
});
