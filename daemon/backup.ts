/**
 * `gantryd backup <dir>` (README "Backup and restore"): a consistent copy of a data directory, taken while gantryd runs.
 *
 * 1. The SQLite database first, through SQLite's online backup API (better-sqlite3's `backup()`): a snapshot of one
 *    moment, writes going on meanwhile. On PostgreSQL the database is not copied: pg_dump, run BEFORE this command,
 *    takes it (the README says how).
 * 2. Then the files: repositories, uploads, artifacts, traces, the server secret, the SSH host key, gantry.yml. Taken
 *    after the database, they hold at least what the snapshot refers to (gantryd writes a file before the row naming
 *    it, and a push's objects and refs before its rows). A repository is copied refs first, objects after: every ref
 *    copied names objects that already existed; then `git fsck --connectivity-only` checks the copy and it is copied
 *    again if a repack removed a pack file in between.
 * 3. Not copied: the daemon's own files (pid, URL, SSH address, log, run/ markers) and SQLite's WAL and journal, which
 *    the snapshot already contains.
 *
 * Restoring is copying the backup to a data directory and starting gantryd there (migrations run at start).
 */
import BetterSqlite from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { Command } from 'commander';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, statSync, symlinkSync, rmSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { ConfigError, loadConfig } from './config.js';

/** What is left out of a backup (top-level names of the data directory). */
const SKIPPED = new Set([
  'gantry.db', 'gantry.db-wal', 'gantry.db-shm', 'gantry.db-journal', 'gantryd.pid', 'gantryd.url', 'gantryd.ssh', 'gantryd.log', 'run',
]);

/** What a backup copied. */
export interface BackupResult {
  database: 'sqlite' | 'postgresql';
  repositories: number;
  files: number;
  bytes: number;
}

/** A backup problem reported to the person running it (one line). */
export class BackupError extends Error {}

/** Copy `dataDir` (its SQLite database by the online backup API, then its files) into the new directory `to`. */
export async function backup(opts: { dataDir: string; to: string; databaseUrl: string | null }): Promise<BackupResult> {
  const { dataDir, to } = opts;
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) throw new BackupError(`${dataDir} does not exist; name the data directory with --data-dir`);
  const inside = relative(dataDir, to);
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) {
    throw new BackupError(`${to} is inside the data directory ${dataDir}; back up to a directory outside it`);
  }
  if (existsSync(to) && (!statSync(to).isDirectory() || readdirSync(to).length > 0)) {
    throw new BackupError(`${to} already exists and is not an empty directory; name a new directory`);
  }
  const sqlite = opts.databaseUrl === null;
  if (sqlite && !existsSync(join(dataDir, 'gantry.db'))) {
    throw new BackupError(`${dataDir} has no SQLite database (gantry.db); is it a Gantry data directory? (on PostgreSQL, give --database-url)`);
  }
  mkdirSync(to, { recursive: true, mode: 0o700 });
  const result: BackupResult = { database: sqlite ? 'sqlite' : 'postgresql', repositories: 0, files: 0, bytes: 0 };
  try {
    if (sqlite) {
      const db = new BetterSqlite(join(dataDir, 'gantry.db'), { readonly: true, fileMustExist: true });
      try {
        await db.backup(join(to, 'gantry.db'));
      } finally {
        db.close();
      }
      chmodSync(join(to, 'gantry.db'), 0o600);
      const copy = new BetterSqlite(join(to, 'gantry.db'));
      try {
        const check = copy.pragma('quick_check', { simple: true });
        if (check !== 'ok') throw new BackupError(`the copied database fails SQLite's quick_check: ${String(check)}`);
      } finally {
        copy.close();
      }
      result.files++;
      result.bytes += statSync(join(to, 'gantry.db')).size;
    }
    for (const name of readdirSync(dataDir)) {
      if (SKIPPED.has(name) || /^secret_key\.\d+\./.test(name)) continue;
      if (name === 'repositories' && lstatSync(join(dataDir, name)).isDirectory()) copyRepositories(join(dataDir, name), join(to, name), result);
      else copyTree(join(dataDir, name), join(to, name), result);
    }
  } catch (e) {
    rmSync(to, { recursive: true, force: true });
    throw e;
  }
  return result;
}

