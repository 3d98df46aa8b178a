import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import ssh2, { type ParsedKey } from 'ssh2';
import { damagedEd25519Seed, generateOpenSshEd25519, HOST_KEY_FILE, loadOrCreateHostKey, openSshEd25519 } from '../../daemon/ssh/host-key.js';

const { utils } = ssh2;
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'gantry-hostkey-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A key as ssh2's generator writes it when the public key starts with a zero byte: that byte dropped (31 bytes). */
function ssh2DamagedKey(): string {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (utils.parseKey(pair.private) instanceof Error) return pair.private;
  }
}

/** The public line `ssh-keygen -y` derives from a private key file. */
function sshKeygenPublic(file: string): string {
  return execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim().split(' ').slice(0, 2).join(' ');
}

describe('SSH host key', () => {
  it('every generated key parses in ssh2 and OpenSSH, public half included (ssh2 generator broke 1 in 256)', () => {
    for (let i = 0; i < 3000; i++) {
      const pair = generateOpenSshEd25519();
      const parsed = utils.parseKey(pair.private);
      expect(parsed).not.toBeInstanceOf(Error);
      const key = parsed as ParsedKey;
      expect(key.type).toBe('ssh-ed25519');
      expect(`ssh-ed25519 ${key.getPublicSSH().toString('base64')}`).toBe(pair.public.split(' ').slice(0, 2).join(' '));
      // It signs, and the signature checks out with the public half.
      const data = Buffer.from(`gantry ${i}`);
      expect(key.verify(data, key.sign(data) as Buffer)).toBe(true);
    }
    const dir = tempDir();
    for (let i = 0; i < 5; i++) {
      const pair = generateOpenSshEd25519();
      const file = join(dir, `k${i}`);
      writeFileSync(file, pair.private, { mode: 0o600 });
      expect(sshKeygenPublic(file)).toBe(pair.public.split(' ').slice(0, 2).join(' '));
    }
  });

  it('a seed whose public key starts with zero bytes still gives a 32-byte public key', () => {
    // Find a seed whose public key starts with 0x00 (about 1 in 256) and check the written key is sound.
    for (let i = 0; ; i++) {
      const seed = Buffer.alloc(32);
      seed.writeUInt32BE(i);
      const pair = openSshEd25519(seed);
      const blob = Buffer.from(pair.public.split(' ')[1], 'base64');
      const pub = blob.subarray(blob.length - 32);
      expect(blob.readUInt32BE(blob.length - 36)).toBe(32);
      if (pub[0] !== 0) continue;
      expect(utils.parseKey(pair.private)).not.toBeInstanceOf(Error);
      expect(damagedEd25519Seed(pair.private)).toBeNull();
      break;
    }
  });

  it('is created once with mode 0600 and its .pub, then read back unchanged', () => {
    const dir = tempDir();
    const first = loadOrCreateHostKey(dir);
    const file = join(dir, HOST_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(first);
    expect(loadOrCreateHostKey(dir)).toBe(first);
    expect(readFileSync(`${file}.pub`, 'utf8').trim()).toMatch(/^ssh-ed25519 \S+ gantry$/);
    expect(sshKeygenPublic(file)).toBe(readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' '));
  });

  it('repairs a stored key that ssh2 generated with its public key cut short, keeping the same key', () => {
    const dir = tempDir();
    const file = join(dir, HOST_KEY_FILE);
    const damaged = ssh2DamagedKey();
    expect(utils.parseKey(damaged)).toBeInstanceOf(Error);
    const seed = damagedEd25519Seed(damaged);
    expect(seed).not.toBeNull();
    writeFileSync(file, damaged, { mode: 0o600 });
    writeFileSync(`${file}.pub`, 'ssh-ed25519 AAAA gantry\n');

    const repaired = loadOrCreateHostKey(dir);
    expect(repaired).not.toBe(damaged);
    expect(utils.parseKey(repaired)).not.toBeInstanceOf(Error);
    expect(readFileSync(file, 'utf8')).toBe(repaired);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The same key: the repaired file holds the damaged one's seed, and the .pub is its public half.
    expect(damagedEd25519Seed(repaired)).toBeNull();
    expect(openSshEd25519(seed!).public.split(' ')[1]).toBe(readFileSync(`${file}.pub`, 'utf8').split(' ')[1]);
    expect(sshKeygenPublic(file)).toBe(readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' '));
    // Read back as it is from now on.
    expect(loadOrCreateHostKey(dir)).toBe(repaired);
  });

  it('uses other keys as they are: an OpenSSH key from ssh-keygen, an RSA key', () => {
    const dir = tempDir();
    for (const type of ['ed25519', 'rsa']) {
      const file = join(dir, `${type}`);
      execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', file]);
      const pem = readFileSync(file, 'utf8');
      expect(damagedEd25519Seed(pem)).toBeNull();
    }
    expect(damagedEd25519Seed('not a key')).toBeNull();
  });
});
