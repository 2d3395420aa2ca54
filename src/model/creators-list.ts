// The creators directory as a list API: filters, sorts and keyset cursors over the creators of one
// build. The pre-rendered default answer and every on-demand page are made by `creatorsPage`, so
// they cannot disagree.
import type { CreatorSummary } from '../schemas/api.ts';
import { CREATOR_SORTS, CreatorsQuerySchema, parseQuery, type CreatorSort } from '../schemas/queries.ts';

export type { CreatorSort };

/** A creator with what sorting needs beyond the public summary. */
export interface CreatorRow {
  summary: CreatorSummary;
  /** Milliseconds, from the profile's createdAt. */
  createdAt: number;
}

export interface CreatorsQuery {
  limit: number;
  sort: CreatorSort;
  category?: string;
  featured?: boolean;
  /** Keyset position from a cursor: items strictly after (or before) this row in the sort order. */
  cursor?: { after?: CursorKey; before?: CursorKey };
}

type CursorKey = { f: boolean; v: number; c: number; n: string; u: string };

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
const byUsername = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Total orders, each ending in the username, so a page boundary is never ambiguous. */
const COMPARE: Record<CreatorSort, (a: CursorKey, b: CursorKey) => number> = {
  featured: (a, b) => Number(b.f) - Number(a.f) || b.v - a.v || collator.compare(a.n, b.n) || byUsername(a.u, b.u),
  views: (a, b) => b.v - a.v || collator.compare(a.n, b.n) || byUsername(a.u, b.u),
  newest: (a, b) => b.c - a.c || byUsername(a.u, b.u),
  name: (a, b) => collator.compare(a.n, b.n) || byUsername(a.u, b.u),
};

const keyOf = (row: CreatorRow): CursorKey => ({
  f: row.summary.featured, v: row.summary.views, c: row.createdAt, n: row.summary.displayName, u: row.summary.username,
});

/** The rows sorted each way, computed once per build. */
export function sortedCreators(rows: readonly CreatorRow[]): Record<CreatorSort, CreatorRow[]> {
  const out = {} as Record<CreatorSort, CreatorRow[]>;
  for (const sort of CREATOR_SORTS) out[sort] = [...rows].sort((a, b) => COMPARE[sort](keyOf(a), keyOf(b)));
  return out;
}

// Cursors are opaque to clients: base64url JSON with the sort they belong to and a boundary key.
export const encodeCursor = (sort: CreatorSort, dir: 'after' | 'before', key: CursorKey) =>
  Buffer.from(JSON.stringify({ s: sort, [dir === 'after' ? 'a' : 'b']: key })).toString('base64url');

function decodeCursor(raw: string, sort: CreatorSort): CreatorsQuery['cursor'] | string {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,2048}$/.test(raw)) throw new Error();
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    // `null` (cursor=bnVsbA) or a number is valid JSON but no cursor: reading `.a` of null was a 500.
    if (parsed === null || typeof parsed !== 'object') throw new Error();
  } catch {
    return 'is not a cursor from this API: use `links.next` or `links.prev` of a previous page as it is';
  }
  const p = parsed as { s?: unknown; a?: unknown; b?: unknown };
  const key = (p.a ?? p.b) as Partial<CursorKey> | undefined;
  const valid = key && typeof key === 'object' && typeof key.f === 'boolean' && Number.isFinite(key.v) && Number.isFinite(key.c)
    && typeof key.n === 'string' && typeof key.u === 'string';
  if (!valid || (p.a !== undefined) === (p.b !== undefined)) {
    return 'is not a cursor from this API: use `links.next` or `links.prev` of a previous page as it is';
  }
  if (p.s !== sort) return `belongs to \`sort=${String(p.s)}\`: keep the sort of the page it came from`;
  return p.a !== undefined ? { after: key as CursorKey } : { before: key as CursorKey };
}

export type ParsedCreatorsQuery = { ok: true; query: CreatorsQuery } | { ok: false; param: string; message: string };

/** Reads the query through CreatorsQuerySchema, then the cursor, which must belong to the sort asked for. */
export function parseCreatorsQuery(params: URLSearchParams): ParsedCreatorsQuery {
  const parsed = parseQuery(CreatorsQuerySchema, params);
  if (!parsed.ok) return parsed;
  const { limit, sort, category, featured, cursor: cursorRaw } = parsed.value;
  let cursor: CreatorsQuery['cursor'];
  if (cursorRaw !== undefined) {
    const decoded = decodeCursor(cursorRaw, sort);
    if (typeof decoded === 'string') return { ok: false, param: 'cursor', message: `\`cursor\` ${decoded}` };
    cursor = decoded;
  }
  return { ok: true, query: { limit, sort, cursor, category, featured: featured === undefined ? undefined : featured === 'true' } };
}

export interface CreatorsPage {
  items: CreatorSummary[];
  total: number;
  next: string | null;
  prev: string | null;
}

/** First index in `rows` whose key sorts after `key` (binary search). */
function firstAfter(rows: CreatorRow[], key: CursorKey, compare: (a: CursorKey, b: CursorKey) => number, inclusive: boolean): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compare(keyOf(rows[mid]!), key);
    if (c < 0 || (!inclusive && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * One page of the list. `url(params)` makes the full address of another page; next/prev are null at
 * the ends. Keyset cursors hold the boundary item, so a page never repeats or skips an item even
 * when a rebuild adds or removes creators between two requests.
 */
export function creatorsPage(sorted: Record<CreatorSort, CreatorRow[]>, q: CreatorsQuery, url: (params: URLSearchParams) => string): CreatorsPage {
  const category = q.category?.toLowerCase();
  let rows = sorted[q.sort];
  if (category !== undefined || q.featured !== undefined) {
    rows = rows.filter((r) => (category === undefined || r.summary.category.toLowerCase() === category)
      && (q.featured === undefined || r.summary.featured === q.featured));
  }
  const compare = COMPARE[q.sort];
  let start = 0;
  let end = Math.min(rows.length, q.limit);
  if (q.cursor?.after) {
    start = firstAfter(rows, q.cursor.after, compare, false);
    end = Math.min(rows.length, start + q.limit);
  } else if (q.cursor?.before) {
    end = firstAfter(rows, q.cursor.before, compare, true);
    start = Math.max(0, end - q.limit);
  }
  const page = rows.slice(start, end);
  const link = (dir: 'after' | 'before', row: CreatorRow) => {
    const params = new URLSearchParams();
    if (q.category !== undefined) params.set('category', q.category);
    if (q.featured !== undefined) params.set('featured', String(q.featured));
    if (q.sort !== 'featured') params.set('sort', q.sort);
    params.set('limit', String(q.limit));
    params.set('cursor', encodeCursor(q.sort, dir, keyOf(row)));
    return url(params);
  };
  return {
    items: page.map((r) => r.summary),
    total: rows.length,
    next: end < rows.length && page.length ? link('after', page.at(-1)!) : null,
    prev: start > 0 && page.length ? link('before', page[0]!) : null,
  };
}
