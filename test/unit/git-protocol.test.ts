/** Smart-HTTP plumbing: pkt-lines, reading push commands from a stream, basic auth parsing. */
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { parsePushCommands, pktLine, PKT_FLUSH, PushProtocolError, readPushCommands } from '../../daemon/git-http/pkt.js';
import { parseBasicAuth } from '../../daemon/git-http/auth.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const Z = '0'.repeat(40);

describe('pktLine', () => {
  it('prefixes the length in hex including the four digits', () => {
    expect(pktLine('# service=git-upload-pack\n').toString()).toBe('001e# service=git-upload-pack\n');
    expect(PKT_FLUSH.toString()).toBe('0000');
  });
});

describe('parsePushCommands', () => {
  it('parses commands with capabilities, shallow lines, and stops at the flush', () => {
    const body = Buffer.concat([
      pktLine(`shallow ${A}\n`),
      pktLine(`${Z} ${A} refs/heads/new\0report-status side-band-64k agent=git/2.39\n`),
      pktLine(`${A} ${B} refs/heads/master\n`),
      pktLine(`${B} ${Z} refs/tags/v1\n`),
      PKT_FLUSH,
      Buffer.from('PACK....binary'),
    ]);
    expect(parsePushCommands(body)).toEqual({
      commands: [
        { oldSha: Z, newSha: A, ref: 'refs/heads/new' },
        { oldSha: A, newSha: B, ref: 'refs/heads/master' },
        { oldSha: B, newSha: Z, ref: 'refs/tags/v1' },
      ],
    });
  });

  it('asks for more bytes until the list is complete', () => {
    const body = Buffer.concat([pktLine(`${A} ${B} refs/heads/master\n`), PKT_FLUSH]);
    for (let i = 0; i < body.length; i++) expect(parsePushCommands(body.subarray(0, i))).toBeNull();
    expect(parsePushCommands(body)!.commands).toHaveLength(1);
  });

  it('rejects garbage', () => {
    expect(() => parsePushCommands(Buffer.from('zzzz'))).toThrow(PushProtocolError);
    expect(() => parsePushCommands(Buffer.concat([pktLine('hello world\n'), PKT_FLUSH]))).toThrow(PushProtocolError);
    expect(() => parsePushCommands(Buffer.concat([pktLine(`${A} ${B} refs/heads/a b\n`), PKT_FLUSH]))).toThrow(PushProtocolError);
  });
});

describe('readPushCommands', () => {
  it('reads across chunks, returns every byte read, and leaves the rest in the stream', async () => {
    const stream = new PassThrough();
    const cmds = Buffer.concat([pktLine(`${A} ${B} refs/heads/master\0report-status\n`), PKT_FLUSH]);
    const pack = Buffer.from('PACK-rest-of-the-data');
    const promise = readPushCommands(stream);
    stream.write(cmds.subarray(0, 10));
    stream.write(Buffer.concat([cmds.subarray(10), pack.subarray(0, 4)]));
    const { commands, head } = await promise;
    expect(commands).toEqual([{ oldSha: A, newSha: B, ref: 'refs/heads/master' }]);
    expect(head.equals(Buffer.concat([cmds, pack.subarray(0, 4)]))).toBe(true);
    stream.end(pack.subarray(4));
    const rest: Buffer[] = [];
    for await (const c of stream) rest.push(c as Buffer);
    expect(Buffer.concat(rest).toString()).toBe('-rest-of-the-data');
  });

  it('fails when the stream ends early or the list is too large', async () => {
    const short = new PassThrough();
    const p1 = readPushCommands(short);
    short.end(pktLine(`${A} ${B} refs/heads/master\n`));
    await expect(p1).rejects.toBeInstanceOf(PushProtocolError);
    const big = new PassThrough();
    const p2 = readPushCommands(big, 100);
    for (let i = 0; i < 5; i++) big.write(pktLine(`${A} ${B} refs/heads/branch-${i}\n`));
    await expect(p2).rejects.toThrow(/too large/);
  });
});

describe('parseBasicAuth', () => {
  const header = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
  it('splits at the first colon (passwords may contain colons)', () => {
    expect(parseBasicAuth(header('alice:pa:ss'))).toEqual({ username: 'alice', password: 'pa:ss' });
    expect(parseBasicAuth(header(':token'))).toEqual({ username: '', password: 'token' });
    expect(parseBasicAuth(`basic   ${Buffer.from('u:p').toString('base64')}`)).toEqual({ username: 'u', password: 'p' });
  });
  it('ignores other schemes and malformed values', () => {
    expect(parseBasicAuth(undefined)).toBeNull();
    expect(parseBasicAuth('Bearer abc')).toBeNull();
    expect(parseBasicAuth(header('no-colon'))).toBeNull();
  });
});
