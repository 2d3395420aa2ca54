// In a real browser (Debian's chromium via playwright-core): another origin calls both profile
// endpoints, with and without Authorization; profile pages load at phone and desktop widths with
// every image shown, no console error, no failed request and no sideways scrolling. Screenshots
// land in node_modules/.cache/screens for a person to look at.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sharedBuild } from '../support/built-server.ts';
import { ROOT } from '../support/helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENS = path.join(ROOT, 'node_modules', '.cache', 'screens');

const service = sharedBuild();
let browser: Browser;
let elsewhere: http.Server;
let elsewhereBase = '';

// Without chromium (`apt-get install chromium`) these tests are skipped, visibly; .ci/run installs it.
describe.skipIf(!fs.existsSync(CHROMIUM))('in a real browser', () => {
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    // Another origin: a blank page on another port of this machine.
    elsewhere = http.createServer((_, res) => res.end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    elsewhereBase = `http://localhost:${(elsewhere.address() as import('node:net').AddressInfo).port}`;
    fs.mkdirSync(SCREENS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    elsewhere?.close();
  });

  test('a page on another origin calls both profile endpoints, with and without Authorization', async () => {
    const page = await browser.newPage();
    await page.goto(elsewhereBase);
    const results = await page.evaluate(async (base) => {
      const out: [string, number, string][] = [];
      for (const url of [`${base}/api/v1/users/alice`, `${base}/api/v1/users?username=@Alice`, `${base}/api/v1/users/nobody`]) {
        const variants: Record<string, string>[] = [{}, { Authorization: 'Bearer not-a-token' }];
        for (const headers of variants) {
          const r = await fetch(url, { headers });
          const body = await r.json();
          out.push([url, r.status, body.data?.username ?? body.error?.code]);
        }
      }
      return out;
    }, service.base);
    expect(results.map(([, status, what]) => [status, what])).toEqual([
      [200, 'alice'], [200, 'alice'], [200, 'alice'], [200, 'alice'], [404, 'USER_NOT_FOUND'], [404, 'USER_NOT_FOUND'],
    ]);
    await page.close();
  });

  for (const username of ['alice', 'carol', 'bob', 'erin_99']) {
    for (const width of [390, 1280]) {
      test(`/p/${username} at ${width} px: images shown, no error, no failed request, no sideways scrolling`, async () => {
        const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: width === 390 ? 'dark' : 'light' });
        const problems: string[] = [];
        page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
        page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
        page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
        page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`); });
        const hosts = new Set<string>();
        page.on('request', (r) => hosts.add(new URL(r.url()).host));

        const response = await page.goto(`${service.base}/p/${username}`, { waitUntil: 'load' });
        expect(response?.status()).toBe(200);
        const state = await page.evaluate(() => ({
          images: [...document.images].map((i) => ({ src: i.src, ok: i.complete && i.naturalWidth > 0, w: i.getAttribute('width'), h: i.getAttribute('height') })),
          avatar: document.querySelector('.avatar-image')?.getBoundingClientRect().width ?? 0,
          sideways: document.documentElement.scrollWidth - window.innerWidth,
          scripts: document.querySelectorAll('script:not([type="application/ld+json"])').length,
        }));
        await page.screenshot({ path: path.join(SCREENS, `${username}-${width}.png`), fullPage: true });
        await page.close();

        expect(problems).toEqual([]);
        // An avatar is shown: an image file, or the generated one inline for a profile without.
        expect(state.avatar).toBe(128);
        for (const img of state.images) {
          expect(img.ok, img.src).toBe(true);
          expect(img.w && img.h, `${img.src} has width and height`).toBeTruthy();
        }
        expect(state.sideways).toBeLessThanOrEqual(0);
        expect(state.scripts).toBe(0);
        expect([...hosts]).toEqual([new URL(service.base).host]);
      });
    }
  }

  test('the home page and the 404 page load cleanly too', async () => {
    for (const p of ['/', '/p/nobody', '/docs']) {
      const page = await browser.newPage({ viewport: { width: 320, height: 800 } });
      const problems: string[] = [];
      page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
      page.on('requestfailed', (r) => problems.push(`failed: ${r.url()}`));
      const response = await page.goto(service.base + p);
      expect(response?.status(), p).toBe(p === '/p/nobody' ? 404 : 200);
      // The browser reports the 404 page's own status as a console error; only that one is expected.
      if (p === '/p/nobody') problems.splice(0, problems.length, ...problems.filter((t) => !t.includes('status of 404')));
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      await page.screenshot({ path: path.join(SCREENS, `${p.replace(/\W+/g, '_') || 'home'}-320.png`), fullPage: true });
      await page.close();
      expect(problems, p).toEqual([]);
      expect(sideways, p).toBeLessThanOrEqual(0);
    }
  });
});
