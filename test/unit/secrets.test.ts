import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Secrets, hashPassword, hashToken, randomToken, setPasswordHashCostForTests, verifyPassword } from '../../daemon/secrets.js';

describe('passwords', () => {
  // The daemon's full cost: test/helpers/app.ts lowers it for the in-process servers of the files its worker runs.
  let before = 0;
  beforeAll(() => {
    before = setPasswordHashCostForTests(16384);
  });
  afterAll(() => {
    setPasswordHashCostForTests(before);
  });

  it('hash with scrypt and a fresh salt, and verify', async () => {
    const a = await hashPassword('correct horse');
    const b = await hashPassword('correct horse');
    expect(a).toMatch(/^scrypt\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', a)).toBe(true);
    expect(await verifyPassword('correct horse', b)).toBe(true);
  });

  it('reject a wrong password and damaged records', async () => {
    const h = await hashPassword('secret-password');
    expect(await verifyPassword('secret-passwore', h)).toBe(false);
    expect(await verifyPassword('', h)).toBe(false);
    expect(await verifyPassword('SECRET-PASSWORD', h)).toBe(false);
    expect(await verifyPassword('secret-password', 'plain-text')).toBe(false);
    expect(await verifyPassword('secret-password', 'scrypt$$')).toBe(false);
    expect(await verifyPassword('secret-password', 'bcrypt$abc$def')).toBe(false);
    expect(await verifyPassword('secret-password', 'scrypt$AAAA$AAAA')).toBe(false);
    expect(await verifyPassword('secret-password', `${h}$extra`)).toBe(false);
  });

  it('hash at a lower cost only when the tests ask, recording it, and verify such a hash at any cost', async () => {
    const full = await hashPassword('correct horse');
    expect(full.split('$')).toHaveLength(3); // the full cost, N = 16384, as every daemon hashes
    try {
      setPasswordHashCostForTests(1024);
      const cheap = await hashPassword('correct horse');
      expect(cheap).toMatch(/^scrypt\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+\$1024$/);
      expect(await verifyPassword('correct horse', cheap)).toBe(true);
      expect(await verifyPassword('correct horse', full)).toBe(true);
      setPasswordHashCostForTests(16384);
      // a process at the full cost (gantryd beside a test's own server) verifies it by its recorded N
      expect(await verifyPassword('correct horse', cheap)).toBe(true);
      expect(await verifyPassword('correct hors', cheap)).toBe(false);
      // the recorded N is the one the hash was made with: another N does not match
      expect(await verifyPassword('correct horse', cheap.replace(/\$1024$/, '$2048'))).toBe(false);
      expect(await verifyPassword('correct horse', cheap.replace(/\$1024$/, '$1000'))).toBe(false);
      expect(await verifyPassword('correct horse', cheap.replace(/\$1024$/, '$32768'))).toBe(false);
      expect(await verifyPassword('correct horse', cheap.replace(/\$1024$/, '$0x400'))).toBe(false);
      expect(await verifyPassword('correct horse', `${cheap}$1024`)).toBe(false);
      for (const bad of [0, 1, 3, 1000, 32768, 1.5]) expect(() => setPasswordHashCostForTests(bad)).toThrow(/power of two/);
    } finally {
      setPasswordHashCostForTests(16384);
    }
  });
});

describe('tokens', () => {
  it('randomToken gives URL-safe tokens of the asked length, all different', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const t = randomToken();
      expect(t).toMatch(/^[A-Za-z0-9_-]{20}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(200);
    expect(randomToken(32)).toHaveLength(32);
  });

  it('hashToken is SHA-256 hex', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken('abc')).not.toBe(hashToken('abd'));
  });
});

describe('Secrets', () => {
  const key = randomBytes(64);
  const secrets = new Secrets(key);

  it('derive is stable for a key, purpose and salt, and differs otherwise', () => {
    const t = secrets.derive('private', 'salt-1');
    expect(t).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(secrets.derive('private', 'salt-1')).toBe(t);
    expect(new Secrets(Buffer.from(key)).derive('private', 'salt-1')).toBe(t);
    expect(secrets.derive('private', 'salt-2')).not.toBe(t);
    expect(secrets.derive('runners', 'salt-1')).not.toBe(t);
    expect(new Secrets(randomBytes(64)).derive('private', 'salt-1')).not.toBe(t);
    expect(secrets.derive('private', 'salt-1', 30)).toHaveLength(30);
  });

  it('seal and open round-trip, with a fresh IV each time', () => {
    for (const text of ['runners-token', '', 'ünïcödé ✓', 'x'.repeat(10000)]) {
      const sealed = secrets.seal(text);
      expect(sealed.startsWith('v1.')).toBe(true);
      if (text) expect(sealed).not.toContain(text);
      expect(secrets.open(sealed)).toBe(text);
    }
    expect(secrets.seal('same')).not.toBe(secrets.seal('same'));
  });

  it('open detects tampering, a wrong key and garbage', () => {
    const sealed = secrets.seal('runners-token');
    const [v, iv, tag, data] = sealed.split('.');
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    expect(() => secrets.open([v, iv, tag, flip(data!)].join('.'))).toThrow();
    expect(() => secrets.open([v, iv, flip(tag!), data].join('.'))).toThrow();
    expect(() => secrets.open([v, flip(iv!), tag, data].join('.'))).toThrow();
    expect(() => new Secrets(randomBytes(64)).open(sealed)).toThrow();
    expect(() => secrets.open('not sealed')).toThrow('not a sealed value');
    expect(() => secrets.open(`v2.${iv}.${tag}.${data}`)).toThrow();
  });
});
