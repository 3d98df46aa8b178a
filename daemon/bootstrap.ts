/** First-start work: the data dir layout, the server secret, the settings row and the root user. */
import { constants, existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync, accessSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AppContext } from './context.js';
import { ConfigError } from './config.js';
import { Secrets, randomToken } from './secrets.js';
import { ensureSettings } from './services/instance/settings.js';
import { createUser } from './services/users/users.js';
import { anyUserExists, usernameExists } from './db/users.js';

/** Create the data dir layout and check it is writable; a clear ConfigError otherwise. */
export function prepareDataDir(paths: AppContext['paths']): void {
  try {
    for (const dir of Object.values(paths)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(paths.data, constants.W_OK);
  } catch (e) {
    throw new ConfigError(
      `cannot use data dir ${paths.data}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; ` +
        'choose a writable directory with --data-dir or GANTRY_DATA_DIR',
    );
  }
}

/**
 * Load the server secret (data dir `secret_key`, mode 0600), creating it on first start. Several daemons may start at
 * once on one shared data dir (PostgreSQL): the secret is written whole to a file of its own, then linked into place,
 * which fails for all but the first; every daemon then reads the one that won.
 */
export function loadSecrets(dataDir: string): Secrets {
  const file = join(dataDir, 'secret_key');
  if (!existsSync(file)) {
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, randomBytes(64).toString('base64'), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(draft);
    }
  }
  return new Secrets(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
}

/**
 * Create the settings row and, when the database has no users, the root administrator. Returns the generated
 * root password when one had to be made (it is also written to `initial_root_password`, mode 0600).
 * Through ctx.data on both engines; on PostgreSQL several daemons may start at once on an empty database: the one
 * that loses the race for the root user (a unique violation) leaves it to the winner.
 */
export async function bootstrap(ctx: AppContext): Promise<{ generatedPassword: string | null }> {
  await ensureSettings(ctx);
  if (await anyUserExists(ctx.data)) return { generatedPassword: null };
  const password = ctx.config.rootPassword ?? randomToken(20);
  if (password.length < 8) throw new ConfigError('the root password must have at least 8 characters (--root-password / GANTRY_ROOT_PASSWORD)');
  if (!(await createRoot(ctx, password))) return { generatedPassword: null };
  if (ctx.config.rootPassword) return { generatedPassword: null };
  writeFileSync(join(ctx.paths.data, 'initial_root_password'), `${password}\n`, { mode: 0o600 });
  return { generatedPassword: password };
}

/**
 * The root administrator (createUser, as any user is made). False when another daemon starting at the same moment on
 * the same empty database (PostgreSQL) created it first: the loser's createUser then fails on the taken username.
 */
async function createRoot(ctx: AppContext, password: string): Promise<boolean> {
  try {
    await createUser(ctx, {
      username: 'root', email: 'admin@example.com', name: 'Administrator', password, admin: true, projects_limit: 100000, can_create_group: true,
    });
    return true;
  } catch (e) {
    if (await usernameExists(ctx.data, 'root')) return false;
    throw e;
  }
}
