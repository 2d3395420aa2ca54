// Usage: node scripts/bench/generate-profiles.ts <count> <out-dir> [--seed N]
//
// Writes a synthetic content folder with <count> profiles, varied like a real directory: socials,
// badges, decorations, custom domains (5%), suspensions (5%), private notes, creators (about 1 in
// 20), avatars for some, bios from empty to the 1,000-character limit, and a view count in
// stats/views.yaml for 80% of profiles (as `npm run views:import` writes it: one line per viewed
// profile). Deterministic for a seed, so benchmark runs compare like with like.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { positionals, values } = parseArgs({ allowPositionals: true, options: { seed: { type: 'string', default: '1' } } });
const count = Number(positionals[0]);
const out = positionals[1];
if (!Number.isInteger(count) || count < 1 || !out) {
  console.error('Usage: node scripts/bench/generate-profiles.ts <count> <out-dir> [--seed N]');
  process.exit(2);
}

// mulberry32: a small seeded generator, so the same seed gives the same folder.
let state = Number(values.seed) >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;

const FIRST = ['Ada', 'Bo', 'Chen', 'Dana', 'Émile', 'Farah', 'Gus', 'Hana', 'Ivo', 'Jun', 'Kai', 'Lena', 'Mika', 'Noor', 'Olu', 'Pia', 'Quinn', 'Rui', 'Sol', 'Tomasz'];
const LAST = ['Kowalski', 'Tanaka', 'Haddad', 'Silva', 'Okafor', 'Nguyen', 'Müller', 'Rossi', 'Larsen', 'Kim'];
const EXTRA = ['', '', '', ' 🌸', ' ✨', ' 🎮', ' (she/her)', ' 🎧'];
const PLATFORMS: [string, string][] = [['github', 'https://github.com/'], ['youtube', 'https://www.youtube.com/@'], ['twitch', 'https://twitch.tv/'], ['mastodon', 'https://mastodon.example.org/@'], ['bluesky', 'https://bsky.app/profile/'], ['website', 'https://example.com/~']];
const BIOS = ['Illustrator and tea person.', 'Backend developer.\nWrites about build systems.', 'Streams speedruns on weekends.', 'Music producer, synths and field recordings.', ''];
const LONG = [
  'I draw characters, mostly in ink and watercolour, and post a page of sketches every Sunday. Commissions open twice a year; the queue and the rules are on my website.',
  'Ten years of backend work: queues, caches, the occasional database migration that ran all weekend. These days I write about build systems and why they are slow.',
  'Field recordings from train stations, harbours and markets, cut into loops and played live on a modular synth. New set every month — dates below.',
  'Speedrunner (any% and 100%), occasional commentator, permanent apprentice. Ask me about frame-perfect tricks and I will talk for an hour.',
];
const CATEGORIES = ['art', 'music', 'code', 'gaming', '3d', 'writing'];

const dirs = ['profiles', 'creators', 'decorations', 'avatars', 'stats'].map((d) => path.join(out, d));
fs.rmSync(out, { recursive: true, force: true });
for (const d of dirs) fs.mkdirSync(d, { recursive: true });

// Two decorations and two avatar images, shared: a 1x1 PNG is enough for the format.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
for (const id of ['sakura', 'neon']) {
  fs.writeFileSync(path.join(out, 'decorations', `${id}.yaml`), `name: ${id === 'sakura' ? 'Sakura Petals' : 'Neon Ring'}\nfile: ${id}.png\n`);
  fs.writeFileSync(path.join(out, 'decorations', `${id}.png`), PNG);
}
for (const f of ['a.png', 'b.png']) fs.writeFileSync(path.join(out, 'avatars', f), PNG);

const views: string[] = [];
for (let i = 0; i < count; i++) {
  const username = `user${String(i).padStart(6, '0')}`;
  const lines = [`displayName: "${pick(FIRST)} ${pick(LAST)}${pick(EXTRA)}"`];
  // One bio in ten is long: up to the 1,000-character limit, in paragraphs.
  const bio = random() < 0.1 ? Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(LONG)).join('\n\n').slice(0, 1000).trim() : pick(BIOS);
  if (bio) lines.push(`bio: ${JSON.stringify(bio)}`);
  const created = new Date(Date.UTC(2015, 0, 1) + Math.floor(random() * 3650) * 86_400_000 + Math.floor(random() * 86_400_000));
  lines.push(`createdAt: ${created.toISOString().replace('.000Z', 'Z')}`);
  if (random() < 0.3) lines.push(`avatar: ${pick(['a.png', 'b.png'])}`);
  if (random() < 0.05) lines.push(`customDomain: ${username}.example.com`);
  lines.push(`views: ${Math.floor(random() ** 3 * 250_000)}`);
  const badges = ['verified', 'official', 'helper'].filter(() => random() < 0.15);
  if (badges.length) lines.push(`badges: [${badges.join(', ')}]`);
  if (random() < 0.2) lines.push(`decoration: ${pick(['sakura', 'neon'])}`);
  const socials = Math.floor(random() * 4);
  if (socials) {
    lines.push('socials:');
    for (let s = 0; s < socials; s++) {
      const [platform, prefix] = pick(PLATFORMS);
      lines.push(`  - platform: ${platform}`, `    url: ${prefix}${username}`);
    }
  }
  if (random() < 0.05) lines.push('suspension:', '  reason: spam', '  message: Suspended for spam.', '  at: 2025-06-30T18:45:00Z');
  if (random() < 0.1) lines.push('private:', `  email: ${username}@example.com`);
  fs.writeFileSync(path.join(out, 'profiles', `${username}.yaml`), `${lines.join('\n')}\n`);
  if (random() < 0.05) fs.writeFileSync(path.join(out, 'creators', `${username}.yaml`), `category: ${pick(CATEGORIES)}\nfeatured: ${random() < 0.1}\n`);
  if (random() < 0.8) views.push(`${username}: ${Math.floor(random() * 100_000)}`);
}
fs.writeFileSync(path.join(out, 'stats', 'views.yaml'), `# machine-written\n${views.join('\n')}\n`);
console.log(`Wrote ${count} profiles to ${out}.`);
