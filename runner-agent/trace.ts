/**
 * The build log kept by the runner and its incremental upload bookkeeping: PATCH /builds/:id/trace.txt sends
 * bytes [sent, length) with `Content-Range: <start>-<end>` (end exclusive, no `bytes ` prefix), as GitLab Runner does.
 */

/** Runner 1.x's default output limit (4096 KiB). */
export const DEFAULT_OUTPUT_LIMIT = 4096 * 1024;

/** The next incremental update to send. */
export interface TracePatch {
  start: number;
  end: number;
  body: Buffer;
  /** The Content-Range header value. */
  range: string;
}

/** The Content-Range value runner 1.x sends: `<start>-<end>` with the end exclusive. */
export function contentRange(start: number, end: number): string {
  return `${start}-${end}`;
}

/** The server's length from a `Range: 0-<length>` response header; null when absent or malformed. */
export function parseRangeLength(value: string | undefined | null): number | null {
  if (!value) return null;
  const m = /^\s*(?:bytes[= ])?\d+-(\d+)\s*$/.exec(value);
  return m ? Number(m[1]) : null;
}

/** A growing build log with an output limit, and the offset the server has accepted so far. */
export class TraceBuffer {
  private buf = Buffer.alloc(64 * 1024);
  private len = 0;
  private truncated = false;
  /** Bytes the server holds (everything before this offset was accepted). */
  sent = 0;

  constructor(readonly limit = DEFAULT_OUTPUT_LIMIT) {}

  /** Bytes in the log. */
  get length(): number {
    return this.len;
  }

  /** Bytes not yet accepted by the server. */
  get pending(): number {
    return this.len - this.sent;
  }

  /** Whether output was dropped because of the limit. */
  get isTruncated(): boolean {
    return this.truncated;
  }

  /** Append output; past the limit the rest is dropped and a notice is written once. */
  append(data: Buffer | string): void {
    if (this.truncated) return;
    let chunk = typeof data === 'string' ? Buffer.from(data) : data;
    if (this.len + chunk.length > this.limit) {
      chunk = chunk.subarray(0, Math.max(0, this.limit - this.len));
      this.truncated = true;
      this.write(chunk);
      this.write(Buffer.from(`\n\x1b[31;1mBuild log exceeded limit of ${this.limit} bytes.\x1b[0;m\n`));
      return;
    }
    this.write(chunk);
  }

  /** Append a line written by the runner itself (not the job), always kept even past the limit. */
  appendNotice(text: string): void {
    this.write(Buffer.from(text));
  }

  private write(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.len + chunk.length > this.buf.length) {
      const grown = Buffer.alloc(Math.max(this.buf.length * 2, this.len + chunk.length));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    chunk.copy(this.buf, this.len);
    this.len += chunk.length;
  }

  /** A copy of the whole log. */
  bytes(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.len));
  }

  /** The whole log as text (for the final PUT). */
  text(): string {
    return this.buf.subarray(0, this.len).toString('utf8');
  }

  /** The next PATCH: the bytes from `sent` to the end (possibly empty: a keep-alive that also checks for cancel). */
  nextPatch(): TracePatch {
    const start = this.sent;
    const end = this.len;
    return { start, end, body: Buffer.from(this.buf.subarray(start, end)), range: contentRange(start, end) };
  }

  /** The server accepted a PATCH up to `end`. */
  accepted(end: number): void {
    this.sent = Math.min(Math.max(this.sent, end), this.len);
  }

  /**
   * The server answered 416 with its own length. When it has no more than we do, continue from there and resend
   * ('resend'); when it claims more, the next update must be a full trace PUT ('full').
   */
  resync(serverLength: number): 'resend' | 'full' {
    if (serverLength <= this.len) {
      this.sent = serverLength;
      return 'resend';
    }
    return 'full';
  }
}
