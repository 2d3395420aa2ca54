// Usage: HOST=127.0.0.1 PORT=4399 node scripts/bench/serve-bare.ts <dist-dir> [--contract-headers]
//
// The benchmark baseline for lookups: a bare node:http server holding every user's pre-rendered
// JSON in memory, answering `/api/v1/users/<name>`, `?username=` and a JSON 404, with no headers
// beyond Content-Type. `npm run bench` measures our server against it in the same run.
// It sends the bodies the contract asks for, made the plain way: the file as it is for the path,
// the file's `data` in a fresh envelope (`meta` of this request) for the query form, and a 404
// naming the user with a fresh `meta`; a baseline that sent the file for the query form and one
// fixed 404 body would measure less work than the contract's, not a faster server.
// A path lookup asking for brotli gets the file's brotli bytes (inside the file in a `node` release,
// its `.br` sibling in a `static` one), as ours sends them; every other answer the file itself.
// `--contract-headers` sends what the contract asks of every answer too (CORS, Cache-Control, the
// policy's other headers, an ETag): the same bytes on the wire as ours, so the difference left is
// the cost of our code, not of the contract.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { dataOf } from '../../src/api/handler.ts';
import { BROTLI, JSON_HEADERS, compressedBaseOf, encodedEtag } from '../../src/http/headers.ts';
import { etagOf } from '../../src/http/response.ts';
import { layeredFiles, locator } from '../../src/release/layers.ts';
import { readReleaseInfo, releasesDir, servedRelease } from '../../src/release/releases.ts';
import { identityOf, isPacked, partOf } from '../../src/release/coded-file.ts';

const [dist, flag] = process.argv.slice(2);
const contract = flag === '--contract-headers';
if (!dist || (flag !== undefined && !contract)) {
  console.error('Usage: node scripts/bench/serve-bare.ts <dist-dir> [--contract-headers]');
  process.exit(2);
}
interface User { body: Buffer; head: Buffer; etag: string; dataEtag: string; br: Buffer | undefined; brEtag: string }
const users = new Map<string, User>();
// Every user file of the served release, those a layered release reads from its base included
// (src/release/layers.ts): after a one-edit rebuild its own folder holds one file.
const served = servedRelease(dist);
const layers = served ? readReleaseInfo(dist, served)?.layers : undefined;
const client = path.join(dist, 'client');
const at = locator(releasesDir(dist), client, layers);
const USERS_DIR = 'api/v1/users/';
for (const file of layeredFiles(releasesDir(dist), client, layers, USERS_DIR)) {
  // A compressed sibling (src/build/files/compress.ts) is read with its file.
  if (compressedBaseOf(file) !== undefined) continue;
  const name = file.slice(USERS_DIR.length);
  // A `node` release keeps the brotli bytes inside the file (src/release/coded-file.ts), a `static` one beside it.
  const stored = fs.readFileSync(path.join(at(file)!, file));
  const body = Buffer.from(identityOf(stored));
  const data = dataOf(body);
  // `{"success":true,"data":…`: the answer of the query form up to its `meta`.
  const head = body.subarray(0, data.byteOffset - body.byteOffset + data.length);
  const packedBr = partOf(stored, BROTLI);
  const br = packedBr ? Buffer.from(packedBr) : isPacked(stored) ? undefined : readOptional(path.join(at(`${file}.br`)!, `${file}.br`));
  const etag = contract ? etagOf(body) : '';
  users.set(name, { body, head, etag, dataEtag: contract ? `W/${etagOf(data)}` : '', br, brEtag: contract && br ? encodedEtag(etag, BROTLI) : '' });
}

function readOptional(file: string): Buffer | undefined {
  try { return fs.readFileSync(file); } catch { return undefined; }
}
const PLAIN = { 'content-type': 'application/json; charset=utf-8' };
const meta = (t0: number) => `"meta":{"timestamp":"${new Date().toISOString()}","version":"v1","executionTimeMs":${Math.round((performance.now() - t0) * 1000) / 1000}}`;

const server = http.createServer((req, res) => {
  const t0 = performance.now();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const p = q < 0 ? url : url.slice(0, q);
  const byQuery = p === '/api/v1/users';
  const name = byQuery ? new URLSearchParams(url.slice(q + 1)).get('username')?.toLowerCase() : p.slice('/api/v1/users/'.length);
  const user = name ? users.get(name) : undefined;
  // The path's file in brotli when the client asks for it and the build wrote it, as ours sends it:
  // the plain test of the header, not a parse of its q-values.
  const br = user && !byQuery && user.br && req.headers['accept-encoding']?.includes('br') ? user.br : undefined;
  const body = !user
    ? `{"success":false,"error":{"code":"USER_NOT_FOUND","message":${JSON.stringify(`No user is called \`${name}\`.`)}},${meta(t0)}}`
    : byQuery ? Buffer.concat([user.head, Buffer.from(`,${meta(t0)}}`)]) : br ?? user.body;
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const coding = br ? { 'content-encoding': 'br' } : {};
  res.writeHead(user ? 200 : 404, contract
    ? { ...JSON_HEADERS, ...(user && !byQuery && { vary: 'Accept-Encoding' }), ...coding, ...(user && { etag: byQuery ? user.dataEtag : br ? user.brEtag : user.etag }), 'content-length': length }
    : { ...PLAIN, ...coding, 'content-length': length });
  res.end(body);
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  console.log(`Serving ${users.size} bodies on http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`);
});
process.once('SIGTERM', () => process.exit(0));
