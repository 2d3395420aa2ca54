// Preload (`node --import ./scripts/support/fetch-with-host.ts ...`) that sends every `fetch` of the
// process with `Host: $FETCH_HOST`, so a client such as the shared conformance suite
// (../shared/conformance/run.mjs) runs against a custom domain on 127.0.0.1: fetch itself drops a
// Host header it is given. Through node:http; follows redirects unless `redirect: 'manual'`.
import http from 'node:http';

const host = process.env.FETCH_HOST;
if (!host) throw new Error('fetch-with-host: set FETCH_HOST to the host to send, e.g. FETCH_HOST=alice.example.com');

interface Raw { status: number; headers: Headers; bytes: Buffer }
function once(url: URL, init: RequestInit): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const body = init.body == null ? undefined : Buffer.from(String(init.body));
    const headers = { ...(init.headers as Record<string, string> | undefined), host, ...(body && { 'content-length': String(body.length) }) };
    const req = http.request(url, { method: init.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ status: res.statusCode!, headers: h, bytes: Buffer.concat(chunks) });
      });
    });
    req.once('error', reject);
    req.end(body);
  });
}

globalThis.fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
  let target = new URL(String(input instanceof Request ? input.url : input));
  for (let hops = 0; ; hops++) {
    const r = await once(target, init);
    const location = r.headers.get('location');
    if (init.redirect !== 'manual' && [301, 302, 303, 307, 308].includes(r.status) && location && hops < 5) {
      target = new URL(location, target);
      continue;
    }
    return new Response([101, 204, 205, 304].includes(r.status) ? null : new Uint8Array(r.bytes), { status: r.status, headers: r.headers });
  }
};
