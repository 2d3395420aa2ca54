// `npm run views:import`: which log lines are views, how they are counted, and how they are added
// to content/stats/views.yaml.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import {
  EXTRA_BOT_PATTERNS, ViewCounter, formatImportReport, formatReadProgress, isBotUserAgent, mergeViewCounts, parseCombinedLogLine, profileViewOf,
  showProgress, type LogEntry, type ReadProgress,
} from '../../src/tools/access-log.ts';
import { loadContent } from '../../src/content/load.ts';
import { ROOT, copyFixture } from '../support/helpers.ts';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
const SAFARI = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';

/** One combined-format line, as nginx writes it. */
function line({ ip = '203.0.113.7', time = '21/Nov/2026:10:00:00 +0000', method = 'GET', target = '/p/alice', status = 200, ua = FIREFOX } = {}) {
  return `${ip} - - [${time}] "${method} ${target} HTTP/1.1" ${status} 5120 "https://example.com/" "${ua}"`;
}
const entry = (target: string, more: Partial<LogEntry> = {}): LogEntry =>
  ({ client: '203.0.113.7', time: 0, method: 'GET', target, status: 200, userAgent: FIREFOX, ...more });

describe('reading combined-format lines', () => {
  test('nginx and Apache lines, with the time zone applied', () => {
    expect(parseCombinedLogLine(line({ time: '21/Nov/2026:23:30:00 -0700' }))).toEqual({
      client: '203.0.113.7', time: Date.parse('2026-11-22T06:30:00Z'), method: 'GET', target: '/p/alice', status: 200, userAgent: FIREFOX,
    });
    // Apache escapes a quote as \", nginx as \x22; IPv6 clients and `-` sizes occur.
    const apache = '2001:db8::1 - frank [05/Jan/2026:08:00:00 +0100] "GET /p/bob?ref=x HTTP/1.1" 200 - "-" "Mozilla/5.0 \\"quoted\\" Firefox/140.0"';
    expect(parseCombinedLogLine(apache)).toMatchObject({ client: '2001:db8::1', time: Date.parse('2026-01-05T07:00:00Z'), target: '/p/bob?ref=x', userAgent: 'Mozilla/5.0 \\"quoted\\" Firefox/140.0' });
    expect(parseCombinedLogLine(line({ ua: 'Mozilla/5.0 \\x22x\\x22' }))).toMatchObject({ userAgent: 'Mozilla/5.0 \\x22x\\x22' });
  });

  test('a request line nginx could not parse is a line, but not a request', () => {
    expect(parseCombinedLogLine('198.51.100.2 - - [21/Nov/2026:10:00:00 +0000] "-" 400 0 "-" "-"')).toMatchObject({ method: '', status: 400 });
    expect(parseCombinedLogLine('198.51.100.2 - - [21/Nov/2026:10:00:00 +0000] "\\x16\\x03\\x01" 400 157 "-" "-"')).toMatchObject({ method: '' });
  });

  test('anything else is malformed', () => {
    for (const bad of [
      '', 'garbage', '203.0.113.7 - - [21/Nov/2026:10:00:00 +0000] "GET /p/alice HTTP/1.1" 200 5120', // common format: no user agent
      line({ time: '21/Foo/2026:10:00:00 +0000' }), line({ time: '2026-11-21T10:00:00Z' }),
    ]) expect(parseCombinedLogLine(bad), bad).toBeUndefined();
  });
});