/** Copy the repositories directory: each `*.git` repository refs first, checked, and copied again if it changed. */
function copyRepositories(from: string, to: string, result: BackupResult): void {
  mkdirSync(to, { recursive: true, mode: statSync(from).mode & 0o7777 });
  for (const name of readdirSync(from)) {
    const src = join(from, name);
    if (!name.endsWith('.git') || !lstatSync(src).isDirectory()) {
      copyTree(src, join(to, name), result);
      continue;
    }
    for (let attempt = 1; ; attempt++) {
      const counted: BackupResult = { ...result };
      rmSync(join(to, name), { recursive: true, force: true });
      mkdirSync(join(to, name), { mode: statSync(src).mode & 0o7777 });
      const entries = readdirSync(src);
      for (const entry of entries.filter((e) => e !== 'objects')) copyTree(join(src, entry), join(to, name, entry), counted);
      if (entries.includes('objects')) copyTree(join(src, 'objects'), join(to, name, 'objects'), counted);
      const fsck = spawnSync('git', ['--git-dir', join(to, name), 'fsck', '--connectivity-only', '--no-dangling', '--no-progress'], { encoding: 'utf8' });
      if (fsck.status === 0) {
        Object.assign(result, counted);
        result.repositories++;
        break;
      }
      if (attempt === 3) throw new BackupError(`repository ${src} changed under three copies in a row (git fsck: ${fsck.stderr.trim().split('\n')[0]}); try again`);
    }
  }
}

/** Copy a file, symlink or directory tree, modes kept; what vanishes meanwhile (a trace or an artifact removed) is skipped. */
function copyTree(from: string, to: string, result: BackupResult): void {
  let stat;
  try {
    stat = lstatSync(from);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    if (stat.isSymbolicLink()) {
      symlinkSync(readlinkSync(from), to);
    } else if (stat.isDirectory()) {
      mkdirSync(to, { mode: stat.mode & 0o7777 });
      for (const name of readdirSync(from)) copyTree(join(from, name), join(to, name), result);
    } else if (stat.isFile()) {
      copyFileSync(from, to);
      chmodSync(to, stat.mode & 0o7777);
      result.files++;
      result.bytes += stat.size;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** The `gantryd backup <dir>` command line. */
export async function backupCommand(args: string[]): Promise<void> {
  const program = new Command('gantryd backup')
    .description('copy a data directory (the SQLite database by its online backup, then repositories, uploads, artifacts, ' +
      'traces and keys) into a new directory while gantryd runs; restore by starting gantryd on a copy of it')
    .argument('<dir>', 'the new directory to write (must not exist or be empty, outside the data directory)')
    .option('--data-dir <dir>', 'the data directory (GANTRY_DATA_DIR, default ~/.local/share/gantry)')
    .option('--config <file>', 'the config file gantryd runs with (GANTRY_CONFIG), for its data-dir and database-url')
    .option('--database-url <url>', 'the PostgreSQL database gantryd runs on (GANTRY_DATABASE_URL): its files are copied, not the database')
    .addHelpText('after', '\nOn PostgreSQL, dump the database first, then copy the files:\n' +
      '  pg_dump --format=custom --file=gantry.pgdump "$GANTRY_DATABASE_URL" && gantryd backup <dir>\n' +
      'README "Backup and restore".\n')
    .parse(args, { from: 'user' });
  const flags = program.opts<{ dataDir?: string; config?: string; databaseUrl?: string }>();
  const fail = (message: string): never => {
    process.stderr.write(`gantryd: ${message}\n`);
    process.exit(1);
  };
  let config;
  try {
    config = loadConfig(flags).config;
  } catch (e) {
    if (e instanceof ConfigError) return fail(e.message);
    throw e;
  }
  const to = resolve(program.args[0]!);
  let result: BackupResult;
  try {
    result = await backup({ dataDir: config.dataDir, to, databaseUrl: config.databaseUrl });
  } catch (e) {
    return fail(e instanceof BackupError ? e.message : `backup failed: ${(e as Error).message}`);
  }
  const mb = (result.bytes / 1024 / 1024).toFixed(1);
  process.stdout.write(
    `gantryd backup: ${config.dataDir} -> ${to}: ${result.database === 'sqlite' ? 'the SQLite database, ' : ''}` +
      `${result.repositories} repositories, ${result.files} files, ${mb} MB\n` +
      (result.database === 'postgresql'
        ? 'The database is PostgreSQL and was not copied: keep the pg_dump taken before this backup with it (README "Backup and restore").\n'
        : '') +
      `Restore: stop gantryd, copy ${to} to a data directory (cp -a), start gantryd with --data-dir on it.\n`,
  );
}
