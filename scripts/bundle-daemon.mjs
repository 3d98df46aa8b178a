// Bundles the compiled daemon (dist/daemon/main.js and everything it imports, node_modules included) into one file,
// dist/daemon/gantryd.mjs, which bin/gantryd.js loads. One file instead of about 1,500 modules: Node no longer
// resolves and reads a package.json per module at start (drizzle-orm alone is 444 files), which was most of the
// daemon's start time. better-sqlite3 stays outside (a native addon loaded from node_modules), and so does ssh2 (its
// optional native parts, cpu-features and sshcrypto.node, load from node_modules; the daemon imports it only after
// the HTTP port listens), and so does pg (loaded only by a daemon started with --database-url postgres://...).
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  entryPoints: [join(root, 'dist/daemon/main.js')],
  outfile: join(root, 'dist/daemon/gantryd.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: ['better-sqlite3', 'ssh2', 'pg'],
  sourcemap: 'linked',
  // Smaller text to read and parse at every start; identifiers are kept, so stack traces stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  // CommonJS dependencies call require(); an ES module bundle has none of its own.
  banner: { js: "import { createRequire as __gantryCreateRequire } from 'node:module'; const require = __gantryCreateRequire(import.meta.url);" },
});
