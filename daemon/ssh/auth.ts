/**
 * SSH authentication: public keys only, for the user `git`. The presented key is looked up by its SHA256
 * fingerprint (a user's key or a deploy key); unknown keys, keys of blocked users and bad signatures are refused
 * here, before any session or git process exists.
 */
import type { AuthContext, utils } from 'ssh2';
import type { AppContext } from '../context.js';
import type { UserRow } from '../db/schema.js';
import { keyForSshAsync, sha256Fingerprint, touchKeyUsed, type SshKeyIdentity } from '../services/keys/index.js';
import type { GitCredential } from '../services/repository/git-access.js';

/** The only username accepted (as GitLab's and Gitea's `git@host`). */
export const SSH_USERNAME = 'git';

/** Who a connection authenticated as. */
export interface SshIdentity {
  keyId: number;
  fingerprint: string;
  /** The key's user; null for a deploy key. */
  user: UserRow | null;
  /** A deploy key's title (for the welcome line). */
  title: string;
}

/** The identity of a key fingerprint now, or null when it is unknown or its user is not active (data layer, either engine). */
export async function identityFor(ctx: AppContext, fingerprint: string): Promise<SshIdentity | null> {
  const found = await keyForSshAsync(ctx, fingerprint);
  if (!found) return null;
  if (found.user && found.user.state !== 'active') return null;
  return { keyId: found.key.id, fingerprint, user: found.user, title: found.key.title };
}

/**
 * The git credential of an identity, read again when a command runs (a key removed, a user blocked or a deploy key
 * disabled since the connection authenticated takes effect at once): a user's key acts as the user; a deploy key
 * reads the projects it is enabled on, and never pushes (8.x CE deploy keys are read-only). Null: no longer valid.
 */
export async function credentialFor(ctx: AppContext, identity: SshIdentity): Promise<GitCredential | null> {
  return credentialOf(identity, await keyForSshAsync(ctx, identity.fingerprint));
}

function credentialOf(identity: SshIdentity, found: SshKeyIdentity | null): GitCredential | null {
  if (!found || found.key.id !== identity.keyId) return null;
  if (found.user) return found.user.state === 'active' ? { user: found.user } : null;
  return { user: null, readOnly: true, projectIds: found.deployProjectIds };
}

/**
 * Answer one authentication request: a query for a key ("would you take this one?") is accepted when the key is
 * known; a signed request is accepted when, besides, the signature verifies. `accepted` receives the identity. The
 * lookup is awaited (ssh2 holds later requests of the connection until this one is answered); it never rejects: a
 * failed lookup (a busy database) refuses the attempt and is logged through `failed`.
 */
export async function authenticateKey(
  ctx: AppContext, auth: AuthContext, parseKey: typeof utils.parseKey, accepted: (identity: SshIdentity) => void,
  failed: (e: unknown) => void = () => undefined,
): Promise<void> {
  try {
    if (auth.method !== 'publickey' || auth.username !== SSH_USERNAME) return auth.reject(['publickey']);
    const identity = await identityFor(ctx, sha256Fingerprint(auth.key.data));
    if (!identity) return auth.reject(['publickey']);
    if (!auth.signature || !auth.blob) return auth.accept();
    let valid = false;
    try {
      const key = parseKey(auth.key.data);
      valid = !(key instanceof Error) && key.verify(auth.blob, auth.signature, auth.hashAlgo) === true;
    } catch {
      valid = false; // a malformed key or signature is a refusal, not an error
    }
    if (!valid) return auth.reject(['publickey']);
    void touchKeyUsed(ctx, identity.keyId);
    accepted(identity);
    auth.accept();
  } catch (e) {
    failed(e);
    try {
      auth.reject(['publickey']);
    } catch {
      // the connection is gone already
    }
  }
}
