/** Row types of SSH keys and deploy-key links (migration 0024_keys.sql is the source of truth). */

/** A row of `keys`. */
export interface KeyRow {
  id: number;
  /** 'Key' for a user's key, 'DeployKey' for a deploy key (8.x single-table inheritance). */
  type: 'Key' | 'DeployKey';
  /** The owner of a user key; NULL for a deploy key. */
  userId: number | null;
  title: string;
  /** The public key line as stored: `<type> <base64>` (the comment kept as given). */
  key: string;
  /** ssh-rsa, ssh-ed25519, ecdsa-sha2-nistp256, ... */
  keyType: string;
  /** 8.x's fingerprint: MD5 of the blob, colon-separated lower-case hex. */
  fingerprint: string;
  /** OpenSSH's `SHA256:<unpadded base64>` of the blob; the SSH server's lookup key. */
  fingerprintSha256: string;
  canPush: boolean;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
