import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import ssh2, { type ParsedKey } from 'ssh2';
import { damagedEd25519Seed, generateOpenSshEd25519, HOST_KEY_FILE, loadOrCreateHostKey, openSshEd25519 } from '../../daemon/ssh/host-key.js';

const { utils } = ssh2;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
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

  it('gives several processes starting at once on one data dir one key: each serves the key the file holds', async () => {
    // Daemons sharing a data dir (PostgreSQL, several daemons) all create the key when it is missing. Each child
    // waits for a go signal, then loads or creates the key at the same moment; all must print the same key.
    const dir = tempDir();
    const go = join(dir, 'go');
    const script = join(dir, 'child.ts');
    writeFileSync(script, [
      `import { existsSync } from 'node:fs';`,
      `import { loadOrCreateHostKey } from ${JSON.stringify(join(ROOT, 'daemon/ssh/host-key.ts'))};`,
      `process.stderr.write('ready\\n');`,
      `while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 1));`,
      `process.stdout.write(loadOrCreateHostKey(${JSON.stringify(dir)}));`,
    ].join('\n'));
    const children = Array.from({ length: 6 }, () => {
      const p = spawn(process.execPath, [join(ROOT, 'node_modules/vite-node/vite-node.mjs'), script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout.on('data', (d: Buffer) => { out += d.toString(); });
      const ready = new Promise<void>((resolve) => p.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('ready')) resolve();
      }));
      const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => p.on('close', (code) => resolve({ code, out, err })));
      return { ready, done };
    });
    await Promise.all(children.map((c) => c.ready));
    writeFileSync(go, '');
    const results = await Promise.all(children.map((c) => c.done));
    for (const r of results) expect(r.code, r.err).toBe(0);
    const stored = readFileSync(join(dir, HOST_KEY_FILE), 'utf8');
    expect(results.map((r) => r.out)).toEqual(results.map(() => stored));
    expect(utils.parseKey(stored)).not.toBeInstanceOf(Error);
    // the .pub beside it is the public half of that one key, and no temporary file is left behind
    expect(sshKeygenPublic(join(dir, HOST_KEY_FILE))).toBe(readFileSync(join(dir, `${HOST_KEY_FILE}.pub`), 'utf8').trim().split(' ').slice(0, 2).join(' '));
    expect(readdirSync(dir).filter((f) => f.startsWith(`.${HOST_KEY_FILE}-`))).toEqual([]);
  }, 60_000);
});
