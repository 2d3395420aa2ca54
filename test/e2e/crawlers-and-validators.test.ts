// What crawlers and validators see in the run's shared build of the fixture: robots.txt and the sitemap over HTTP,
// the pages through vnu (the W3C's Nu Html Checker, from the vnu-jar package), and the /docs
// parameter tables in chromium at desktop and phone widths.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import os from 'node:os';
import { chromium } from 'playwright-core';
import { describe, expect, onTestFinished, test } from 'vitest';
import { sharedBuild, TEST_SITE_URL } from '../support/built-server.ts';
import { readServedFile } from '../support/helpers.ts';

const VNU_JAR = String(createRequire(import.meta.url)('vnu-jar'));
const HAS_JAVA = spawnSync('java', ['-version']).status === 0;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const { base, dist } = sharedBuild();
const get = (p: string) => fetch(base + p, { redirect: 'manual' });
const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!);
const NOINDEX = '<meta name="robots" content="noindex">';

describe('robots.txt and the sitemap of the fixture build', () => {
  test('robots.txt is plain text that allows crawling and names the sitemap', async () => {
    const r = await get('/robots.txt');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await r.text()).toMatchInlineSnapshot(`
      "User-agent: *
      Allow: /

      Sitemap: https://profiles.example.net/sitemap.xml
      "
    `);
  });

  test('the sitemap lists the home page and the active profiles at SITE_URL, without lastmod', async () => {
    const r = await get('/sitemap.xml');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const xml = await r.text();
    expect(xml).toMatchInlineSnapshot(`
      "<?xml version="1.0" encoding="UTF-8"?>
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc>https://profiles.example.net/</loc></url>
      <url><loc>https://profiles.example.net/p/bob</loc></url>
      <url><loc>https://profiles.example.net/p/dave</loc></url>
      <url><loc>https://profiles.example.net/p/erin_99</loc></url>
      <url><loc>https://profiles.example.net/p/kate</loc></url>
      </urlset>
      "
    `);
    // One file is enough here: no parts of an index.
    expect((await get('/sitemap-1.xml')).status).toBe(404);
    // Each listed page is served here and may be indexed.
    for (const loc of locs(xml)) {
      expect(loc.startsWith(`${TEST_SITE_URL}/`), loc).toBe(true);
      const page = await get(loc.slice(TEST_SITE_URL.length));
      expect(page.status, loc).toBe(200);
      expect(await page.text(), loc).not.toContain(NOINDEX);
    }
  });

  test('suspended pages stay served with noindex, and out of the sitemap', async () => {
    const xml = await (await get('/sitemap.xml')).text();
    for (const name of ['carol', 'frank']) {
      const page = await get(`/p/${name}`);
      expect(page.status, name).toBe(200);
      expect(await page.text(), name).toContain(NOINDEX);
      expect(xml, name).not.toContain(`/p/${name}<`);
    }
  });
});

describe('/docs renders its Markdown', () => {
  test('no backtick is left in the prose; inline code is <code>', async () => {
    const html = await (await get('/docs')).text();
    // Examples are JSON in <pre>, where a backtick inside a message is the message's own.
    const prose = html.replace(/<pre\b[^>]*>[\s\S]*?<\/pre>/g, '');
    expect(prose).not.toContain('`');
    expect(prose).toContain('Follow <code>links.next</code> to page on');
  });
});

// vnu needs Java 17+ (`apt-get install default-jre-headless`); without it this is skipped, and says so.
describe.skipIf(!HAS_JAVA)('vnu (the W3C validator) on the built pages', () => {
  test('/docs, the home page, every profile page and the 404 page: 0 errors', () => {
    const client = path.join(dist, 'client');
    const pages = ['docs.html', 'index.html', '404.html', 'lookup.html', ...fs.readdirSync(path.join(client, 'p')).filter((f) => f.endsWith('.html')).map((f) => `p/${f}`)];
    expect(pages.length).toBeGreaterThan(5);
    // The pages as served: a `node` release's files hold their compressed codings too (src/release/coded-file.ts).
    const served = fs.mkdtempSync(path.join(os.tmpdir(), 'vnu-'));
    onTestFinished(() => fs.rmSync(served, { recursive: true, force: true }));
    for (const page of pages) {
      fs.mkdirSync(path.dirname(path.join(served, page)), { recursive: true });
      fs.writeFileSync(path.join(served, page), readServedFile(path.join(client, page)));
    }
    const run = spawnSync('java', ['-jar', VNU_JAR, '--format', 'json', '--errors-only', ...pages], { cwd: served, encoding: 'utf8' });
    const messages = (JSON.parse(run.stderr) as { messages: { type: string; url: string; message: string; lastLine?: number }[] }).messages;
    const errors = messages.filter((m) => m.type !== 'info').map((m) => `${path.basename(m.url)}:${m.lastLine ?? '?'} ${m.message}`);
    expect(errors).toEqual([]);
    expect(run.status).toBe(0);
  }, 120_000);
});
if (!HAS_JAVA) console.warn('vnu tests skipped: no `java` on PATH (install Java 17+, e.g. `apt-get install default-jre-headless`).');

// Without chromium (`apt-get install chromium`) this is skipped, visibly; .ci/run installs it.
describe.skipIf(!fs.existsSync(CHROMIUM))('/docs parameter tables in chromium', () => {
  test('no word breaks across lines at 1280 and 390 px', async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    try {
      for (const width of [1280, 390]) {
        const page = await browser.newPage({ viewport: { width, height: 900 } });
        await page.goto(`${base}/docs`);
        // A word (split at spaces and after hyphens, where lines may break) whose letters sit on more
        // than one line was broken mid-word.
        const found = await page.evaluate(() => {
          const broken: string[] = [];
          let words = 0;
          for (const cell of document.querySelectorAll('.docs table th, .docs table td')) {
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              for (const m of node.textContent!.matchAll(/[^\s-]+-?/g)) {
                const range = document.createRange();
                range.setStart(node, m.index!);
                range.setEnd(node, m.index! + m[0].length);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                words++;
                if (lines.size > 1) broken.push(m[0]);
              }
            }
          }
          return { words, broken };
        });
        await page.close();
        expect(found.words, `${width} px`).toBeGreaterThan(100);
        expect(found.broken, `${width} px`).toEqual([]);
      }
    } finally {
      await browser.close();
    }
  }, 60_000);
});
