/**
 * Browser sessions of the OAuth pages: a random cookie value, stored hashed, ending after `session_expire_delay`. The
 * session is a row, so any daemon sharing the database serves the next page of a sign-in another one started.
 */
import type { AppContext } from '../../context.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { deleteOauthSession, insertOauthSession, userOfOauthSession } from '../../db/oauth.js';
import type { UserRow } from '../../db/schema.js';
import { hashToken, randomToken } from '../../secrets.js';
import { getSettings } from '../instance/settings.js';

/**
 * Start a session for `user`; returns the cookie value (shown only to the browser) and its expiry, or null when the
 * user was deleted meanwhile (nothing is written: the sign-in is refused as for an unknown user).
 */
export async function createSession(ctx: AppContext, user: UserRow): Promise<{ token: string; expiresAt: Date } | null> {
  const token = randomToken(43);
  const created = new Date();
  const expiresAt = new Date(created.getTime() + (await getSettings(ctx)).sessionExpireDelay * 60_000);
  try {
    // Ended sessions are dropped when a new one starts, so the table does not grow without bound.
    await ctx.data.transaction((tx) => insertOauthSession(tx, hashToken(token), user.id, created.toISOString(), expiresAt.toISOString()));
  } catch (e) {
    if (isForeignKeyViolation(e)) return null;
    throw e;
  }
  return { token, expiresAt };
}

/** The signed-in (active) user of a session cookie value, or null when unknown, ended or blocked. */
export async function sessionUser(ctx: AppContext, token: string | undefined): Promise<UserRow | null> {
  if (!token) return null;
  const user = await userOfOauthSession(ctx.data, hashToken(token), new Date().toISOString());
  return user && user.state === 'active' ? user : null;
}

/** End a session (sign-out). */
export async function deleteSession(ctx: AppContext, token: string | undefined): Promise<void> {
  if (token) await deleteOauthSession(ctx.data, hashToken(token));
}
