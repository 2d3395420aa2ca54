// TEMPORARY STUB, to be deleted when src/api/handler.ts exports the Web-standard `handle` (lead's
// rewrite on main). It only proves the Cloudflare wiring: a request's file by its address through
// `ReleaseFiles`, else a JSON 404. No header policy, no API routes, no redirects.
// When merging: delete this file and point src/edge/worker.ts at `handle` from ./handler.ts.

/** As src/api/release-files.ts on main will declare it. */
export interface ReleaseFiles {
  /** A file of the build's public output folder (dist/client) by its path there, without a leading slash; undefined when there is none. */
  read(file: string): Promise<Uint8Array | undefined>;
}

/** The files a request's path may name, most likely first: `/p/alice` is `p/alice.html`. */
function candidates(pathname: string): string[] {
  const file = decodeURIComponent(pathname).replace(/^\/+/, '');
  if (file === '' || file.endsWith('/')) return [`${file}index.html`];
  return [file, `${file}.html`, `${file}/index.html`];
}

export async function handle(request: Request, files: ReleaseFiles): Promise<Response> {
  const { pathname } = new URL(request.url);
  for (const file of candidates(pathname)) {
    const bytes = await files.read(file);
    if (bytes) {
      const type = file.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8';
      return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': type, 'x-edge-stub': file } });
    }
  }
  const body = { success: false, error: { code: 'NOT_FOUND', message: `edge stub: no file for ${pathname}` } };
  return Response.json(body, { status: 404, headers: { 'x-edge-stub': 'none' } });
}
