// Usage: node scripts/bench/socket-attacks.ts <dist-dir> [pipeline|slow-headers]... [--connections N] [--requests N] [--seconds N]
//
// The socket attacks of issue 29 against our server (`npm run serve`'s script and flags), with the
// server's memory and a normal client's latency measured while they run:
// - pipeline: N connections each pipeline `--requests` `GET /openapi.json` and never read;
// - slow-headers: N connections (MAX_CONNECTIONS=N) send their headers one byte a second.
// The normal client asks `/api/v1/users/alice` on a new connection every 100 ms. Prints one line
// per attack: RSS before, at its peak and after the attackers left, and the client's latencies.
// docs/reliability.md quotes these figures.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { serve } from '../support/serve-build.ts';

const args = process.argv.slice(2);
const dist = args[0];
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at < 0 ? fallback : Number(args[at + 1]);
};
const attacks = args.filter((a) => a === 'pipeline' || a === 'slow-headers');
if (!dist || !fs.existsSync(dist)) {
  console.error('Usage: node scripts/bench/socket-attacks.ts <dist-dir> [pipeline|slow-headers]... [--connections N] [--requests N] [--seconds N]');
  process.exit(2);
}
if (attacks.length === 0) attacks.push('pipeline', 'slow-headers');
const seconds = option('--seconds', 12);

/** The resident memory of a process, in MB (Linux). */
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** One GET on a new connection: milliseconds to the whole answer, or Infinity when it failed or took over 10 s. */
function timedGet(base: string, target: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.get(`${base}${target}`, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode === 200 ? performance.now() - started : Infinity));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(Infinity));
  });
}

/** Asks every 100 ms until `stop` resolves; the latencies (failures as Infinity), and when the first answer came (ms from the start). */
async function normalClient(base: string, stop: Promise<void>): Promise<{ times: number[]; firstAnswer: number }> {
  const started = performance.now();
  const times: number[] = [];
  let firstAnswer = Infinity;
  let done = false;
  void stop.then(() => { done = true; });
  while (!done) {
    const t = await timedGet(base, '/api/v1/users/alice');
    if (Number.isFinite(t) && !Number.isFinite(firstAnswer)) firstAnswer = performance.now() - started;
    times.push(t);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { times, firstAnswer };
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))]!;
};
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : 'failed');

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', () => {});
  });
}

/** Runs `attack` for `seconds` while sampling the server's RSS and a normal client's latency. */
/** `attack` starts the attack and returns its end, which says when the server cut each attacker (ms from the start), if it did. */
async function measure(name: string, env: Record<string, string>, attack: (port: number) => Promise<() => number[]>) {
  const server = await serve({ env: { DIST_DIR: dist!, ...env } });
  const pid = server.child.pid!;
  const port = Number(new URL(server.base).port);
  // Warm: the file cache and the code paths, so the attack's growth is the attack's.
  for (let i = 0; i < 50; i++) await timedGet(server.base, '/openapi.json');
  await timedGet(server.base, '/api/v1/users/alice');
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)); }, 50);
  const end = await attack(port);
  let stop!: () => void;
  const stopped = new Promise<void>((r) => { stop = r; });
  const client = normalClient(server.base, stopped);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  stop();
  const { times, firstAnswer } = await client;
  const cuts = end();
  await new Promise((r) => setTimeout(r, 2000));
  clearInterval(sampler);
  const after = rssMb(pid);
  await server.stop();
  const failed = times.filter((t) => !Number.isFinite(t)).length;
  console.log(`${name}: RSS ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB at peak (+${(peak - before).toFixed(0)} MB), ${after.toFixed(0)} MB after; `
    + `normal client: ${times.length} requests, median ${ms(percentile(times, 0.5))}, p99 ${ms(percentile(times, 0.99))}, max ${ms(Math.max(...times))}, ${failed} failed, first answered after ${ms(firstAnswer)}`
    + (cuts.length ? `; attackers cut by the server: ${cuts.length}, after ${ms(Math.min(...cuts))} to ${ms(Math.max(...cuts))}` : ''));
}

for (const attack of attacks) {
  if (attack === 'pipeline') {
    const connections = option('--connections', 48);
    const requests = option('--requests', 5000);
    await measure(`pipeline ${connections}×${requests} GET /openapi.json, unread`, {}, async (port) => {
      const flood = Buffer.from('GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(requests));
      const sockets = await Promise.all(Array.from({ length: connections }, () => connect(port)));
      for (const s of sockets) {
        s.pause();
        s.write(flood);
      }
      return () => { for (const s of sockets) s.destroy(); return []; };
    });
  } else {
    const connections = option('--connections', 100);
    // The attackers take every slot: MAX_CONNECTIONS is their number.
    await measure(`slow headers ${connections} sockets at 1 byte/s, MAX_CONNECTIONS=${connections}`, { MAX_CONNECTIONS: String(connections) }, async (port) => {
      const head = 'GET /api/v1/users/alice HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200);
      const started = performance.now();
      const sockets = await Promise.all(Array.from({ length: connections }, () => connect(port)));
      const cuts: number[] = [];
      for (const s of sockets) {
        s.resume();
        s.once('close', () => { if (!stopping) cuts.push(performance.now() - started); });
      }
      let at = 0;
      let stopping = false;
      const timer = setInterval(() => {
        for (const s of sockets) if (s.writable) s.write(head[at % head.length]!);
        at++;
      }, 1000);
      return () => { stopping = true; clearInterval(timer); for (const s of sockets) s.destroy(); return cuts; };
    });
  }
}
