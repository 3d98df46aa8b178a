/** Browser sessions of the OAuth pages: a random cookie value, stored hashed, ending after `session_expire_delay`. */
import { and, eq, gt, lte } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { users, type UserRow } from '../../db/schema.js';
import { oauthSessions } from '../../db/schema-oauth.js';
import { hashToken, randomToken } from '../../secrets.js';
import { getSettings } from '../settings.js';

/** Start a session for `user`; returns the cookie value (shown only to the browser) and its expiry. */
export function createSession(ctx: AppContext, user: UserRow): { token: string; expiresAt: Date } {
  const token = randomToken(43);
  const created = new Date();
  const expiresAt = new Date(created.getTime() + getSettings(ctx).sessionExpireDelay * 60_000);
  ctx.db.transaction((tx) => {
    // Ended sessions are dropped when a new one starts, so the table does not grow without bound.
    tx.delete(oauthSessions).where(lte(oauthSessions.expiresAt, created.toISOString())).run();
    tx.insert(oauthSessions).values({ tokenHash: hashToken(token), userId: user.id, createdAt: created.toISOString(), expiresAt: expiresAt.toISOString() }).run();
  });
  return { token, expiresAt };
}

/** The signed-in (active) user of a session cookie value, or null when unknown, ended or blocked. */
export function sessionUser(ctx: AppContext, token: string | undefined): UserRow | null {
  if (!token) return null;
  const row = ctx.db.select({ user: users }).from(oauthSessions).innerJoin(users, eq(users.id, oauthSessions.userId))
    .where(and(eq(oauthSessions.tokenHash, hashToken(token)), gt(oauthSessions.expiresAt, new Date().toISOString()))).get();
  return row && row.user.state === 'active' ? row.user : null;
}

/** End a session (sign-out). */
export function deleteSession(ctx: AppContext, token: string | undefined): void {
  if (token) ctx.db.delete(oauthSessions).where(eq(oauthSessions.tokenHash, hashToken(token))).run();
}
