// Usage: HOST=127.0.0.1 PORT=4399 node scripts/bench/serve-bare.ts <dist-dir> [--contract-headers]
//
// The benchmark baseline for lookups: a bare node:http server holding every user's pre-rendered
// JSON in memory, answering `/api/v1/users/<name>`, `?username=` and a JSON 404, with no headers
// beyond Content-Type. `npm run bench` measures our server against it in the same run.
// `--contract-headers` sends what the contract asks of every answer too (CORS, Cache-Control, the
// policy's other headers, an ETag): the same bytes on the wire as ours, so the difference left is
// the cost of our code, not of the contract.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { JSON_HEADERS } from '../../src/http/headers.ts';
import { etagOf } from '../../src/http/response.ts';

const [dist, flag] = process.argv.slice(2);
const contract = flag === '--contract-headers';
if (!dist || (flag !== undefined && !contract)) {
  console.error('Usage: node scripts/bench/serve-bare.ts <dist-dir> [--contract-headers]');
  process.exit(2);
}
const dir = path.join(dist, 'client', 'api', 'v1', 'users');
const bodies = new Map<string, Buffer>();
for (const name of fs.readdirSync(dir)) bodies.set(name, fs.readFileSync(path.join(dir, name)));
const NOT_FOUND = Buffer.from('{"success":false,"error":{"code":"USER_NOT_FOUND","message":"No such user."}}');
const etags = new Map(contract ? [...bodies].map(([name, body]) => [name, etagOf(body)]) : []);
const PLAIN = { 'content-type': 'application/json; charset=utf-8' };

const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const p = q < 0 ? url : url.slice(0, q);
  const name = p === '/api/v1/users' ? new URLSearchParams(url.slice(q + 1)).get('username')?.toLowerCase() : p.slice('/api/v1/users/'.length);
  const body = name ? bodies.get(name) : undefined;
  const length = (body ?? NOT_FOUND).length;
  res.writeHead(body ? 200 : 404, contract
    ? { ...JSON_HEADERS, ...(body && { etag: etags.get(name!)! }), 'content-length': length }
    : { ...PLAIN, 'content-length': length });
  res.end(body ?? NOT_FOUND);
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  console.log(`Serving ${bodies.size} bodies on http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`);
});
process.once('SIGTERM', () => process.exit(0));
