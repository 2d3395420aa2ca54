// The deploy matrix: what each host does with a build, as data. The table in docs/deploying.md is
// rendered from it (a test compares them), and `npm run check:deploy` serves a build on each host's
// own software and holds every cell to its word: a `yes` must pass its probe, a `no` must fail it,
// so neither the docs nor the claims can drift from what the hosts do.
import http from 'node:http';

export type TargetId = 'node' | 'nginx-proxy' | 'cloudflare' | 'nginx-static' | 'netlify' | 'github-pages';

export interface Target {
  id: TargetId;
  /** The table's column heading. */
  heading: string;
  /** `DEPLOY_TARGET` of its build. */
  build: 'node' | 'cloudflare' | 'static';
  /** Built with `PRECOMPRESS=0`: a host that compresses by itself needs no `.br`/`.gz` copies (docs/deploying.md). */
  noCodings?: true;
  /** What serves it in `npm run check:deploy`, or why nothing can here. */
  servedBy: string;
  /** False where the host's software cannot run on this machine: its cells are the host's documented behaviour. */
  runs: boolean;
  /** The checks of the shared conformance suite (../shared/conformance) it passes: the others must fail. */
  conformance: 'all' | readonly string[];
}

/**
 * The shared suite's checks a static build passes on a host that applies our headers: the rest
 * need the handler (other casings, the query form, 400s, the creators list, `/api/avatar?u=`).
 */
const STATIC_CONFORMANCE = [
  'envelope and meta on a profile', 'user object has exactly the specified fields', 'minimal profile gets every default (bob)',
  'suspended profile is HTTP 200 with ban info (carol)', 'time zones, stats override and Unicode (dave, erin_99)',
  '@ is not accepted in the path', 'unknown username is a JSON 404', 'open CORS on every response',
  'edge cache headers: 30 s fresh, 60 s revalidation', 'authorization headers are ignored', 'HEAD, preflight and other methods',
  'no private data in any response',
];
/** nginx alone also routes the query form with a lowercase name, and answers a missing one (nginx-static.conf). */
const NGINX_STATIC_CONFORMANCE = [...STATIC_CONFORMANCE, 'missing or empty username is a JSON 400', 'ETag and conditional GET'];

/**
 * What passes under `netlify dev`, whose own server sends `application/octet-stream` and
 * `max-age=0` over the `_headers` rules (netlify/cli#990) that Netlify itself applies.
 */
const NETLIFY_DEV_CONFORMANCE = [
  '@ is not accepted in the path', 'open CORS on every response', 'authorization headers are ignored', 'ETag and conditional GET',
  'no private data in any response',
];

export const TARGETS: readonly Target[] = [
  { id: 'node', heading: 'Node server', build: 'node', servedBy: '`npm run serve`', runs: true, conformance: 'all' },
  { id: 'nginx-proxy', heading: 'Node server behind nginx', build: 'node', servedBy: 'nginx with `scripts/deploy/nginx.conf` in front of `npm run serve`', runs: true, conformance: 'all' },
  { id: 'cloudflare', heading: 'Cloudflare Workers', build: 'cloudflare', servedBy: '`wrangler dev` (workerd)', runs: true, conformance: 'all' },
  { id: 'nginx-static', heading: 'nginx alone', build: 'static', servedBy: 'nginx with `scripts/deploy/nginx-static.conf`', runs: true, conformance: NGINX_STATIC_CONFORMANCE },
  { id: 'netlify', heading: 'Netlify', build: 'static', noCodings: true, servedBy: '`netlify dev --offline` (netlify-cli)', runs: true, conformance: NETLIFY_DEV_CONFORMANCE },
  { id: 'github-pages', heading: 'GitHub Pages', build: 'static', noCodings: true, servedBy: 'not run here (GitHub\'s servers only): its layout rules are tested', runs: false, conformance: [] },
];

/** What a probe reads: one request to the target, with headers a browser may not set (Host). */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export type Get = (address: string, init?: { method?: string; headers?: Record<string, string>; body?: string }) => Promise<Answer>;

