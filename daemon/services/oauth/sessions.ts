/**
 * Browser sessions of the OAuth pages: a random cookie value, stored hashed, ending after `session_expire_delay`. The
 * session is a row, so any daemon sharing the database serves the next page of a sign-in another one started.
 */
import type { AppContext } from '../../context.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { toUser } from '../../db/rows.js';
import type { UserRow } from '../../db/schema.js';
import { hashToken, randomToken } from '../../secrets.js';
import { getSettings } from '../settings.js';

/**
 * Start a session for `user`; returns the cookie value (shown only to the browser) and its expiry, or null when the
 * user was deleted meanwhile (nothing is written: the sign-in is refused as for an unknown user).
 */
export async function createSession(ctx: AppContext, user: UserRow): Promise<{ token: string; expiresAt: Date } | null> {
  const token = randomToken(43);
  const created = new Date();
  const expiresAt = new Date(created.getTime() + (await getSettings(ctx)).sessionExpireDelay * 60_000);
  try {
    await ctx.data.transaction(async (tx) => {
      // Ended sessions are dropped when a new one starts, so the table does not grow without bound.
      await tx.run('DELETE FROM oauth_sessions WHERE expires_at <= ?', [created.toISOString()]);
      await tx.run('INSERT INTO oauth_sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)', [
        hashToken(token), user.id, created.toISOString(), expiresAt.toISOString(),
      ]);
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) return null;
    throw e;
  }
  return { token, expiresAt };
}

/** The signed-in (active) user of a session cookie value, or null when unknown, ended or blocked. */
export async function sessionUser(ctx: AppContext, token: string | undefined): Promise<UserRow | null> {
  if (!token) return null;
  const row = await ctx.data.get(
    'SELECT u.* FROM oauth_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.expires_at > ?',
    [hashToken(token), new Date().toISOString()],
  );
  const user = row ? toUser(row) : null;
  return user && user.state === 'active' ? user : null;
}

/** End a session (sign-out). */
export async function deleteSession(ctx: AppContext, token: string | undefined): Promise<void> {
  if (token) await ctx.data.run('DELETE FROM oauth_sessions WHERE token_hash = ?', [hashToken(token)]);
}
