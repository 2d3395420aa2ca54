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
    for (const [width, height] of [[360, 740], [1280, 800]] as const) {
      test(`/p/${username} at ${width} px: images shown, no error, no failed request, no sideways scrolling`, async () => {
        const page = await browser.newPage({ viewport: { width, height }, colorScheme: width === 360 ? 'dark' : 'light' });
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

  // Each word of a link card (platform, handle, address) on one line box: the text breaks only at
  // spaces. A word split mid-word has two client rects; one cut by an ellipsis still has one.
  for (const username of ['alice', 'dave', 'kate']) {
    test(`/p/${username} at 360 px: link card text is never broken mid-word, and stays inside its card`, async () => {
      const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
      await page.goto(`${service.base}/p/${username}`);
      // Besides the fixture's own cards, a copy of the first with a long hyphenated handle and address
      // (the page's markup and CSS, longer text): the case that split words and widened the page.
      await page.evaluate(() => {
        const copy = document.querySelector('.socials li')!.cloneNode(true) as HTMLElement;
        copy.querySelector('.social-handle')!.textContent = 'zoe-example/a-repository-with-a-really-long-name';
        copy.querySelector('.url')!.textContent = 'www.extraordinarily-long-domain-name-for-testing.example/portfolio/illustrations-2025';
        document.querySelector('.socials')!.append(copy);
      });
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      const cards = await page.evaluate(() => [...document.querySelectorAll('.socials a')].map((card) => {
        const box = card.getBoundingClientRect();
        const words: { word: string; lines: number; inside: boolean }[] = [];
        const walker = document.createTreeWalker(card.querySelector('.social-text')!, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (const m of node.textContent!.matchAll(/\S+/g)) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const rects = [...range.getClientRects()].filter((r) => r.width > 0);
            words.push({ word: m[0], lines: new Set(rects.map((r) => Math.round(r.top))).size, inside: rects.every((r) => r.left >= box.left) });
          }
        }
        return { words, label: card.querySelector('.social-label')!.textContent!.replace(/\s+/g, ' ').trim(), right: box.right };
      }));
      await page.close();
      expect(cards.length, username).toBeGreaterThan(1);
      expect(sideways, username).toBeLessThanOrEqual(0);
      for (const card of cards) {
        expect(card.label).toMatch(/^\S.* · \S+$/);
        for (const w of card.words) expect(w, `${card.label}: ${w.word}`).toMatchObject({ lines: 1, inside: true });
        expect(card.right).toBeLessThanOrEqual(360);
      }
    });
  }

  test('a suspended page shows its name and message, and no badge, bio or link', async () => {
    for (const username of ['carol', 'frank']) {
      const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
      await page.goto(`${service.base}/p/${username}`);
      const state = await page.evaluate(() => ({
        text: document.querySelector('main')!.innerText,
        shown: [...document.querySelectorAll('.badge, .bio, .socials, .domain, .avatar-decoration, main a')].length,
        robots: document.querySelector('meta[name="robots"]')?.getAttribute('content'),
      }));
      await page.screenshot({ path: path.join(SCREENS, `${username}-suspended-360.png`), fullPage: true });
      await page.close();
      expect(state.shown, username).toBe(0);
      expect(state.robots, username).toBe('noindex');
      expect(state.text, username).toContain('This profile is suspended');
      expect(state.text, username).toContain(username === 'carol' ? 'Carol' : 'Frank');
      for (const hidden of ['Verified', 'Helper', 'Used to post here.', 'carol-example']) expect(state.text, username).not.toContain(hidden);
      if (username === 'carol') expect(state.text).toContain('This profile has been suspended for repeated spam.');
    }
  });

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