describe('what is a profile view', () => {
  test('GET /p/<name> answered 200, in any casing, with or without a query', () => {
    expect(profileViewOf(entry('/p/alice'))).toBe('alice');
    expect(profileViewOf(entry('/p/ALICE'))).toBe('alice');
    expect(profileViewOf(entry('/p/Alice?utm_source=x#top'))).toBe('alice');
    expect(profileViewOf(entry('/p/%61lice'))).toBe('alice');
    expect(profileViewOf(entry('https://profiles.example.net/p/alice'))).toBe('alice');
  });

  test('not HEAD or other methods, other statuses, deeper paths or other addresses', () => {
    for (const [target, more] of [
      ['/p/alice', { method: 'HEAD' }], ['/p/alice', { method: 'POST' }], ['/p/alice', { status: 304 }], ['/p/alice', { status: 404 }],
      ['/p/ALICE', { status: 308 }], ['/p/alice/', {}], ['/p/alice/photo.png', {}], ['/p/', {}], ['/p', {}], ['/api/v1/users/alice', {}],
      ['/', {}], ['/p/%E0%A4%A', {}], ['/p/a%2Fb', {}],
    ] as const) expect(profileViewOf(entry(target, more)), `${target} ${JSON.stringify(more)}`).toBeUndefined();
  });

  test('case folding is ASCII only, as in the server: the Kelvin sign is not a k', () => {
    expect(profileViewOf(entry('/p/%E2%84%AAate'))).toBe('\u212Aate');
  });

  test('bots and tools by user agent, people not', () => {
    for (const ua of [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Mozilla/5.0 (compatible; bingbot/2.0)',
      'Mozilla/5.0 (compatible; Yahoo! Slurp)', 'curl/8.5.0', 'Wget/1.21.4', 'python-requests/2.32.3', 'Go-http-client/2.0',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
      'facebookexternalhit/1.1', 'Slackbot-LinkExpanding 1.0', 'AhrefsBot/7.0', 'Mozilla/5.0 (compatible; SemrushBot/7~bl)',
      'UptimeRobot/2.0', 'Mozilla/5.0 (Java/17)', '-', '',
    ]) expect(isBotUserAgent(ua), ua).toBe(true);
    for (const ua of [FIREFOX, SAFARI, 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0']) {
      expect(isBotUserAgent(ua), ua).toBe(false);
    }
  });
});

// Real user agents, as their software sends them (versions as of late 2026 or their latest release).
const PEOPLE: Record<string, string> = {
  'Chrome, Windows': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Chrome, macOS': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Chrome, ChromeOS': 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Chrome, Android': 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  'Chrome, iPhone': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
  'Firefox, Linux': FIREFOX,
  'Firefox, Windows': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Firefox, Android': 'Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0',
  'Firefox, iPhone': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15',
  'Safari, macOS': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Safari, iPhone': SAFARI,
  'Safari, iPad': 'Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Samsung Internet': 'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36',
  'Edge, Windows': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  'Edge, Android': 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.0.0',
  'Opera': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0',
  // In-app browsers are people following a link from the app.
  'Instagram in-app': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 357.0.0.25.101 (iPhone15,2; iOS 18_1; en_US; en; scale=3.00; 1179x2556; 659286347)',
  'Facebook in-app, Android': 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.81 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/490.0.0.58.73;]',
};
const NOT_PEOPLE: Record<string, string> = {
  // Fediverse servers verifying a `rel="me"` link or building a preview card.
  'Mastodon 4.3+': 'Mastodon/4.3.2 (http.rb/5.2.0; +https://mastodon.social/)',
  'Mastodon 4.2': 'http.rb/5.1.1 (Mastodon/4.2.10; +https://mastodon.social/)',
  'Mastodon card': 'http.rb/5.1.0 (Mastodon/4.0.2; +https://freiburg.social/) Bot',
  'Akkoma': 'Akkoma 3.13.2; https://akko.example <admin@akko.example>',
  'Pleroma': 'Pleroma 2.7.0; https://pleroma.example <admin@pleroma.example>',
  'Misskey': 'Misskey/2024.11.0 (https://misskey.io)',
  'Friendica': "Friendica 'Yellow Archangel' 2024.08-1569; https://friendica.example",
  'GoToSocial': 'gotosocial (+https://gts.example.org) gotosocial/0.17.3',
  'Lemmy': 'Lemmy/0.19.7; +https://lemmy.ml',
  'Pixelfed': '(Pixelfed/0.12.4; +https://pixelfed.social)',
  'Bluesky card': 'Bluesky Cardyb/1.1',
  'Bluesky card, long': 'Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)',
  // Link previews in messengers and apps.
  'WhatsApp': 'WhatsApp/2.23.20.0',
  'WhatsApp, Android': 'WhatsApp/2.2449.6 A',
  'Signal (as WhatsApp)': 'WhatsApp/2',
  'Telegram': 'TelegramBot (like TwitterBot)',
  'Discord': 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'Slack': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'iMessage': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  'Teams and Outlook': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/107.0.0.0 Safari/537.36 Edg/107.0.1418.62 MicrosoftPreview/2.0 +https://aka.ms/MicrosoftPreview',
  'Skype': 'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
  'Matrix (Synapse)': 'Synapse (bot; +https://github.com/matrix-org/synapse)',
  'LinkedIn': 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  'Iframely': 'Iframely/1.3.1 (+https://iframely.com/docs/about)',
  // Search engines, their other fetchers, and AI crawlers.
  'GoogleOther': 'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; GoogleOther)',
  'Google-InspectionTool': 'Mozilla/5.0 (compatible; Google-InspectionTool/1.0;)',
  'Applebot': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
  'GPTBot': 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  'ChatGPT-User': 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ChatGPT-User/1.0; +https://openai.com/bot)',
  'Yahoo Slurp, short': 'Mozilla/5.0 (compatible; Yahoo! Slurp)',
  'Bytespider': 'Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com)',
  // Tools, runtimes and headless browsers.
  'Postman': 'PostmanRuntime/7.43.0',
  'Insomnia': 'insomnia/2023.5.8',
  'Deno': 'Deno/2.1.4',
  'Bun': 'Bun/1.1.38',
  'Node fetch': 'node',
  'axios': 'axios/1.7.9',
  'Dart and Flutter': 'Dart/3.5 (dart:io)',
  'okhttp': 'okhttp/4.12.0',
  'httpx': 'python-httpx/0.28.1',
  'k6': 'k6/0.55.0 (https://k6.io/)',
  'Headless Chrome': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
  'Lighthouse': 'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse',
};

