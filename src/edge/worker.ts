// The Cloudflare Worker (wrangler.jsonc `main`). The asset server answers the requests for files of
// dist/client that `run_worker_first` leaves to it (with `_headers`); everything else (the API, the
// pages, `/`, what no file answers) comes here and goes to the one handler,
// which reads the release's files through the ASSETS binding. Astro's own request handling is not
// used at run time: every page is pre-rendered, and the handler answers what is not a file.
import { handle } from '../api/handler.ts';
import { assetFiles, type AssetsBinding } from './asset-files.ts';

interface Env {
  ASSETS: AssetsBinding;
}

/**
 * One `ReleaseFiles` per binding, so what the handler keeps per release (the sorted creators rows)
 * is made once per isolate, not once per request. An isolate runs one version: one release.
 */
const filesOf = new WeakMap<AssetsBinding, ReturnType<typeof assetFiles>>();

/** Bytes of a request body read before the rest is cancelled (no answer reads a body). */
const DRAINED_BYTES = 64 * 1024;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // No answer reads a request body, but a body left unread (or cancelled) makes `wrangler dev`'s
    // proxy lose the connection now and then: a 500 "Network connection lost" for 6 of 150 POSTs
    // here (workers-sdk#5095). Read to its end, up to a bound, it never did (0 of 600).
    if (request.body) await drain(request.body, DRAINED_BYTES);
    let files = filesOf.get(env.ASSETS);
    if (!files) filesOf.set(env.ASSETS, files = assetFiles(env.ASSETS));
    return handle(request, files);
  },
};

/** Reads `body` to its end, or `limit` bytes of it and cancels the rest; a client gone away is no error here. */
async function drain(body: ReadableStream<Uint8Array>, limit: number): Promise<void> {
  const reader = body.getReader();
  try {
    for (let read = 0; read <= limit;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // Nothing to answer a client that is gone; the handler's answer goes nowhere.
  }
}
