// Usage: npm run screenshots [-- --base http://localhost:4321] [--out .github/readme] <username>...
//
// Screenshots of profile pages as visitors see them (a phone in dark mode, a desktop in light
// mode) in Debian's chromium, for the README and for looking at changes. Needs a running server
// (`npm start`) and /usr/bin/chromium.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { parseCli } from '../src/cli.ts';

const cli = parseCli({
  name: 'screenshots',
  usage: 'Usage: npm run screenshots [-- --base http://localhost:4321] [--out .github/readme] <username>...',
  args: { '<username>...': 'the profiles to capture, each as a phone (dark) and a desktop (light)' },
  options: {
    base: { type: 'string', default: 'http://localhost:4321', value: '<url>', help: 'the running server (default http://localhost:4321)' },
    out: { type: 'string', default: '.github/readme', value: '<dir>', help: 'where the PNG files go (default .github/readme)' },
  },
  env: { CHROMIUM_PATH: 'the browser to drive (default /usr/bin/chromium)' },
});
const { values, positionals } = cli;
if (!positionals.length) cli.usageError('which usernames?');
fs.mkdirSync(values.out, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
const shots: string[] = [];
for (const username of positionals) {
  for (const [width, height, scheme, label] of [[390, 844, 'dark', 'phone'], [1280, 800, 'light', 'desktop']] as const) {
    const page = await browser.newPage({ viewport: { width, height }, colorScheme: scheme, deviceScaleFactor: 1 });
    const response = await page.goto(`${values.base}/p/${username}`, { waitUntil: 'load' });
    if (response?.status() !== 200) throw new Error(`/p/${username} answered ${response?.status()}`);
    const file = path.join(values.out, `${username}-${label}.png`);
    await page.screenshot({ path: file });
    console.log(`  ${file}`);
    shots.push(file);
    await page.close();
  }
}
await browser.close();
console.log(`Wrote ${shots.length} screenshots: ${shots.join(', ')}`);
