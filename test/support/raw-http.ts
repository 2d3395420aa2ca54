// HTTP/1.1 over a plain socket, for tests that must send a request target exactly as written:
// `fetch` and `http.request` normalise `..`, resolve `%2e` and refuse some bytes, so they cannot
// show what the server does with a hostile path. One request per connection (`Connection: close`).
import net from 'node:net';

export interface RawResponse {
  status: number;
  /** Lowercase names; a header sent twice keeps every value. */
  headers: Record<string, string[]>;
  header(name: string): string | undefined;
  body: Buffer;
  text: string;
}

/** Sends `GET <target>` (or another method) with the given headers; `Host` defaults to `localhost`. */
export function rawRequest(base: string, target: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const headers = { host: 'localhost', ...init.headers, connection: 'close' };
  const head = `${init.method ?? 'GET'} ${target} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return rawExchange(base, Buffer.from(head, 'utf8'), init.method === 'HEAD');
}

/** Writes the bytes as they are and parses the one response. */
export function rawExchange(base: string, bytes: Buffer, isHead = false): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    // No encoding is set on the socket, so every chunk is a Buffer. A proxy may keep the
    // connection open despite `Connection: close` (wrangler dev's does, for 5 s): the exchange
    // ends as soon as the response is whole, or when the server closes.
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (isWhole(Buffer.concat(chunks), isHead)) socket.destroy();
    });
    // The server may answer and close before it has read an oversized request: the reset that
    // follows is expected, and the answer already received still counts.
    socket.on('error', () => {});
    socket.on('close', () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks), isHead));
      } catch (e) {
        reject(new Error(`${(e as Error).message} for ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}`));
      }
    });
  });
}

/** Whether `raw` holds a whole response: its head, and the body its head announces (none for HEAD, 1xx, 204 and 304). */
function isWhole(raw: Buffer, isHead: boolean): boolean {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const head = raw.subarray(0, end).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
  if (isHead || status < 200 || status === 204 || status === 304) return true;
  if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
    // Whole once its chunks read to the last one: dechunk throws while they do not.
    try {
      dechunk(raw.subarray(end + 4));
      return true;
    } catch {
      return false;
    }
  }
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  // Without a length the body ends when the server closes.
  return length ? raw.byteLength - (end + 4) >= Number(length[1]) : false;
}

/** The first response in `raw` (a whole exchange's bytes as read). */
export function parseResponse(raw: Buffer, isHead = false): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete response (${raw.length} bytes)`);
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine!);
  if (!m) throw new Error(`not an HTTP response: ${statusLine}`);
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  let body = raw.subarray(end + 4);
  if (isHead) body = Buffer.alloc(0);
  else if (headers['transfer-encoding']?.some((v) => /chunked/i.test(v))) body = dechunk(body);
  return {
    status: Number(m[1]),
    headers,
    header: (name) => headers[name.toLowerCase()]?.join(', '),
    body,
    text: body.toString('utf8'),
  };
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) throw new Error('truncated chunked body');
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(out);
    out.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