describe('bots by user agent, over real ones', () => {
  test.each(Object.entries(PEOPLE))('%s counts', (_, ua) => {
    expect(isBotUserAgent(ua)).toBe(false);
  });

  test.each(Object.entries(NOT_PEOPLE))('%s does not count', (_, ua) => {
    expect(isBotUserAgent(ua)).toBe(true);
  });

  test('each extra pattern names an agent above and matches no browser', () => {
    for (const pattern of EXTRA_BOT_PATTERNS) {
      const re = new RegExp(pattern, 'i');
      expect(Object.values(NOT_PEOPLE).some((ua) => re.test(ua)), pattern).toBe(true);
      expect(Object.entries(PEOPLE).filter(([, ua]) => re.test(ua)).map(([name]) => name), pattern).toEqual([]);
    }
  });
});

describe('counting', () => {
  const PROFILES = new Set(['alice', 'bob', 'dave']);
  let dir = '';
  beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-log-')); });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  // Two days of traffic over a plain log and a gzipped one.
  const dayOne = [
    line({ ip: '203.0.113.1', time: '21/Nov/2026:09:00:00 +0000' }), // alice +1
    line({ ip: '203.0.113.1', time: '21/Nov/2026:18:00:00 +0000', target: '/p/Alice?x=1' }), // repeat: same client, profile, day
    line({ ip: '203.0.113.2', time: '21/Nov/2026:09:00:00 +0000', ua: SAFARI }), // alice +1: another client
    line({ ip: '203.0.113.1', time: '21/Nov/2026:09:01:00 +0000', target: '/p/bob' }), // bob +1: same client, other profile
    line({ ip: '203.0.113.1', time: '21/Nov/2026:23:30:00 -0200', target: '/p/bob' }), // bob +1: 01:30 UTC on the 22nd
    line({ ip: '66.249.66.1', ua: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' }), // bot
    line({ ip: '203.0.113.3', ua: 'curl/8.5.0', target: '/p/dave' }), // tool
    line({ ip: '203.0.113.3', method: 'HEAD' }), // not a view
    line({ ip: '203.0.113.4', status: 304 }), line({ ip: '203.0.113.4', status: 404, target: '/p/nobody' }), line({ ip: '203.0.113.4', status: 500 }),
    line({ ip: '203.0.113.4', target: '/p/alice/x.css' }), line({ ip: '203.0.113.4', target: '/api/v1/users/alice' }),
    line({ ip: '203.0.113.5', target: '/p/nobody' }), line({ ip: '203.0.113.5', target: '/p/Nobody' }), line({ ip: '203.0.113.6', target: '/p/ghost' }),
    'this is not a log line',
    '',
  ];
  const dayTwo = [
    line({ ip: '203.0.113.1', time: '22/Nov/2026:09:00:00 +0000' }), // alice +1: a new UTC day
    line({ ip: '203.0.113.1', time: '22/Nov/2026:09:00:00 +0000', target: '/p/bob' }), // repeat of the 01:30 UTC view in the other file
    line({ ip: '203.0.113.9', time: '22/Nov/2026:09:00:00 +0000', target: '/p/DAVE' }), // dave +1
    '203.0.113.9 - - [22/Nov/2026:09:00:00 +0000] "GET /p/dave HTTP/1.1" 200 512', // common format: malformed
  ];

  test('one view per client, profile and UTC day, across files, plain and gzip', async () => {
    fs.writeFileSync(path.join(dir, 'access.log'), `${dayOne.join('\n')}\n`);
    fs.writeFileSync(path.join(dir, 'access.log.1.gz'), zlib.gzipSync(`${dayTwo.join('\r\n')}\r\n`));
    const counter = new ViewCounter((u) => PROFILES.has(u));
    await counter.addFile(path.join(dir, 'access.log'), 'access.log');
    await counter.addFile(path.join(dir, 'access.log.1.gz'), 'access.log.1.gz');
    expect(Object.fromEntries(counter.views)).toEqual({ alice: 3, bob: 2, dave: 1 });
    const r = counter.report;
    expect(r.malformed + r.notViews + r.bots + r.repeats + r.unknownUser + r.counted).toBe(r.lines);
    expect(formatImportReport(r)).toMatchInlineSnapshot(`
      "Read 2 log files, 22 lines:
        6 views counted (GET /p/<name> answered 200; one per client, profile and UTC day)
        3 lines not in the combined log format (or blank)
        6 not profile views (other paths and deeper /p/ paths, HEAD and other methods, statuses other than 200)
        2 from bots, crawlers and tools (by user agent)
        2 repeats of a counted view (same client, profile and UTC day)
        3 for names without a profile: nobody (2), ghost (1)
      Lines not in the combined log format, for example:
        access.log:17: this is not a log line
        access.log:18: 
        access.log.1.gz:4: 203.0.113.9 - - [22/Nov/2026:09:00:00 +0000] "GET /p/dave HTTP/1.1" 200 512"
    `);
  });

  test('gzip is recognised by its content, whatever the name', async () => {
    fs.writeFileSync(path.join(dir, 'rotated'), zlib.gzipSync(`${line()}\n`));
    const counter = new ViewCounter(() => true);
    await counter.addFile(path.join(dir, 'rotated'));
    expect(counter.report).toMatchObject({ lines: 1, counted: 1 });
  });

  test('a broken gzip file fails the import instead of ending it quietly', async () => {
    const gz = zlib.gzipSync(`${line()}\n`.repeat(1000));
    fs.writeFileSync(path.join(dir, 'broken.gz'), gz.subarray(0, gz.length - 20));
    await expect(new ViewCounter(() => true).addFile(path.join(dir, 'broken.gz'))).rejects.toThrow(/unexpected end of file/);
  });

  test('a large log is streamed', async () => {
    // 200,000 lines (about 40 MB unpacked): 2,000 clients on 100 days, one profile.
    const lines: string[] = [];
    for (let day = 1; day <= 100; day++) {
      const date = new Date(Date.UTC(2026, 0, day)).toUTCString().split(' ');
      for (let c = 0; c < 2000; c++) lines.push(line({ ip: `10.0.${c >> 8}.${c & 255}`, time: `${date[1]}/${date[2]}/${date[3]}:12:00:00 +0000` }));
    }
    fs.writeFileSync(path.join(dir, 'big.log.gz'), zlib.gzipSync(lines.join('\n')));
    const counter = new ViewCounter((u) => u === 'alice');
    await counter.addFile(path.join(dir, 'big.log.gz'));
    expect(counter.report).toMatchObject({ lines: 200_000, counted: 200_000, repeats: 0 });
  });
});

describe('progress while reading', () => {
  let dir = '';
  beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-log-progress-')); });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the counter says which file, how many lines and how many bytes of its size', async () => {
    // About 400 KB: more than the 64 KiB a file stream reads at once, so the first line is read
    // while most of the file is not.
    const text = `${Array.from({ length: 2000 }, (_, c) => line({ ip: `10.0.${c >> 8}.${c & 255}` })).join('\n')}\n`;
    fs.writeFileSync(path.join(dir, 'access.log'), text);
    fs.writeFileSync(path.join(dir, 'access.log.1.gz'), zlib.gzipSync(text));
    const seen: (ReadProgress | undefined)[] = [];
    const counter: ViewCounter = new ViewCounter(() => { seen.push(counter.progress); return true; });
    expect(counter.progress).toBeUndefined();
    await counter.addFile(path.join(dir, 'access.log'), 'access.log');
    const size = Buffer.byteLength(text);
    expect(seen[0]).toMatchObject({ file: 'access.log', lines: 1, totalBytes: size });
    expect(seen[0]!.bytesRead).toBeGreaterThan(0);
    expect(seen[0]!.bytesRead).toBeLessThan(size / 2);
    expect(seen[999]).toMatchObject({ lines: 1000 });
    expect(counter.progress).toEqual({ file: 'access.log', lines: 2000, bytesRead: size, totalBytes: size });
    // A gzip file is measured in its own (compressed) bytes, which is what its size says.
    await counter.addFile(path.join(dir, 'access.log.1.gz'), 'access.log.1.gz');
    const gzSize = fs.statSync(path.join(dir, 'access.log.1.gz')).size;
    expect(counter.progress).toEqual({ file: 'access.log.1.gz', lines: 2000, bytesRead: gzSize, totalBytes: gzSize });
  });

  test('the progress line', () => {
    expect(formatReadProgress({ file: 'access.log.1.gz', lines: 1_234_567, bytesRead: 126_248_550, totalBytes: 367_001_600 }))
      .toMatchInlineSnapshot(`"access.log.1.gz: 34% (120.4 of 350.0 MB), 1,234,567 lines"`);
    expect(formatReadProgress({ file: 'empty.log', lines: 0, bytesRead: 0, totalBytes: 0 })).toMatchInlineSnapshot(`"empty.log: (0.0 of 0.0 MB), 0 lines"`);
  });

  const fakeStream = (isTTY: boolean) => {
    const out: string[] = [];
    return { out, stream: { isTTY, columns: 30, write: (s: string) => out.push(s) } as unknown as NodeJS.WriteStream };
  };

  test('on a terminal, one line rewritten every 2 s, cut to its width and blanked at the end', () => {
    vi.useFakeTimers();
    try {
      const { out, stream } = fakeStream(true);
      const lines = ['a.log: 10 lines', 'a.log: 20,000 lines, and a long tail', 'b.log: 5 lines'];
      const stop = showProgress(stream, () => lines.shift());
      vi.advanceTimersByTime(1999);
      expect(out).toEqual([]);
      vi.advanceTimersByTime(6000);
      stop();
      vi.advanceTimersByTime(10_000);
      expect(out).toEqual([
        '\ra.log: 10 lines',
        '\ra.log: 20,000 lines, and a lo',
        '\rb.log: 5 lines               ',
        `\r${' '.repeat(14)}`, '\r',
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  test('elsewhere (cron, CI, a pipe), nothing: the final report says it all', () => {
    vi.useFakeTimers();
    try {
      const { out, stream } = fakeStream(false);
      const stop = showProgress(stream, () => 'a.log: 10 lines');
      vi.advanceTimersByTime(10_000);
      stop();
      expect(out).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('merging into content/stats/views.yaml', () => {
  const profileViews: Record<string, number> = { alice: 48213, bob: 0, dave: 1200, null: 5 };
  const startOf = (u: string) => profileViews[u]!;

  test('adds to the counts in the file; a profile not in it starts from its own views', () => {
    const existing = '# machine-written view counts; a count here replaces the profile\'s own `views`\n\n# dave moved here from another site\ndave: 1337\n# carol asked to be counted from 10\ncarol: 10\n';
    const { text, changes } = mergeViewCounts(existing, new Map([['dave', 2], ['alice', 5], ['bob', 1], ['null', 1], ['carol', 0]]), startOf);
    expect(text).toMatchInlineSnapshot(`
      "# machine-written view counts; a count here replaces the profile's own \`views\`

      # dave moved here from another site

      alice: 48218
      bob: 1
      # carol asked to be counted from 10
      carol: 10
      dave: 1339
      "null": 6
      "
    `);
    expect(changes).toMatchInlineSnapshot(`
      [
        {
          "after": 48218,
          "before": 48213,
          "fromProfile": true,
          "username": "alice",
        },
        {
          "after": 1,
          "before": 0,
          "fromProfile": true,
          "username": "bob",
        },
        {
          "after": 1339,
          "before": 1337,
          "fromProfile": false,
          "username": "dave",
        },
        {
          "after": 6,
          "before": 5,
          "fromProfile": true,
          "username": "null",
        },
      ]
    `);
  });

  test('the header stays at the top with or without a blank line after it', () => {
    expect(mergeViewCounts('# header\ndave: 1\n', new Map([['alice', 1]]), startOf).text).toMatchInlineSnapshot(`
      "# header

      alice: 48214
      dave: 1
      "
    `);
  });

  test('a new file gets a header pointing the editor at the schema', () => {
    expect(mergeViewCounts(undefined, new Map([['bob', 3]]), startOf).text).toMatchInlineSnapshot(`
      "# yaml-language-server: $schema=../../public/schemas/views.schema.json
      # Page views per profile, \`username: count\`, kept sorted. Written by \`npm run views:import\`, which adds
      # the views it finds in access logs. A count here replaces the profile's own \`views\`.

      bob: 3
      "
    `);
  });

  test('nothing to add changes nothing', () => {
    const existing = 'dave: 1337\n';
    expect(mergeViewCounts(existing, new Map(), startOf)).toEqual({ text: existing, changes: [] });
  });
});

describe('npm run views:import', () => {
  let work = '';
  let content = '';
  beforeAll(() => {
    ({ parent: work, content } = copyFixture('import-views'));
    fs.writeFileSync(path.join(work, 'access.log'), `${[
      line({ ip: '203.0.113.1' }), line({ ip: '203.0.113.2' }), line({ ip: '203.0.113.1', target: '/p/DAVE' }),
      line({ ip: '203.0.113.1', target: '/p/nobody' }), line({ ua: 'curl/8.5.0' }), 'garbage',
    ].join('\n')}\n`);
    fs.writeFileSync(path.join(work, 'nonsense.log'), 'a\nb\n');
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'import-views.ts'), ...args], { cwd: work, encoding: 'utf8', env: { ...process.env, CONTENT_DIR: '' } });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const views = () => fs.readFileSync(path.join(content, 'stats', 'views.yaml'), 'utf8');

  test('--dry-run reports and writes nothing', () => {
    const before = views();
    const r = run(['access.log', '--content', 'content', '--dry-run']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatchInlineSnapshot(`
      "Read 1 log file, 6 lines:
        3 views counted (GET /p/<name> answered 200; one per client, profile and UTC day)
        1 line not in the combined log format (or blank)
        0 not profile views (other paths and deeper /p/ paths, HEAD and other methods, statuses other than 200)
        1 from bots, crawlers and tools (by user agent)
        0 repeats of a counted view (same client, profile and UTC day)
        1 for names without a profile: nobody (1)
      Lines not in the combined log format, for example:
        access.log:6: garbage
      content/stats/views.yaml:
        alice 48213 -> 48215 (+2), starting from the profile's own \`views\`
        dave  1337 -> 1338 (+1)
      Dry run: would add 3 view(s) to 2 profile(s); content/stats/views.yaml was not written.
      "
    `);
    expect(r.stderr).toBe(''); // no progress lines where stderr is not a terminal
    expect(views()).toBe(before);
  });

  test('adds the views, and the build reads them', () => {
    const r = run(['access.log', '--content', 'content']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n').at(-2)).toMatchInlineSnapshot(`"Added 3 view(s) to 2 profile(s) in content/stats/views.yaml. Commit it; the next build shows the counts."`);
    expect(views()).toMatchInlineSnapshot(`
      "# machine-written view counts; a count here replaces the profile's own \`views\`

      alice: 48215
      dave: 1338
      "
    `);
    const { content: loaded, problems } = loadContent(content);
    expect(problems).toEqual([]);
    expect(Object.fromEntries(loaded.views)).toEqual({ alice: 48215, dave: 1338 });
  });

  test('refuses logs with no combined-format line, a missing log, and wrong usage', () => {
    const nonsense = run(['nonsense.log', '--content', 'content']);
    expect(nonsense.status).toBe(1);
    expect(nonsense.stderr).toMatchInlineSnapshot(`
      "views:import: no line is in the combined log format (\`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"\`). Nothing was written.
      "
    `);
    const missing = run(['missing.log', '--content', 'content']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatchInlineSnapshot(`
      "views:import: missing.log is not a file. Nothing was imported.
      "
    `);
    expect(run([]).status).toBe(2);
    expect(run(['access.log', '--contnet', 'x']).status).toBe(2);
  });

  test('refuses content with problems: the counts must match real profiles', () => {
    fs.writeFileSync(path.join(content, 'profiles', 'broken.yaml'), 'displayName: [\n');
    const r = run(['access.log', '--content', 'content']);
    fs.rmSync(path.join(content, 'profiles', 'broken.yaml'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "content/profiles/broken.yaml:2:1: YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]
          hint: check the indentation and quoting on this line
      views:import: 1 problem(s) in content: fix them first (\`npm run check\`). Nothing was imported.
      "
    `);
  });
});
