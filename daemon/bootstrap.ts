/** First-start work: the data dir layout, the server secret, the settings row and the root user. */
import { constants, existsSync, mkdirSync, readFileSync, writeFileSync, accessSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { count } from 'drizzle-orm';
import type { AppContext } from './context.js';
import { users } from './db/schema.js';
import { ConfigError } from './config.js';
import { Secrets, randomToken } from './secrets.js';
import { ensureSettings } from './services/settings.js';
import { createUser } from './services/users.js';

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

/** Load the server secret (data dir `secret_key`, mode 0600), creating it on first start. */
export function loadSecrets(dataDir: string): Secrets {
  const file = join(dataDir, 'secret_key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(64).toString('base64'), { mode: 0o600, flag: 'wx' });
  return new Secrets(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
}

/**
 * Create the settings row and, when the database has no users, the root administrator. Returns the generated
 * root password when one had to be made (it is also written to `initial_root_password`, mode 0600).
 */
export async function bootstrap(ctx: AppContext): Promise<{ generatedPassword: string | null }> {
  ensureSettings(ctx);
  const n = ctx.db.select({ n: count() }).from(users).get()!.n;
  if (n > 0) return { generatedPassword: null };
  const password = ctx.config.rootPassword ?? randomToken(20);
  if (password.length < 8) throw new ConfigError('the root password must have at least 8 characters (--root-password / GANTRY_ROOT_PASSWORD)');
  await createUser(ctx, {
    username: 'root', email: 'admin@example.com', name: 'Administrator', password, admin: true, projects_limit: 100000, can_create_group: true,
  });
  if (ctx.config.rootPassword) return { generatedPassword: null };
  writeFileSync(join(ctx.paths.data, 'initial_root_password'), `${password}\n`, { mode: 0o600 });
  return { generatedPassword: password };
}
