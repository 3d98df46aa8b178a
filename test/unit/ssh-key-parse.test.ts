/**
 * Public key lines parsed and fingerprinted (daemon/services/keys/parse.ts) against real keys from ssh-keygen: the
 * fingerprints equal `ssh-keygen -l -E md5|sha256`; DSA, short RSA, private keys, several lines and garbage are refused.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { md5Fingerprint, parsePublicKey, sha256Fingerprint } from '../../daemon/services/keys/parse.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';

describe('accepted keys', () => {
  const cases = [
    { type: 'ed25519', bits: undefined, keyType: 'ssh-ed25519', size: 256 },
    { type: 'ecdsa', bits: 256, keyType: 'ecdsa-sha2-nistp256', size: 256 },
    { type: 'ecdsa', bits: 384, keyType: 'ecdsa-sha2-nistp384', size: 384 },
    { type: 'ecdsa', bits: 521, keyType: 'ecdsa-sha2-nistp521', size: 521 },
    { type: 'rsa', bits: 2048, keyType: 'ssh-rsa', size: 2048 },
    { type: 'rsa', bits: 3072, keyType: 'ssh-rsa', size: 3072 },
  ] as const;
  for (const c of cases) {
    it(`${c.type}${c.bits ? ` ${c.bits}` : ''}: the fingerprints ssh-keygen prints`, () => {
      const pair = generateKeyPair(c.type, { bits: c.bits, comment: 'me@laptop' });
      const { key, errors } = parsePublicKey(pair.publicKey);
      expect(errors).toBeNull();
      expect(key!.type).toBe(c.keyType);
      expect(key!.bits).toBe(c.size);
      expect(key!.fingerprint).toBe(pair.md5);
      expect(key!.fingerprintSha256).toBe(pair.sha256);
      expect(key!.comment).toBe('me@laptop');
      expect(key!.text).toBe(pair.publicKey);
      expect(md5Fingerprint(key!.blob)).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
      expect(sha256Fingerprint(key!.blob)).toBe(pair.sha256);
    });
  }

  it('ignores surrounding white space and a missing comment; keeps a comment with spaces', () => {
    const pair = generateKeyPair('ed25519');
    const [type, data] = pair.publicKey.split(' ');
    expect(parsePublicKey(`\n  ${type} ${data}\n`).key!.text).toBe(`${type} ${data}`);
    expect(parsePublicKey(`${type}\t${data}  Jane Doe (work)`).key!.comment).toBe('Jane Doe (work)');
    expect(parsePublicKey(`${type} ${data}`).key!.fingerprintSha256).toBe(pair.sha256);
  });
});

describe('refused keys', () => {
  it('DSA: type is forbidden', () => {
    const pair = generateKeyPair('dsa');
    expect(parsePublicKey(pair.publicKey).errors).toEqual({ key: ['type is forbidden. Must be RSA, ECDSA, or ED25519'] });
  });

  it('RSA of 1024 bits: must be at least 2048 bits', () => {
    const pair = generateKeyPair('rsa', { bits: 1024 });
    expect(parsePublicKey(pair.publicKey).errors).toEqual({ key: ['must be at least 2048 bits'] });
  });

  it('a private key is refused without being parsed', () => {
    const pair = generateKeyPair('ed25519');
    const errors = parsePublicKey(readFileSync(pair.privatePath, 'utf8')).errors!;
    expect(Object.keys(errors)).toEqual(['key']);
    expect(errors.key![0]).toMatch(/^is a private key/);
  });

  it('a key broken over two lines', () => {
    const pair = generateKeyPair('ed25519');
    const line = pair.publicKey;
    const broken = `${line.slice(0, 40)}\n${line.slice(40)}`;
    expect(parsePublicKey(broken).errors).toEqual({ key: ['should be a single line'], fingerprint: ['cannot be generated'] });
  });

  it('blank, garbage and too long lines', () => {
    expect(parsePublicKey('   ').errors).toEqual({ key: ["can't be blank"], fingerprint: ['cannot be generated'] });
    expect(parsePublicKey('hello world').errors).toEqual({ key: ['is invalid'], fingerprint: ['cannot be generated'] });
    expect(parsePublicKey('ssh-rsa not-base64!').errors).toEqual({ fingerprint: ['cannot be generated'] });
    expect(parsePublicKey('ssh-ed25519 AAAA').errors).toEqual({ fingerprint: ['cannot be generated'] });
    expect(parsePublicKey(`ssh-rsa ${'A'.repeat(5000)}`).errors!.key).toEqual(['is too long (maximum is 5000 characters)']);
  });

  it('a blob whose inner type differs from the line, or with bytes after the key, or cut short', () => {
    const pair = generateKeyPair('ed25519');
    const data = pair.publicKey.split(' ')[1]!;
    expect(parsePublicKey(`ssh-rsa ${data}`).errors).toEqual({ fingerprint: ['cannot be generated'] });
    const blob = Buffer.from(data, 'base64');
    expect(parsePublicKey(`ssh-ed25519 ${Buffer.concat([blob, Buffer.from([0])]).toString('base64')}`).errors).toEqual({ fingerprint: ['cannot be generated'] });
    expect(parsePublicKey(`ssh-ed25519 ${blob.subarray(0, blob.length - 4).toString('base64')}`).errors).toEqual({ fingerprint: ['cannot be generated'] });
  });

  it('an ECDSA point that is not on the curve', () => {
    const pair = generateKeyPair('ecdsa', { bits: 256 });
    const blob = Buffer.from(pair.publicKey.split(' ')[1]!, 'base64');
    blob[blob.length - 1]! ^= 0x01;
    expect(parsePublicKey(`ecdsa-sha2-nistp256 ${blob.toString('base64')}`).errors).toEqual({ fingerprint: ['cannot be generated'] });
  });

  it('control characters anywhere in the line', () => {
    const pair = generateKeyPair('ed25519');
    expect(parsePublicKey(`${pair.publicKey}\u001b[2J`).errors!.key).toEqual(['is invalid']);
    expect(parsePublicKey(`${pair.publicKey}\u0000`).errors!.key).toEqual(['is invalid']);
  });

  it('an authorized_keys line with options is not a key line', () => {
    const pair = generateKeyPair('ed25519');
    expect(parsePublicKey(`no-pty ${pair.publicKey}`).errors!.key).toEqual(['is invalid']);
  });
});
