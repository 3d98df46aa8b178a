// Bundles the compiled CLI (dist/cli/main.js) and runner agent (dist/runner-agent/main.js) with everything they import,
// node_modules included, into dist/bundle/ (gantry.mjs, gantry-runner.mjs and shared chunks), which bin/gantry.js and
// bin/gantry-runner.js load. One file per program instead of hundreds of modules, each resolved and read at every
// start: commander, undici and the rest cost most of a command's time before its first request. What only some
// commands need (ink and react for live views, ws for trace streams) is imported dynamically and lands in chunks of
// its own, read only by those commands.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Chunk names carry content hashes: start empty so no stale chunk stays behind.
rmSync(join(root, 'dist/bundle'), { recursive: true, force: true });
await build({
  entryPoints: { gantry: join(root, 'dist/cli/main.js'), 'gantry-runner': join(root, 'dist/runner-agent/main.js') },
  outdir: join(root, 'dist/bundle'),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  // react-devtools-core is an optional import of ink, never installed.
  external: ['react-devtools-core'],
  // CommonJS dependencies call require(); an ES module bundle has none of its own.
  banner: { js: "import { createRequire as __gantryCreateRequire } from 'node:module'; const require = __gantryCreateRequire(import.meta.url);" },
});
