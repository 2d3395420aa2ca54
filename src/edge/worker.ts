// The Cloudflare Worker (wrangler.jsonc `main`). The asset server answers every request for a file
// of dist/client itself (with `_headers`); everything else comes here and goes to the one handler,
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

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    // No answer reads a request body: say so at once, so workerd does not wait on it or close
    // the connection under a client still sending it (a POST gets its 405 either way).
    request.body?.cancel().catch(() => {});
    let files = filesOf.get(env.ASSETS);
    if (!files) filesOf.set(env.ASSETS, files = assetFiles(env.ASSETS));
    return handle(request, files);
  },
};
