/**
 * The SSH server's host key: ed25519, generated on the first start into <data dir>/ssh_host_ed25519_key (mode 0600,
 * written durably) and read on every later start, so clients keep trusting the server across restarts.
 *
 * The key is made with node:crypto and written in OpenSSH's format here. ssh2's own generator
 * (utils.generateKeyPairSync('ed25519')) drops the leading zero bytes of the public key, so about one key in 256 came
 * out with a 31-byte public key that ssh2 itself then refuses ("Malformed OpenSSH private key"): SSH could not start,
 * on every start after. Such a stored key is repaired on load from its seed, so the server keeps its identity.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { syncDirSync } from '../durable-files.js';
import { WireReader } from '../services/keys/parse.js';

/** The host key file name under the data dir. */
export const HOST_KEY_FILE = 'ssh_host_ed25519_key';

const MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');
const KEY_TYPE = 'ssh-ed25519';
/** PKCS#8 DER of an ed25519 private key, before its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** An ed25519 key pair in OpenSSH's formats: the private key file and the `ssh-ed25519 AAAA...` public line. */
export interface OpenSshKeyPair {
  private: string;
  public: string;
}

function sshString(value: Buffer | string): Buffer {
  const body = typeof value === 'string' ? Buffer.from(value) : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
}

/** The 32-byte public key of an ed25519 seed. */
function publicOfSeed(seed: Buffer): Buffer {
  const key: KeyObject = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x as string, 'base64url');
}

/** The OpenSSH files of the ed25519 key with this 32-byte seed (unencrypted, as `ssh-keygen -t ed25519 -N ''`). */
export function openSshEd25519(seed: Buffer, comment = 'gantry'): OpenSshKeyPair {
  const pub = publicOfSeed(seed);
  const publicBlob = Buffer.concat([sshString(KEY_TYPE), sshString(pub)]);
  const check = randomBytes(4);
  let secret = Buffer.concat([check, check, sshString(KEY_TYPE), sshString(pub), sshString(Buffer.concat([seed, pub])), sshString(comment)]);
  // Padded with 1, 2, 3, ... to the cipher's block size (8 for "none").
  const pad = (8 - (secret.length % 8)) % 8;
  secret = Buffer.concat([secret, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([
    MAGIC,
    sshString('none'),
    sshString('none'),
    sshString(''),
    Buffer.from([0, 0, 0, 1]),
    sshString(publicBlob),
    sshString(secret),
  ]).toString('base64');
  const lines = body.match(/.{1,70}/g) ?? [];
  return {
    private: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`,
    public: `${KEY_TYPE} ${publicBlob.toString('base64')} ${comment}`,
  };
}

/** A new ed25519 key pair in OpenSSH's formats. */
export function generateOpenSshEd25519(comment = 'gantry'): OpenSshKeyPair {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return openSshEd25519(Buffer.from(jwk.d as string, 'base64url'), comment);
}

/**
 * The seed of an unencrypted OpenSSH ed25519 private key whose public key is not the 32 bytes its seed gives (what
 * ssh2's generator wrote for about one key in 256), or null when the key is anything else (a sound key, another type,
 * an encrypted one, not OpenSSH's format): those are used as they are.
 */
export function damagedEd25519Seed(pem: string): Buffer | null {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(pem);
  if (!m) return null;
  const data = Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
  if (!data.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const outer = new WireReader(data, MAGIC.length);
  const text = (r: WireReader) => r.string()?.toString('latin1') ?? null;
  if (text(outer) !== 'none' || text(outer) !== 'none' || outer.string() === null || outer.uint32() !== 1) return null;
  if (outer.string() === null) return null;
  const secret = outer.string();
  if (!secret) return null;
  const inner = new WireReader(secret, 8); // past the two check ints
  if (text(inner) !== KEY_TYPE) return null;
  const pub = inner.string();
  const priv = inner.string();
  if (!pub || !priv || priv.length < 32) return null;
  const seed = Buffer.from(priv.subarray(0, 32));
  const expected = publicOfSeed(seed);
  return pub.equals(expected) && priv.length === 64 && priv.subarray(32).equals(expected) ? null : seed;
}

/** Write `text` whole and durably under a new temporary name in the data dir (mode `mode` from the start). */
function writeTemp(dataDir: string, text: string, mode: number): string {
  const temp = join(dataDir, `.${HOST_KEY_FILE}-${randomBytes(6).toString('hex')}`);
  const fd = openSync(temp, 'wx', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}

/** Write `text` to `file` whole and durably (a temporary name first, then renamed over whatever is there). */
function writeWhole(dataDir: string, file: string, text: string, mode: number): void {
  renameSync(writeTemp(dataDir, text, mode), file);
}

/**
 * Put `text` at `file` whole and durably only if nothing is there yet: written under a temporary name, then
 * hard-linked to `file`, which fails when the name exists (atomic, as O_EXCL, on local filesystems and NFS alike).
 * False when another process created `file` first.
 */
function createWhole(dataDir: string, file: string, text: string, mode: number): boolean {
  const temp = writeTemp(dataDir, text, mode);
  try {
    linkSync(temp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkSync(temp);
  }
}

/**
 * The host private key in OpenSSH's format (as sshd's ssh_host_ed25519_key), created when missing together with the
 * public half in <file>.pub (for `ssh-keygen -lf` when a client asks whether the fingerprint is right). A stored key
 * damaged by ssh2's generator is rewritten from its seed (the same key, so clients' known_hosts still match it).
 *
 * Several daemons share one data dir (docs/design/postgres.md, "Several daemons") and must serve one key: when two
 * start at once on a data dir without a key, each generates one, but only the first to link its file in place wins;
 * the other reads the winner's key and serves that one.
 */
export function loadOrCreateHostKey(dataDir: string): string {
  const file = join(dataDir, HOST_KEY_FILE);
  for (;;) {
    let pem: string;
    try {
      pem = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      const pair = generateOpenSshEd25519();
      // Written whole under a temporary name, then linked: a crash never leaves half a key, a race never two.
      if (!createWhole(dataDir, file, pair.private, 0o600)) continue; // another daemon's key is there now: read it
      writeWhole(dataDir, `${file}.pub`, `${pair.public}\n`, 0o644);
      syncDirSync(dataDir);
      return pair.private;
    }
    // A key copied in with loose permissions is tightened: it is the server's identity.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    const seed = damagedEd25519Seed(pem);
    if (!seed) return pem;
    // Repaired from its seed: the same key whoever writes it, so two daemons repairing at once agree.
    const pair = openSshEd25519(seed);
    writeWhole(dataDir, file, pair.private, 0o600);
    writeWhole(dataDir, `${file}.pub`, `${pair.public}\n`, 0o644);
    syncDirSync(dataDir);
    return pair.private;
  }
}
