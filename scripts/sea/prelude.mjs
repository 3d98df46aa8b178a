// First module of every single-file executable (scripts/build-sea.mjs): before any of Gantry's modules runs, the files
// they read from disk beside their code (SQL migrations, stylesheets, package.json, the pre-receive hook, jq's and
// SPDX's data) are written once from the executable's assets into a cache folder laid out like the installed package,
// and import.meta.url, which the build replaces by globalThis.__gantrySeaUrl, points into that folder, so the modules
// find their files exactly as they do under dist/. A folder per content hash: a new build never reads an old one's.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { getAsset, getRawAsset } from 'node:sea';
import { pathToFileURL } from 'node:url';

/** The tree's manifest (written by the build): its hash, its files, and the file import.meta.url stands for. */
const tree = JSON.parse(getAsset('tree.json', 'utf8'));

/** Where extracted trees go: $GANTRY_SEA_CACHE, else $XDG_CACHE_HOME/gantry or ~/.cache/gantry, else the temp dir. */
function cacheCandidates() {
  const out = [];
  if (process.env.GANTRY_SEA_CACHE) out.push(process.env.GANTRY_SEA_CACHE);
  const home = process.env.HOME || safe(() => homedir());
  if (process.env.XDG_CACHE_HOME) out.push(join(process.env.XDG_CACHE_HOME, 'gantry'));
  else if (home) out.push(join(home, '.cache', 'gantry'));
  out.push(join(tmpdir(), `gantry-${safe(() => userInfo().uid) ?? 'user'}`));
  return out;
}

function safe(f) {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** Write the tree into <base>/sea-<hash> (whole or not at all: a temporary folder, renamed) unless it is there. */
function extractInto(base) {
  const dir = join(base, `sea-${tree.hash}`);
  if (existsSync(join(dir, '.complete'))) return dir;
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const temp = join(base, `.sea-${tree.hash}-${randomBytes(6).toString('hex')}`);
  try {
    for (const file of tree.files) {
      const to = join(temp, file.path);
      mkdirSync(dirname(to), { recursive: true });
      const bytes = Buffer.from(getRawAsset(file.path));
      if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) throw new Error(`asset ${file.path} is damaged`);
      writeFileSync(to, bytes, { mode: file.mode });
    }
    writeFileSync(join(temp, '.complete'), '');
    try {
      renameSync(temp, dir);
    } catch (e) {
      // Another process extracted the same tree first: use its copy.
      if (!existsSync(join(dir, '.complete'))) throw e;
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return dir;
}

function extract() {
  const errors = [];
  for (const base of cacheCandidates()) {
    try {
      return extractInto(base);
    } catch (e) {
      errors.push(`${base}: ${e.message}`);
    }
  }
  process.stderr.write(`gantry: cannot unpack this program's files (set GANTRY_SEA_CACHE to a writable folder):\n  ${errors.join('\n  ')}\n`);
  process.exit(70);
}

const root = extract();
/** The package folder the executable's files were unpacked to. */
export const seaRoot = root;
globalThis.__gantrySeaUrl = pathToFileURL(join(root, tree.entry)).href;
