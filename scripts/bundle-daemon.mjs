// Bundles the compiled daemon (dist/daemon/main.js and everything it imports, node_modules included) into one file,
// dist/daemon/gantryd.mjs, which bin/gantryd.js loads. One file instead of about 1,500 modules: Node no longer
// resolves and reads a package.json per module at start (drizzle-orm alone is 444 files), which was most of the
// daemon's start time. better-sqlite3 stays outside (a native addon loaded from node_modules), and so does ssh2 (its
// optional native parts, cpu-features and sshcrypto.node, load from node_modules; the daemon imports it only after
// the HTTP port listens), and so does pg (loaded only by a daemon started with --database-url postgres://...), and so
// does undici (loaded at the first hook delivery or outgoing request: 0.7 MB of source a daemon without hooks never
// runs, held in memory for as long as it runs when bundled).
//
// The bundle is then written in Latin-1 only: V8 holds a script's source at one byte a character only when every
// character fits in one, and the 15 arrows and quotes of the web pages made the whole bundle (3.3 MB then) two bytes
// a character (the idle daemon's largest anonymous mapping: 6.3 MB; docs/benchmarks.md). esbuild escapes such characters everywhere but in tagged templates (an
// escape would change their .raw); the daemon's one tag of them, html`` (daemon/web/pages/html.ts), reads the cooked
// strings, where \uXXXX is the same character. test/unit/daemon-bundle.test.ts checks the built bundle.
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(root, 'dist/daemon/gantryd.mjs');
await build({
  entryPoints: [join(root, 'dist/daemon/main.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: ['better-sqlite3', 'ssh2', 'pg', 'undici'],
  sourcemap: 'linked',
  // Smaller text to read and parse at every start; identifiers are kept, so stack traces stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  // CommonJS dependencies call require(); an ES module bundle has none of its own.
  banner: { js: "import { createRequire as __gantryCreateRequire } from 'node:module'; const require = __gantryCreateRequire(import.meta.url);" },
});
const text = readFileSync(outfile, 'utf8');
writeFileSync(outfile, text.replace(/[^\x00-\xff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
