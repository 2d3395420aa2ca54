// How long the kernel takes to create files as their number grows: `n` files of 1 KB written one
// after another into `folders` folders under `dir` (docs/scale.md, "One folder of a million files":
// the build's rendering step creates a page and an answer per profile). Prints the time of each
// tenth. Usage: node scripts/bench/create-files.ts DIR N [FOLDERS]; DIR must not exist; remove it after
// (on this machine's disk, deleting many files slows the next creations for minutes: disk.ts).
import fs from 'node:fs';
import path from 'node:path';

const [dir, nArg, foldersArg] = process.argv.slice(2);
const n = Number(nArg);
const folders = Number(foldersArg ?? 1);
if (!dir || !Number.isInteger(n) || n < 10 || !Number.isInteger(folders) || folders < 1 || fs.existsSync(dir)) {
  console.error('Usage: node scripts/bench/create-files.ts DIR N [FOLDERS]  (DIR must not exist; N at least 10)');
  process.exit(2);
}
const body = Buffer.alloc(1024, 'x');
for (let f = 0; f < folders; f++) fs.mkdirSync(path.join(dir, String(f)), { recursive: true });
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const tenths: string[] = [];
let last = t0;
for (let i = 0; i < n; i++) {
  fs.writeFileSync(path.join(dir, String(i % folders), `user${String(i).padStart(7, '0')}.html`), body);
  if ((i + 1) % Math.floor(n / 10) === 0 && tenths.length < 10) {
    const now = performance.now();
    tenths.push(((now - last) / 1000).toFixed(1));
    last = now;
  }
}
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(`${n.toLocaleString('en')} files in ${folders.toLocaleString('en')} folder(s): ${seconds.toFixed(1)} s (user ${(cpu.user / 1e6).toFixed(1)} s, system ${(cpu.system / 1e6).toFixed(1)} s), ${(seconds / n * 1e6).toFixed(1)} µs a file; each tenth ${tenths.join(', ')} s`);
