/**
 * SSH public key lines (`<type> <base64 blob> [comment]`, the .pub file / authorized_keys form): parsed, checked and
 * fingerprinted. The blob's wire format (RFC 4253 6.6, RFC 5656 3.1, RFC 8709 4) is read by hand and the key material
 * is then handed to node:crypto, so a key that parses here is one OpenSSH and ssh2 accept too. Validation messages are
 * GitLab's (8.x Key model; 9.x key restrictions for refused types and sizes).
 */
import { createHash, createPublicKey } from 'node:crypto';

/** The key types Gantry accepts. */
export const ACCEPTED_KEY_TYPES = ['ssh-rsa', 'ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521'] as const;
export type KeyType = (typeof ACCEPTED_KEY_TYPES)[number];

/** The smallest RSA modulus accepted, in bits. */
export const MIN_RSA_BITS = 2048;
/** The longest key line accepted (8.x Key: length maximum 5000). */
export const MAX_KEY_LENGTH = 5000;

/** A parsed, valid public key. */
export interface ParsedKey {
  type: KeyType;
  /** The decoded blob (what an SSH client presents). */
  blob: Buffer;
  comment: string;
  /** Modulus size for RSA, curve size for ECDSA, 256 for Ed25519. */
  bits: number;
  /** The line as stored: type, base64 and the comment, single-spaced. */
  text: string;
  /** 8.x's fingerprint: MD5 of the blob, colon-separated lower-case hex (`ssh-keygen -l -E md5` without `MD5:`). */
  fingerprint: string;
  /** OpenSSH's `SHA256:<unpadded base64>` of the blob (`ssh-keygen -l -E sha256`). */
  fingerprintSha256: string;
}

/** What is wrong with a key line, as the validation hash of a 400 (`{key: [...], fingerprint: [...]}`). */
export type KeyErrors = { key?: string[]; fingerprint?: string[] };

const FORBIDDEN_TYPE = 'type is forbidden. Must be RSA, ECDSA, or ED25519';
const PRIVATE_KEY = 'is a private key: never share it; add the public key instead (the .pub file next to it)';
const CURVES: Record<string, { name: string; crv: string; size: number; bits: number }> = {
  'ecdsa-sha2-nistp256': { name: 'nistp256', crv: 'P-256', size: 32, bits: 256 },
  'ecdsa-sha2-nistp384': { name: 'nistp384', crv: 'P-384', size: 48, bits: 384 },
  'ecdsa-sha2-nistp521': { name: 'nistp521', crv: 'P-521', size: 66, bits: 521 },
};

/** MD5 colon-hex fingerprint of a key blob, as 8.x stored it. */
export function md5Fingerprint(blob: Buffer): string {
  return createHash('md5').update(blob).digest('hex').replace(/(..)(?=.)/g, '$1:');
}

/** OpenSSH's SHA256 fingerprint of a key blob (`SHA256:` + unpadded base64): what the SSH server looks keys up by. */
export function sha256Fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Reads the fields of an SSH wire blob (RFC 4251 5: uint32s and length-prefixed strings) from `offset` on; null past the end. */
export class WireReader {
  constructor(
    private readonly buf: Buffer,
    private offset = 0,
  ) {}
  uint32(): number | null {
    if (this.offset + 4 > this.buf.length) return null;
    this.offset += 4;
    return this.buf.readUInt32BE(this.offset - 4);
  }
  string(): Buffer | null {
    if (this.offset + 4 > this.buf.length) return null;
    const length = this.buf.readUInt32BE(this.offset);
    const start = this.offset + 4;
    if (length > this.buf.length - start) return null;
    this.offset = start + length;
    return this.buf.subarray(start, this.offset);
  }
  get done(): boolean {
    return this.offset === this.buf.length;
  }
}

const b64url = (b: Buffer) => b.toString('base64url');

/** An mpint without its sign byte (a positive integer's leading 0x00). */
function unsigned(mpint: Buffer): Buffer {
  let i = 0;
  while (i < mpint.length - 1 && mpint[i] === 0) i++;
  return mpint.subarray(i);
}

function bitLength(n: Buffer): number {
  if (n.length === 0 || (n.length === 1 && n[0] === 0)) return 0;
  return (n.length - 1) * 8 + (32 - Math.clz32(n[0]!));
}

