// The lookup box on a host with files only: nginx with scripts/deploy/nginx-static.conf on a
// DEPLOY_TARGET=static build, in chromium. /lookup has no handler there, so public/lookup.js sends
// the form to /p/<name> (folded as the handler folds it) under the pages' own CSP, with no console
// error; a name that is no username reaches the lookup page. A Node build loads no script at all.
// A screenshot lands in node_modules/.cache/screens for a person to look at.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEBIAN_MIME_TYPES, NGINX_MISSING, findNginx, startNginx, type RunningNginx } from '../../scripts/support/nginx.ts';
import { buildFixture, sharedBuild, workDir } from '../support/built-server.ts';
import { FIXTURE, ROOT } from '../support/helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENS = path.join(ROOT, 'node_modules', '.cache', 'screens');
const nginxBin = findNginx();
const missing = !fs.existsSync(CHROMIUM) ? `chromium is not installed (${CHROMIUM}; apt-get install chromium)`
  : !nginxBin ? NGINX_MISSING : !fs.existsSync(DEBIAN_MIME_TYPES) ? `${DEBIAN_MIME_TYPES} is missing` : undefined;
if (missing) console.warn(`lookup-static.test.ts: skipped: ${missing}.`);

const work = workDir('lookup-static');
let nginx: RunningNginx | undefined;
let browser: Browser | undefined;

/** A page that records console errors, failed requests and CSP violations. */
async function watchedPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 360, height: 740 } });
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`error: ${e.message}`));
  // A load the page itself cancelled by navigating on (the favicon of a page left at once, on a busy
  // machine) is not a failure of the site: every other failed request is.
  page.on('requestfailed', (r) => { if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`); });
  return { page, problems };
}

/** Types `name` into the home page's lookup box and submits it; resolves with the page it lands on. */
async function lookUp(page: Page, name: string): Promise<URL> {
  await page.goto(`${nginx!.base}/`);
  await page.fill('#lookup-name', name);
  await Promise.all([page.waitForURL((u) => u.pathname !== '/'), page.click('form.lookup button')]);
  return new URL(page.url());
}

describe.skipIf(missing !== undefined)('the lookup box on nginx alone, in chromium', () => {
  beforeAll(async () => {
    fs.rmSync(work, { recursive: true, force: true });
    const dist = path.join(work, 'dist');
    const built = buildFixture(FIXTURE, dist, { DEPLOY_TARGET: 'static' });
    expect(built.status, built.stderr).toBe(0);
    nginx = await startNginx(nginxBin!, 'nginx-static.conf', { dir: path.join(work, 'nginx'), adjust: { root: path.join(dist, 'client'), include: DEBIAN_MIME_TYPES } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
    fs.mkdirSync(SCREENS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await nginx?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('a name, typed as people type it, opens its page; an unknown one the 404 page', async () => {
    const { page, problems } = await watchedPage();
    const found = await lookUp(page, '  @ALICE ');
    expect(found.pathname).toBe('/p/alice');
    expect(await page.locator('h1').first().textContent()).toContain('Alice');
    await page.goto(`${nginx!.base}/`);
    await page.fill('#lookup-name', 'Bob');
    await page.screenshot({ path: path.join(SCREENS, 'lookup-static-360.png'), fullPage: true });
    const unknown = await lookUp(page, 'nobody');
    expect(unknown.pathname).toBe('/p/nobody');
    expect(await page.textContent('h1')).toBe('Nothing here');
    // Every profile, a page at a time, on the static host too.
    await page.goto(`${nginx!.base}/browse/1`);
    expect(await page.locator('ul.browse a').count()).toBe(7);
    await page.screenshot({ path: path.join(SCREENS, 'browse-static-360.png'), fullPage: true });
    // The 404 of the unknown page is the only failed load there is.
    expect(problems.filter((p) => !/404/.test(p))).toEqual([]);
    await page.close();
  });

  test('a name that is no username reaches the lookup page, which says so with the name back in the box, as the handler does', async () => {
    const { page, problems } = await watchedPage();
    const landed = await lookUp(page, 'not a name');
    expect(landed.pathname).toBe('/lookup');
    expect(landed.searchParams.get('u')).toBe('not a name');
    expect(await page.textContent('h1')).toBe('Find a profile');
    await page.waitForFunction(() => document.querySelector('.lookup-problem')?.textContent !== '');
    expect(await page.textContent('.lookup-problem')).toBe('“not a name” is not a username.');
    expect(await page.inputValue('#lookup-name')).toBe('not a name');
    // A username in the address (typed by hand) goes to its page, as the handler's redirect.
    await Promise.all([page.waitForURL((u) => u.pathname === '/p/alice'), page.goto(`${nginx!.base}/lookup?u=%20Alice`)]);
    expect(problems).toEqual([]);
    await page.close();
  });

  test('the script is a file of the site that the pages\' CSP allows; a Node build loads none', async () => {
    const home = await fetch(`${nginx!.base}/`);
    expect(home.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await home.text();
    expect([...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]).filter((s) => !s.includes('application/ld+json'))).toEqual(['<script src="/lookup.js" defer>']);
    const script = await fetch(`${nginx!.base}/lookup.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    const node = await (await fetch(`${sharedBuild().base}/`)).text();
    expect(node).toContain('class="lookup"');
    expect(node).not.toContain('/lookup.js');
  });
});
