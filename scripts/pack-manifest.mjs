// `npm pack` runs this twice (the prepack and postpack scripts in package.json): `strip` before the tarball is made,
// `restore` after. A clone needs `prepare` (npm install builds dist/ with it); the tarball carries dist/ already, and
// npm 12 counts `prepare` of a tarball or directory install as an install script, blocked and listed in a notice
// after `npm install -g gantry-<version>.tgz`. So the packed package.json leaves it out: the original is kept
// in package.json.packing while the tarball is made and put back afterwards (or by the next `strip`, should a pack
// have failed in between).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const saved = join(root, 'package.json.packing');

function restore() {
  if (existsSync(saved)) renameSync(saved, manifest);
}

const action = process.argv[2];
if (action === 'strip') {
  restore();
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  writeFileSync(saved, text);
  // Only what runs at install time goes: `start` and the rest are harmless in an installed package.
  delete pkg.scripts.prepare;
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (action === 'restore') {
  restore();
} else {
  process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
  process.exit(2);
}
