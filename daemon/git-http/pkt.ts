/** pkt-line helpers for the smart HTTP protocol, and reading the ref update commands at the start of a push. */
import type { Readable } from 'node:stream';
import type { RefCommand } from '../services/repository/protected-branches.js';

/** One pkt-line: 4 hex digits of length (including themselves), then the payload. */
export function pktLine(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'ascii'), body]);
}

/** The flush-pkt. */
export const PKT_FLUSH = Buffer.from('0000', 'ascii');

/** Thrown when a push request does not start with well-formed commands. */
export class PushProtocolError extends Error {}

const COMMAND = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (\S+)$/;

/**
 * Parse the command list at the start of a receive-pack request body (`shallow` lines, then `old new ref` lines,
 * the first with capabilities after a NUL, then a flush). Returns null while more bytes are needed.
 */
export function parsePushCommands(buf: Buffer): { commands: RefCommand[] } | null {
  const commands: RefCommand[] = [];
  let off = 0;
  for (;;) {
    if (buf.length < off + 4) return null;
    const len = parseInt(buf.toString('ascii', off, off + 4), 16);
    if (Number.isNaN(len) || (len > 0 && len < 4)) throw new PushProtocolError('malformed pkt-line');
    if (len === 0) return { commands };
    if (buf.length < off + len) return null;
    let line = buf.toString('utf8', off + 4, off + len);
    off += len;
    const nul = line.indexOf('\0');
    if (nul >= 0) line = line.slice(0, nul);
    line = line.replace(/\n$/, '');
    if (line.startsWith('shallow ')) continue;
    const m = COMMAND.exec(line);
    if (!m) throw new PushProtocolError(`unexpected push command: ${line.slice(0, 80)}`);
    commands.push({ oldSha: m[1]!, newSha: m[2]!, ref: m[3]! });
  }
}

/**
 * Read a push request until its command list is complete, without consuming more than has arrived: returns the
 * commands and every byte read so far (to be written to receive-pack before piping the rest). The stream is left
 * paused. Throws PushProtocolError on garbage or when the command list exceeds `limit` bytes.
 */
export function readPushCommands(stream: Readable, limit = 16 * 1024 * 1024): Promise<{ commands: RefCommand[]; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err: Error | null, commands?: RefCommand[]) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.pause();
      if (err) reject(err);
      else resolve({ commands: commands ?? [], head: Buffer.concat(chunks) });
    };
    const tryParse = (final: boolean) => {
      try {
        const parsed = parsePushCommands(Buffer.concat(chunks));
        if (parsed) return finish(null, parsed.commands);
        if (final) return finish(new PushProtocolError('push request ended before its command list'));
        if (size > limit) return finish(new PushProtocolError('push command list too large'));
      } catch (e) {
        finish(e as Error);
      }
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      tryParse(false);
    };
    const onEnd = () => tryParse(true);
    const onError = (e: Error) => finish(e);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
  });
}
