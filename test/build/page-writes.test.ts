// Profile pages are written by our prerenderer wrapper (src/build/page-writes.ts): the same bytes
// Astro would write, at the address Astro would use, and Astro is left nothing to write for them.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import type { AstroIntegration, AstroPrerenderer } from 'astro';
import { profilePageWrites } from '../../src/build/page-writes.ts';
import { workDir } from '../support/built-server.ts';

const WORK = workDir('page-writes');
afterAll(() => fs.rmSync(WORK, { recursive: true, force: true }));

type Hooks = Required<AstroIntegration['hooks']>;

/** The wrapper around a default prerenderer that streams `body` for every path, as Astro's does. */
async function wrapped(client: string, body: string) {
  const integration = profilePageWrites();
  const hooks = integration.hooks as Hooks;
  await (hooks['astro:config:done'] as (o: unknown) => void | Promise<void>)({ config: { build: { client: pathToFileURL(`${client}/`) } } });
  const app = { resolveStreaming: (): boolean | undefined => undefined };
  const defaults = {
    name: 'astro:default',
    app,
    async setup() {},
    async getStaticPaths() { return []; },
    async render() {
      const chunks = (body.match(/.{1,7}/gs) ?? []).map((c) => new TextEncoder().encode(c));
      const stream = new ReadableStream<Uint8Array>({ pull(controller) { const c = chunks.shift(); if (c) controller.enqueue(c); else controller.close(); } });
      return new Response(stream, { headers: { 'content-type': 'text/html' } });
    },
  } as unknown as AstroPrerenderer & { app: typeof app };
  let prerenderer: AstroPrerenderer | undefined;
  await (hooks['astro:build:start'] as (o: unknown) => void | Promise<void>)({
    setPrerenderer: (p: AstroPrerenderer | ((d: AstroPrerenderer) => AstroPrerenderer)) => { prerenderer = typeof p === 'function' ? p(defaults) : p; },
  });
  await prerenderer!.setup!();
  const render = (pathname: string, route: string) => prerenderer!.render(new Request(`http://localhost${pathname}`), { routeData: { route } as never });
  return { render, app };
}

describe('profile pages written by the build', () => {
  test('a profile page is written whole at <client>/p/<username>.html, and Astro gets no body to write', async () => {
    const client = path.join(WORK, 'a', 'client');
    const body = '<!doctype html><p>Ada — 🌸 &amp; more</p>\n'.repeat(50);
    const { render, app } = await wrapped(client, body);
    // Astro renders `/p/ada-1` at the address of its file (`build.format: 'file'`).
    // Pages render to one string: Astro's streaming choice for this build is turned off.
    expect(app.resolveStreaming()).toBe(false);
    const answer = await render('/p/ada-1.html', '/p/[username]') as Response;
    expect(answer.status).toBe(200);
    expect(answer.body).toBeNull();
    expect(fs.readFileSync(path.join(client, 'p', 'ada-1.html'), 'utf8')).toBe(body);
  });

  test('every other page is left to Astro, body and all', async () => {
    const client = path.join(WORK, 'b', 'client');
    const { render } = await wrapped(client, '<p>index</p>');
    const index = await render('/index.html', '/') as Response;
    expect(await index.text()).toBe('<p>index</p>');
    // A path the username pattern does not allow is Astro's to name and encode.
    const odd = await render('/p/Ada%20B.html', '/p/[username]') as Response;
    expect(await odd.text()).toBe('<p>index</p>');
    expect(fs.existsSync(client)).toBe(false);
  });
});
