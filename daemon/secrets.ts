/**
 * Secrets at rest. Tokens are stored only as SHA-256 hashes; passwords with scrypt. Tokens that must be shown
 * again (a user's private token on POST /session, a project's runners token) are derived from the server secret
 * (a file in the data dir, mode 0600) and a per-row salt, so the database alone never reveals them.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1 };
/** scrypt's N for new hashes: SCRYPT.N, unless the tests lowered it (setPasswordHashCostForTests). */
let hashN = SCRYPT.N;

/**
 * For the tests' in-process servers only (test/helpers/app.ts; nothing in the daemon calls it): hash new passwords
 * with scrypt's N = `n` (a power of two, at most 16384), as GitLab's test environment lowers Devise's stretches. A
 * hash made so records its N (`scrypt$<salt>$<hash>$<N>`), so any process verifies it; hashes at the full cost keep
 * the three-part form. Returns the N it replaces.
 */
export function setPasswordHashCostForTests(n: number): number {
  if (!validN(n)) throw new Error(`scrypt N must be a power of two from 2 to ${SCRYPT.N}: ${n}`);
  const before = hashN;
  hashN = n;
  return before;
}

function validN(n: number): boolean {
  return Number.isInteger(n) && n >= 2 && n <= SCRYPT.N && (n & (n - 1)) === 0;
}

/** A new random token of 20 URL-safe characters (about 120 bits). */
export function randomToken(length = 20): string {
  return randomBytes(Math.ceil((length * 3) / 4) + 2).toString('base64url').slice(0, length);
}

/** SHA-256 hex of a token: the only form in which tokens are stored. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Recent tokens' hashes: hashing is a measurable part of a cached request, and the same few tokens come back. */
const recentHashes = new Map<string, string>();

/** hashToken for a token presented by a request (private, personal or OAuth access token), remembered for the next 1000. */
export function hashRecentToken(token: string): string {
  let h = recentHashes.get(token);
  if (h === undefined) {
    h = hashToken(token);
    if (recentHashes.size >= 1000) recentHashes.delete(recentHashes.keys().next().value as string);
    recentHashes.set(token, h);
  }
  return h;
}

/** scrypt hash of a password, as `scrypt$<salt>$<hash>` (with `$<N>` after it at a test's lower cost). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const n = hashN;
  const hash = await scryptAsync(password, salt, 32, { ...SCRYPT, N: n });
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}${n === SCRYPT.N ? '' : `$${n}`}`;
}

/** Constant-time check of a password against its stored scrypt hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, saltText, hashText, nText, extra] = stored.split('$');
  if (kind !== 'scrypt' || !saltText || !hashText || extra !== undefined) return false;
  // (a fourth field: the N of a hash made by the tests at a lower cost, see setPasswordHashCostForTests)
  const n = nText === undefined ? SCRYPT.N : /^\d+$/.test(nText) ? Number(nText) : NaN;
  if (!validN(n)) return false;
  const expected = Buffer.from(hashText, 'base64');
  if (expected.length < 16) return false; // a damaged record never matches
  const actual = await scryptAsync(password, Buffer.from(saltText, 'base64'), expected.length, { ...SCRYPT, N: n });
  return timingSafeEqual(actual, expected);
}

/** The server secret and what is derived from it. */
export class Secrets {
  /** Derived tokens by purpose, salt and length: presenters derive on every request (runners_token, private_token). */
  private readonly derived = new Map<string, string>();

  constructor(private readonly key: Buffer) {}

  /** Derive a stable token for a purpose and salt (e.g. `private`, user salt). */
  derive(purpose: string, salt: string, length = 20): string {
    const memo = `${purpose}:${salt}:${length}`;
    let token = this.derived.get(memo);
    if (token === undefined) {
      token = createHmac('sha256', this.key).update(`${purpose}:${salt}`).digest('base64url').slice(0, length);
      if (this.derived.size >= 10_000) this.derived.clear();
      this.derived.set(memo, token);
    }
    return token;
  }

  /**
   * A stable UUID for a purpose and salt (RFC 9562 version 8, from the HMAC of the server secret): the same on every
   * call and after a restart, unguessable without the secret. Not memoized (callers ask once per object).
   */
  uuid(purpose: string, salt: string): string {
    const h = createHmac('sha256', this.key).update(`uuid:${purpose}:${salt}`).digest();
    h[6] = (h[6] & 0x0f) | 0x80; // version 8
    h[8] = (h[8] & 0x3f) | 0x80; // variant 10
    const x = h.subarray(0, 16).toString('hex');
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
  }

  /** Encrypt a short text with AES-256-GCM (for values an admin must be able to read back). */
  seal(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key.subarray(0, 32), iv);
    const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${data.toString('base64url')}`;
  }

  /** Decrypt a value made by seal(). */
  open(sealed: string): string {
    const [v, iv, tag, data] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key.subarray(0, 32), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
