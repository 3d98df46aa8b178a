/**
 * The SSH server's host key: ed25519, generated on the first start into <data dir>/ssh_host_ed25519_key (mode 0600,
 * written durably) and read on every later start, so clients keep trusting the server across restarts.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { syncDirSync } from '../durable-files.js';

/** The host key file name under the data dir. */
export const HOST_KEY_FILE = 'ssh_host_ed25519_key';

/** A new key pair in OpenSSH's formats (ssh2's utils.generateKeyPairSync('ed25519'); node:crypto cannot write them). */
export type KeyPairGenerator = () => { private: string; public: string };

/**
 * The host private key in OpenSSH's format (as sshd's ssh_host_ed25519_key), created when missing together with the
 * public half in <file>.pub (for `ssh-keygen -lf` when a client asks whether the fingerprint is right).
 */
export function loadOrCreateHostKey(dataDir: string, generate: KeyPairGenerator): string {
  const file = join(dataDir, HOST_KEY_FILE);
  try {
    const pem = readFileSync(file, 'utf8');
    // A key copied in with loose permissions is tightened: it is the server's identity.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return pem;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const pair = generate();
  const pem = pair.private;
  // Written whole under a temporary name (mode 0600 from the start), then renamed: a crash never leaves half a key.
  const temp = join(dataDir, `.${HOST_KEY_FILE}-${randomBytes(6).toString('hex')}`);
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, pem);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  writeFileSync(`${file}.pub`, `${pair.public.trim()} gantry\n`, { mode: 0o644 });
  syncDirSync(dataDir);
  return pem;
}
