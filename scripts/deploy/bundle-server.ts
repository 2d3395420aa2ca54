// Usage: npm run bundle:server [-- --out <dir>]     (DIST_DIR: the build to take, default ./dist)
//
// Makes the folder the Docker image runs (scripts/deploy/Dockerfile copies it whole), so what the
// image holds is made and tested by the same code where Docker cannot run
// (test/scripts/bundle-server.test.ts):
//   <out>/server.mjs   src/server/main.ts and all it imports at run time (our modules and
//                      astro/zod, tree-shaken), bundled by esbuild into one JavaScript file that
//                      imports only Node's built-in modules: no node_modules, no type stripping.
//   <out>/dist/        the release DIST_DIR serves, as one plain folder: `client/` and
//                      `release.json`, all the server reads (`dist/server` is Astro's bundle and the
//                      next build's records); a layered release's files are copied from the releases
//                      it reads them from, so the folder is whole.
// Run it as `node --max-semi-space-size=16 --heap-growing-percent=25 server.mjs` in <out> (the flags
// of `npm run serve`), with DIST_DIR=<out>/dist. Exits 1, leaving no bundle, when the bundle would
// import a package or locate a file relative to itself (`import.meta`): neither is in the image.
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { ROOT } from '../support/serve-build.ts';
import { type Fail, failWith, parseCli, shownPath } from '../../src/cli.ts';
import { distDirFromEnv } from '../../src/config.ts';
import { buildLayout } from '../../src/release/layout.ts';
import { RELEASE_INFO_FILE, type ReleaseInfo } from '../../src/release/releases.ts';
import { locator, releaseFiles } from '../../src/release/layers.ts';

const SERVER_ENTRY = 'src/server/main.ts';
const BUNDLE_FILE = 'server.mjs';

const { values } = parseCli({
  name: 'bundle:server',
  usage: 'Usage: npm run bundle:server [-- --out <dir>]     (DIST_DIR: the build to take, default ./dist)',
  options: {
    out: { type: 'string', default: 'dist-server', value: '<dir>', help: 'the folder to make (replaced if this script made it); default dist-server' },
  },
  env: { DIST_DIR: 'the build whose served release is copied (default ./dist)' },
});
const fail: Fail = failWith('bundle:server');

const out = path.resolve(values.out);
const distDir = distDirFromEnv();
const bundleFile = path.join(out, BUNDLE_FILE);

// Replaced whole, but only a folder this script made: `--out .` must not empty the project.
if (fs.existsSync(out) && fs.readdirSync(out).length && !fs.existsSync(bundleFile)) {
  fail(1, `${out} exists and was not made by this script (no ${BUNDLE_FILE} in it): name a new or empty folder with --out`);
}
let releaseDir: string;
try {
  releaseDir = fs.realpathSync(distDir);
} catch {
  fail(1, `no build in ${distDir}`, 'run `npm run build` first (DIST_DIR names another build)');
}
const info = readInfo(releaseDir);
if (!info) fail(1, `${releaseDir} has no ${RELEASE_INFO_FILE}: it is not a build`, 'run `npm run build` first');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

// --- The bundle --------------------------------------------------------------------------------
const started = performance.now();
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: [SERVER_ENTRY],
  outfile: bundleFile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22.12',
  // Readable stack traces in the server's log; minifying saves bytes no one downloads.
  minify: false,
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
});
const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports);
const packages = [...new Set(imports.filter((i) => i.external && !builtins.has(i.path)).map((i) => i.path))];
const code = fs.readFileSync(bundleFile, 'utf8');
const problems = [
  ...packages.map((p) => `it imports \`${p}\`, which is not in the image (no node_modules)`),
  ...(code.includes('import.meta') ? ['it uses `import.meta` (a file located beside the module): the image has only the bundle'] : []),
];
if (problems.length) {
  fs.rmSync(out, { recursive: true, force: true });
  fail(1, `the bundle of ${SERVER_ENTRY} cannot run alone: ${problems.join('; ')}`, 'keep that import out of what the server imports at run time (`import type` is erased)');
}
const inputs = Object.keys(result.metafile.inputs);
const ours = inputs.filter((f) => f.startsWith('src/')).length;
const pkgs = new Set(inputs.filter((f) => f.includes('node_modules/')).map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)![1]));
console.log(`${shownPath(bundleFile)}: ${kB(code.length)} from ${ours} modules of src/ and ${inputs.length - ours} of ${[...pkgs].sort().join(', ')}, in ${((performance.now() - started) / 1000).toFixed(1)} s`);

// --- The release, whole --------------------------------------------------------------------------
const client = buildLayout(releaseDir).client;
const outDist = path.join(out, 'dist');
const outClient = buildLayout(outDist).client;
if (info.layers) {
  // Each file from the release that holds it (the server's own locator), so the copy is whole.
  const where = locator(path.dirname(releaseDir), client, info.layers);
  for (const file of releaseFiles(path.dirname(releaseDir), client, info.layers)) {
    const from = where(file);
    if (!from) continue;
    fs.mkdirSync(path.dirname(path.join(outClient, file)), { recursive: true });
    fs.copyFileSync(path.join(from, file), path.join(outClient, file));
  }
} else {
  fs.cpSync(client, outClient, { recursive: true });
}
const { layers: _whole, ...wholeInfo } = info;
fs.writeFileSync(path.join(outDist, RELEASE_INFO_FILE), `${JSON.stringify(wholeInfo)}\n`);
const { files, bytes } = sizeOf(outDist);
console.log(`${shownPath(outDist)}: release ${info.id}${info.layers ? ' (layered: made whole)' : ''}, ${files} files, ${(bytes / 1e6).toFixed(1)} MB`);

function readInfo(dir: string): ReleaseInfo | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, RELEASE_INFO_FILE), 'utf8')) as ReleaseInfo;
  } catch {
    return undefined;
  }
}

function kB(n: number) {
  return `${(n / 1000).toFixed(0)} kB`;
}

function sizeOf(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    files++;
    bytes += fs.statSync(path.join(e.parentPath, e.name)).size;
  }
  return { files, bytes };
}