/** The key material of a blob checked by node:crypto; its size in bits, or null when it is not a usable key. */
function keyBits(type: string, reader: WireReader): number | null {
  try {
    if (type === 'ssh-rsa') {
      const e = reader.string();
      const n = reader.string();
      if (!e || !n || !reader.done || (e[0]! & 0x80) || (n[0]! & 0x80)) return null;
      createPublicKey({ key: { kty: 'RSA', n: b64url(unsigned(n)), e: b64url(unsigned(e)) }, format: 'jwk' });
      return bitLength(unsigned(n));
    }
    if (type === 'ssh-ed25519') {
      const x = reader.string();
      if (!x || x.length !== 32 || !reader.done) return null;
      createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(x) }, format: 'jwk' });
      return 256;
    }
    const curve = CURVES[type];
    if (!curve) return null;
    const name = reader.string();
    const q = reader.string();
    if (!name || name.toString('latin1') !== curve.name || !q || !reader.done) return null;
    // Only the uncompressed point form (0x04 || X || Y), as OpenSSH writes it; the curve check is node:crypto's.
    if (q.length !== 1 + 2 * curve.size || q[0] !== 4) return null;
    const x = q.subarray(1, 1 + curve.size);
    const y = q.subarray(1 + curve.size);
    createPublicKey({ key: { kty: 'EC', crv: curve.crv, x: b64url(x), y: b64url(y) }, format: 'jwk' });
    return curve.bits;
  } catch {
    return null;
  }
}

/**
 * Parse and check a public key line. Leading and trailing white space is ignored (8.x stripped it). The errors, in
 * 8.x's order: blank, too long, a private key, a line that does not start with `ssh-` or `ecdsa-`, several lines, a
 * refused type or a short RSA key; `fingerprint: cannot be generated` when the blob is not a key.
 */
export function parsePublicKey(input: string): { key: ParsedKey; errors: null } | { key: null; errors: KeyErrors } {
  const value = input.trim();
  if (value === '') return { key: null, errors: { key: ["can't be blank"], fingerprint: ['cannot be generated'] } };
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----|^PuTTY-User-Key-File-/.test(value)) return { key: null, errors: { key: [PRIVATE_KEY] } };
  const keyErrors: string[] = [];
  if (value.length > MAX_KEY_LENGTH) keyErrors.push(`is too long (maximum is ${MAX_KEY_LENGTH} characters)`);
  // Control characters (but tab) are no part of a key line; refused as the wrong format, not stored.
  if (!/^(ssh|ecdsa)-/.test(value) || /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(value)) keyErrors.push('is invalid');
  if (/[\r\n]/.test(value)) keyErrors.push('should be a single line');
  if (keyErrors.length > 0) return { key: null, errors: { key: keyErrors, fingerprint: ['cannot be generated'] } };

  const [type = '', data = '', ...rest] = value.split(/[ \t]+/);
  const comment = rest.join(' ');
  const blob = /^[A-Za-z0-9+/]+={0,2}$/.test(data) && data.length % 4 === 0 ? Buffer.from(data, 'base64') : null;
  const reader = blob ? new WireReader(blob) : null;
  const inner = reader?.string()?.toString('latin1');
  if (!blob || !reader || inner !== type) return { key: null, errors: { fingerprint: ['cannot be generated'] } };
  if (!(ACCEPTED_KEY_TYPES as readonly string[]).includes(type)) {
    // A well-formed blob of another kind (ssh-dss, a certificate ...): refused by type, not as garbage.
    return { key: null, errors: { key: [FORBIDDEN_TYPE] } };
  }
  const bits = keyBits(type, reader);
  if (bits === null) return { key: null, errors: { fingerprint: ['cannot be generated'] } };
  if (type === 'ssh-rsa' && bits < MIN_RSA_BITS) return { key: null, errors: { key: [`must be at least ${MIN_RSA_BITS} bits`] } };
  return {
    key: {
      type: type as KeyType,
      blob,
      comment,
      bits,
      text: comment ? `${type} ${data} ${comment}` : `${type} ${data}`,
      fingerprint: md5Fingerprint(blob),
      fingerprintSha256: sha256Fingerprint(blob),
    },
    errors: null,
  };
}