/** A probe returns what is wrong, or undefined when the row's behaviour holds. */
export type Probe = (get: Get, ctx: { base: string; customDomain: string }) => Promise<string | undefined>;

export interface Row {
  /** The behaviour, as the table's first column says it. */
  feature: string;
  /** One cell per target: starting `yes` or `no` where `check:deploy` holds it to its probe. */
  cells: Record<TargetId, string>;
  probe: Probe;
}

const POLICY_CACHE = 'public, max-age=30, s-maxage=30, stale-while-revalidate=60';

/** The first failed condition of a list, for a probe's answer. */
const first = (...checks: [boolean, string][]) => checks.find(([ok]) => !ok)?.[1];

const jsonOf = (a: Answer): { success?: boolean; data?: Record<string, unknown> & { username?: string }; error?: { code?: string } } | undefined => {
  try { return JSON.parse(a.text); } catch { return undefined; }
};
const isJson = (a: Answer) => /^application\/json/.test(String(a.headers['content-type'] ?? ''));

const lookup: Probe = async (get) => {
  const a = await get('/api/v1/users/alice', { headers: { origin: 'https://elsewhere.example' } });
  return first(
    [a.status === 200, `status ${a.status}`],
    [isJson(a), `content-type ${a.headers['content-type']}`],
    [jsonOf(a)?.data?.username === 'alice', 'not alice\'s answer'],
    [a.headers['access-control-allow-origin'] === '*', `CORS ${a.headers['access-control-allow-origin']}`],
    [a.headers['cache-control'] === POLICY_CACHE, `cache-control ${a.headers['cache-control']}`],
    [a.headers['x-content-type-options'] === 'nosniff', 'no nosniff'],
  );
};

const otherForms: Probe = async (get) => {
  for (const address of ['/api/v1/users/ALICE', '/api/v1/users?username=alice']) {
    const a = await get(address);
    const wrong = first([a.status === 200, `${address}: status ${a.status}`], [isJson(a) && jsonOf(a)?.data?.username === 'alice', `${address}: not alice's JSON`]);
    if (wrong) return wrong;
  }
  return undefined;
};

const unknownUser: Probe = async (get) => {
  const a = await get('/api/v1/users/nobody');
  return first([a.status === 404, `status ${a.status}`], [isJson(a) && jsonOf(a)?.success === false, 'not a JSON error'], [a.headers['access-control-allow-origin'] === '*', 'no CORS']);
};

const missingName: Probe = async (get) => {
  const empty = await get('/api/v1/users?username=');
  return first([empty.status === 400 && isJson(empty) && jsonOf(empty)?.success === false, `?username= : status ${empty.status}`]);
};

