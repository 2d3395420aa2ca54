// `ReleaseFiles` on Cloudflare: a file of dist/client read through the Worker's `ASSETS` binding.
//
// The binding answers like the public asset server, `html_handling` and `_headers` included
// (wrangler.jsonc), except that `run_worker_first` does not apply to it, so the Worker can read the
// files it refuses to the public (`_lookup/*`). Under `auto-trailing-slash` a request for
// `p/alice.html` is a 307 to `/p/alice` (which `fetch` would follow with a second request), so an
// `.html` file is asked for by the address it is served at.
import type { ReleaseFiles } from '../api/release-files.ts';

/** The part of Cloudflare's `Fetcher` that the `ASSETS` binding offers and we use. */
export interface AssetsBinding {
  fetch(request: Request): Promise<Response>;
}

/** Any origin will do: the binding reads only the path. */
const ORIGIN = 'https://assets.invalid';

/** The address the asset server serves `file` at: `p/alice.html` at `/p/alice`, `index.html` at `/`. */
export function assetAddress(file: string): string {
  const encoded = file.split('/').map(encodeURIComponent).join('/');
  if (encoded === 'index.html' || encoded.endsWith('/index.html')) return `/${encoded.slice(0, -'index.html'.length)}`;
  return `/${encoded.replace(/\.html$/, '')}`;
}

export function assetFiles(assets: AssetsBinding): ReleaseFiles {
  return {
    // Workers compress a body by its Content-Encoding (`encodeBody: "automatic"`, the default).
    runtimeEncodes: true,
    async read(file) {
      // No `..`, no empty segment, no leading slash: a path of the folder or nothing.
      if (file === '' || file.split('/').some((s) => s === '' || s === '.' || s === '..')) return undefined;
      const response = await assets.fetch(new Request(ORIGIN + assetAddress(file), { redirect: 'manual' }));
      if (response.status === 200) return new Uint8Array(await response.arrayBuffer());
      await response.body?.cancel();
      // 404: no such file. A redirect means `file` is served under another address (`dir/index.html`
      // asked as `dir.html`...), which is not this file either.
      if (response.status === 404 || (response.status >= 300 && response.status < 400)) return undefined;
      throw new Error(`ASSETS binding: ${response.status} for ${file}`);
    },
  };
}
