/** Test helpers: real SSH key pairs made by OpenSSH's ssh-keygen, with the fingerprints ssh-keygen itself reports. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A generated key pair. */
export interface TestKeyPair {
  /** Path of the private key (mode 0600, no passphrase): for `ssh -i`. */
  privatePath: string;
  publicPath: string;
  /** The .pub line (type, base64, comment). */
  publicKey: string;
  /** `ssh-keygen -l -E md5` without its `MD5:` prefix (8.x's fingerprint). */
  md5: string;
  /** `ssh-keygen -l -E sha256`: `SHA256:...`. */
  sha256: string;
}

/** The fingerprint field of `ssh-keygen -l -E <hash> -f <file>`. */
function keygenFingerprint(file: string, hash: 'md5' | 'sha256'): string {
  const out = execFileSync('ssh-keygen', ['-l', '-E', hash, '-f', file], { encoding: 'utf8' });
  return out.split(' ')[1]!;
}

/** Generate a key pair with `ssh-keygen -t <type> [-b <bits>] -N '' -C <comment>` in a fresh temp dir. */
export function generateKeyPair(type: 'ed25519' | 'ecdsa' | 'rsa' | 'dsa', opts: { bits?: number; comment?: string } = {}): TestKeyPair {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-key-'));
  const privatePath = join(dir, `id_${type}`);
  const args = ['-q', '-t', type, '-N', '', '-C', opts.comment ?? `test-${type}@example`, '-f', privatePath];
  if (opts.bits) args.push('-b', String(opts.bits));
  execFileSync('ssh-keygen', args, { stdio: 'ignore' });
  const publicPath = `${privatePath}.pub`;
  return {
    privatePath,
    publicPath,
    publicKey: readFileSync(publicPath, 'utf8').trim(),
    md5: keygenFingerprint(publicPath, 'md5').replace(/^MD5:/, ''),
    sha256: keygenFingerprint(publicPath, 'sha256'),
  };
}