const methods: Probe = async (get) => {
  const post = await get('/api/v1/users/alice', { method: 'POST', body: '{}' });
  const pre = await get('/api/v1/users/alice', { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
  return first(
    [post.status === 405 && isJson(post) && /GET/.test(String(post.headers.allow ?? '')), `POST: status ${post.status}, Allow ${post.headers.allow}`],
    [(pre.status === 204 || pre.status === 200) && /authorization/i.test(String(pre.headers['access-control-allow-headers'] ?? '')), `preflight: status ${pre.status}`],
  );
};

const creatorsFirstPage: Probe = async (get) => {
  const a = await get('/service-api/v1/creators');
  return first([a.status === 200, `status ${a.status}`], [isJson(a) && Array.isArray(jsonOf(a)?.data), 'not the list']);
};

const creatorsQuery: Probe = async (get) => {
  const a = await get('/service-api/v1/creators?limit=1');
  const b = jsonOf(a) as { data?: unknown[]; links?: { next?: string | null } } | undefined;
  return first([a.status === 200, `status ${a.status}`], [b?.data?.length === 1, `${b?.data?.length} creators for limit=1`], [typeof b?.links?.next === 'string', 'no links.next']);
};

const images: Probe = async (get, { base }) => {
  const user = jsonOf(await get('/api/v1/users/alice'))?.data as { avatarUrl?: string; avatarDecoration?: { url?: string } } | undefined;
  const bob = jsonOf(await get('/api/v1/users/bob'))?.data as { avatarUrl?: string } | undefined;
  for (const url of [user?.avatarUrl, user?.avatarDecoration?.url, bob?.avatarUrl]) {
    if (!url?.startsWith(base)) return `image address ${url} is not on the site`;
    const a = await get(url.slice(base.length));
    if (a.status !== 200 || !/^image\//.test(String(a.headers['content-type']))) return `${url}: status ${a.status}, ${a.headers['content-type']}`;
  }
  return undefined;
};

const pages: Probe = async (get) => {
  const kinds: [string, RegExp][] = [['/p/alice', /^text\/html/], ['/', /^text\/html/], ['/browse/1', /^text\/html/], ['/docs', /^text\/html/], ['/openapi.json', /^application\/json/], ['/sitemap.xml', /xml/]];
  for (const [address, type] of kinds) {
    const a = await get(address);
    if (a.status !== 200 || !type.test(String(a.headers['content-type']))) return `${address}: status ${a.status}, ${a.headers['content-type']}`;
  }
  const page = await get('/p/alice');
  return first(
    [page.text.includes('Alice Liddell'), 'not alice\'s page'],
    [/default-src 'none'/.test(String(page.headers['content-security-policy'] ?? '')), 'no CSP on the page'],
    [page.headers['cache-control'] === POLICY_CACHE, `page cache-control ${page.headers['cache-control']}`],
  );
};

const unknownPage: Probe = async (get) => {
  const a = await get('/p/nobody');
  return first([a.status === 404, `status ${a.status}`], [/^text\/html/.test(String(a.headers['content-type'])), `content-type ${a.headers['content-type']}`]);
};

const pageCasing: Probe = async (get) => {
  const a = await get('/p/ALICE');
  return first([a.status === 308 || a.status === 301, `status ${a.status}`], [/\/p\/alice$/.test(String(a.headers.location ?? '')), `location ${a.headers.location}`]);
};

/** The home page's lookup box as a browser without script sends it (src/api/handler.ts `lookupAnswer`). */
const lookupBox: Probe = async (get) => {
  const found = await get('/lookup?u=%20%40ALICE');
  const missing = await get('/lookup?u=nobody');
  return first(
    [found.status === 302 || found.status === 303, `/lookup?u= @ALICE: status ${found.status}`],
    [String(found.headers.location ?? '').endsWith('/p/alice'), `location ${found.headers.location}`],
    [missing.status === 404, `/lookup?u=nobody: status ${missing.status}`],
  );
};

/**
 * The lookup box's script on a host without the handler (public/lookup.js): the home page loads
 * it, the host serves it as JavaScript, and the pages' CSP, where the host sends one, allows it.
 * Whether it sends the form to `/p/<name>` is tested in chromium (test/e2e/lookup-static.test.ts).
 */
const lookupScript: Probe = async (get) => {
  const home = await get('/');
  const script = await get('/lookup.js');
  const csp = String(home.headers['content-security-policy'] ?? '');
  return first(
    [/<script src="\/lookup\.js"/.test(home.text), 'the home page loads no /lookup.js'],
    [script.status === 200 && /javascript/.test(String(script.headers['content-type'])), `/lookup.js: status ${script.status}, ${script.headers['content-type']}`],
    [csp === '' || /script-src 'self'/.test(csp), `the CSP forbids it: ${csp}`],
  );
};

const customDomain: Probe = async (get, { customDomain }) => {
  const own = await get('/', { headers: { host: customDomain } });
  const main = await get('/');
  const profilePage = (a: Answer) => a.text.includes('"ProfilePage"');
  return first([own.status === 200 && profilePage(own) && own.text.includes('Alice Liddell'), `/ on ${customDomain}: status ${own.status}, not alice's page`], [main.status === 200 && !profilePage(main), 'the main site\'s / is a profile page']);
};

const conditional: Probe = async (get) => {
  const a = await get('/api/v1/users/alice');
  const etag = a.headers.etag;
  if (!etag) return 'no ETag';
  const again = await get('/api/v1/users/alice', { headers: { 'if-none-match': etag } });
  return first([again.status === 304, `If-None-Match: status ${again.status}`]);
};

/** `address` is gzipped for a client that asks, plain for one that does not, `Vary: Accept-Encoding` on both. */
const compressed = (address: string): Probe => async (get) => {
  const plain = await get(address);
  const gz = await get(address, { headers: { 'accept-encoding': 'gzip' } });
  return first(
    [gz.headers['content-encoding'] === 'gzip', `${address}: content-encoding ${gz.headers['content-encoding']}`],
    [/accept-encoding/i.test(String(gz.headers.vary ?? '')) && /accept-encoding/i.test(String(plain.headers.vary ?? '')), `${address}: Vary ${gz.headers.vary} / ${plain.headers.vary}`],
    [plain.headers['content-encoding'] === undefined, `${address}: encoded for a client that did not ask`],
  );
};

export const ROWS: readonly Row[] = [
  {
    feature: '`/api/v1/users/<name>` in lowercase: JSON, CORS, the cache policy',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes (Worker, from the file)', 'nginx-static': 'yes', netlify: 'no under `netlify dev`, whose server sends `application/octet-stream`, `max-age=0`; Netlify applies `_headers` (rules tested)', 'github-pages': 'no: `application/octet-stream`, `max-age=600`' },
    probe: lookup,
  },
  {
    feature: 'other casings, the query form `?username=`',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes (Worker)', 'nginx-static': 'no: only `?username=` with a lowercase name', netlify: 'no: only `?username=` with the exact name (`_redirects`)', 'github-pages': 'no: the host\'s 404' },
    probe: otherForms,
  },
  {
    feature: 'an unknown user: JSON `404`',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes', 'nginx-static': 'yes (a JSON file)', netlify: 'yes (`_redirects` to a JSON file)', 'github-pages': 'no: `404.html`' },
    probe: unknownUser,
  },
  {
    feature: 'a missing or empty username: JSON `400`',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes', 'nginx-static': 'yes (a JSON file)', netlify: 'no', 'github-pages': 'no' },
    probe: missingName,
  },
  {
    feature: 'a write: JSON `405` with `Allow`; the `OPTIONS` preflight',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes', 'nginx-static': 'yes', netlify: 'no', 'github-pages': 'no' },
    probe: methods,
  },
  {
    feature: '`ETag` and `304` for `If-None-Match`',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes', 'nginx-static': 'yes (nginx\'s own ETag)', netlify: 'yes', 'github-pages': 'yes' },
    probe: conditional,
  },
  {
    feature: '`/service-api/v1/creators` without a query',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes', 'nginx-static': 'no: left out of static builds (below)', netlify: 'no: left out', 'github-pages': 'no: left out' },
    probe: creatorsFirstPage,
  },
  {
    feature: 'the creators list with a query, `links.next`',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes (Worker)', 'nginx-static': 'no', netlify: 'no', 'github-pages': 'no' },
    probe: creatorsQuery,
  },
  {
    feature: '`avatarUrl` and the decoration `url` serve their images',
    cells: { node: 'yes (`/api/avatar?u=`)', 'nginx-proxy': 'yes', cloudflare: 'yes (Worker)', 'nginx-static': 'yes (`/media/` files)', netlify: 'yes (`/media/` files)', 'github-pages': 'yes (`/media/` files)' },
    probe: images,
  },
  {
    feature: '`/p/<name>`, `/`, `/browse/<n>`, `/docs`, `/openapi.json`, sitemaps, with the pages\' CSP',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes', 'nginx-static': 'yes', netlify: 'no under `netlify dev`: `max-age=0` (as above)', 'github-pages': 'yes, without CSP or the cache policy' },
    probe: pages,
  },
  {
    feature: 'an unknown page: the HTML `404`',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes', 'nginx-static': 'yes', netlify: 'yes', 'github-pages': 'yes (`404.html`)' },
    probe: unknownPage,
  },
  {
    feature: '`/p/ALICE` → `308` to `/p/alice`',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes (Worker)', 'nginx-static': 'no: the 404', netlify: 'no', 'github-pages': 'no' },
    probe: pageCasing,
  },
  {
    feature: 'the lookup box without script, `/lookup?u=<name>`: `302` to the page, or the `404` page',
    cells: { node: 'yes', 'nginx-proxy': 'yes', cloudflare: 'yes (Worker)', 'nginx-static': 'no: the lookup page, which names the address', netlify: 'no: the lookup page', 'github-pages': 'no: the lookup page' },
    probe: lookupBox,
  },
  {
    feature: 'the lookup box with script: `/lookup.js` opens `/p/<name>` itself',
    cells: { node: 'no: not needed, the handler answers', 'nginx-proxy': 'no: not needed', cloudflare: 'no: not needed', 'nginx-static': 'yes', netlify: 'yes', 'github-pages': 'yes' },
    probe: lookupScript,
  },
  {
    feature: 'a profile\'s `customDomain` at `/`',
    cells: { node: 'yes', 'nginx-proxy': 'yes (the host is in the cache key)', cloudflare: 'yes', 'nginx-static': 'no', netlify: 'no', 'github-pages': 'no' },
    probe: customDomain,
  },
  {
    feature: 'API answers gzipped on request, with `Vary: Accept-Encoding`',
    cells: { node: 'yes (precompressed files)', 'nginx-proxy': 'yes (a copy per coding)', cloudflare: 'yes (the Worker names the coding, workerd encodes)', 'nginx-static': 'yes (`gzip_static`)', netlify: 'no under `netlify dev`; Netlify compresses itself', 'github-pages': 'yes (GitHub\'s own)' },
    probe: compressed('/api/v1/users/alice'),
  },
  {
    feature: 'pages gzipped on request, with `Vary: Accept-Encoding`',
    cells: { node: 'yes (precompressed files)', 'nginx-proxy': 'yes (a copy per coding)', cloudflare: 'yes (the Worker, first for `/p/*`, names the coding; workerd encodes)', 'nginx-static': 'yes (`gzip_static`)', netlify: 'no under `netlify dev`; Netlify compresses itself', 'github-pages': 'yes (GitHub\'s own)' },
    probe: compressed('/p/alice'),
  },
];

/** The table docs/deploying.md holds between its `deploy-matrix` markers. */
export function matrixTable(): string {
  const head = `| | ${TARGETS.map((t) => t.heading).join(' | ')} |`;
  const rule = `|---|${TARGETS.map(() => '---').join('|')}|`;
  const served = `| served by | ${TARGETS.map((t) => t.servedBy).join(' | ')} |`;
  const build = `| \`DEPLOY_TARGET\` | ${TARGETS.map((t) => `\`${t.build}\`${t.noCodings ? ', `PRECOMPRESS=0`' : ''}`).join(' | ')} |`;
  const rows = ROWS.map((r) => `| ${r.feature} | ${TARGETS.map((t) => r.cells[t.id]).join(' | ')} |`);
  return [head, rule, build, served, ...rows].join('\n');
}

export const TABLE_START = '<!-- deploy-matrix: made by `npm run check:deploy -- --write-table` from scripts/deploy/deploy-matrix.ts -->';
export const TABLE_END = '<!-- /deploy-matrix -->';

/** What a cell claims: `yes` and `no` are held to the probe; anything else is not checked. */
export const claimOf = (cell: string): boolean | undefined => (/^yes\b/.test(cell) ? true : /^no\b/.test(cell) ? false : undefined);

/** A `Get` for `base` over node:http, so a probe may send its own `Host`; redirects are not followed. */
export function getter(base: string): Get {
  const origin = new URL(base);
  return (address, init = {}) => new Promise((resolve, reject) => {
    const req = http.request({
      host: origin.hostname, port: origin.port, path: address, method: init.method ?? 'GET',
      headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
      timeout: 15_000,
    }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const body = Buffer.concat(parts);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${address}: no answer in 15 s`)));
    req.on('error', reject);
    req.end(init.body);
  });
}
