/**
 * Streams a build's trace to the server while it runs: PATCH trace.txt about every second (or as soon as 64 KiB
 * are waiting), an empty keep-alive PATCH every few seconds to learn about cancellation, resync after 416, and
 * full-trace PUTs when the server has no incremental endpoint (404), as GitLab Runner 1.x does.
 */
import type { CiClient } from './network.js';
import type { TraceBuffer } from './trace.js';

/** Timing of the uploader. */
export interface UploaderTiming {
  /** Send new output at most this often (ms). */
  intervalMs: number;
  /** Send at once when this many bytes are waiting. */
  chunkBytes: number;
  /** With nothing new, send an empty PATCH this often to check for cancellation (ms). */
  keepAliveMs: number;
}

/** The default timing: 1 s, 64 KiB, 3 s. */
export const DEFAULT_TIMING: UploaderTiming = { intervalMs: 1000, chunkBytes: 64 * 1024, keepAliveMs: 3000 };

/** Uploads one build's trace incrementally; calls onAbort when the server says the build is canceled or gone. */
export class TraceUploader {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private lastSend = 0;
  private incremental = true;
  private needFull = false;
  private aborted = false;

  constructor(
    private readonly client: CiClient,
    private readonly build: { id: number; token: string },
    private readonly runnerToken: string,
    private readonly trace: TraceBuffer,
    private readonly onAbort: (reason: string) => void,
    private readonly timing: UploaderTiming = DEFAULT_TIMING,
    private readonly debug: (message: string) => void = () => undefined,
  ) {}

  /** Start the periodic uploads; what is already there (the runner's header lines) is sent at once, so the server sees the build start. */
  start(): void {
    this.lastSend = Date.now();
    this.timer = setInterval(() => void this.tick(false), Math.min(250, this.timing.intervalMs));
    this.timer.unref();
    if (this.trace.pending > 0) void this.tick(true);
  }

  /** New output was appended: upload at once when enough is waiting. */
  notify(): void {
    if (this.trace.pending >= this.timing.chunkBytes) void this.tick(true);
  }

  /** Stop the timer, wait for the request in flight and send what is left (best effort). */
  async finish(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
    if (this.trace.pending > 0 && this.incremental && !this.needFull) await this.send();
  }

  private async tick(urgent: boolean): Promise<void> {
    if (this.inFlight || !this.timer) return;
    const since = Date.now() - this.lastSend;
    const due = this.trace.pending > 0 ? urgent || since >= this.timing.intervalMs : since >= this.timing.keepAliveMs;
    if (!due) return;
    this.inFlight = this.send().finally(() => {
      this.inFlight = null;
    });
    await this.inFlight;
  }

  private abort(reason: string): void {
    if (this.aborted) return;
    this.aborted = true;
    this.onAbort(reason);
  }

  /** One update: a PATCH of the new bytes, or a full PUT when the server needs the whole trace. */
  private async send(): Promise<void> {
    this.lastSend = Date.now();
    if (!this.incremental || this.needFull) {
      const length = this.trace.length;
      const res = await this.client.updateBuild(this.build.id, this.runnerToken, 'running', this.trace.text());
      if (res.kind === 'abort') this.abort(res.reason);
      else if (res.kind === 'ok') {
        this.trace.sent = length;
        this.needFull = false;
      } else this.debug(`trace update failed: ${res.message}`);
      return;
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      const patch = this.trace.nextPatch();
      const res = await this.client.patchTrace(this.build.id, this.build.token, patch.range, patch.body);
      switch (res.kind) {
        case 'accepted':
          this.trace.accepted(patch.end);
          return;
        case 'abort':
          this.abort(res.reason);
          return;
        case 'unsupported':
          this.incremental = false;
          this.needFull = true;
          return;
        case 'failed':
          this.debug(`trace patch ${patch.range} failed: ${res.message}`);
          return;
        case 'range':
          if (res.serverLength === null) {
            this.debug(`trace patch ${patch.range}: 416 without a Range header`);
            return;
          }
          this.debug(`trace patch ${patch.range}: server has ${res.serverLength} bytes`);
          if (this.trace.resync(res.serverLength) === 'full') {
            this.needFull = true;
            return;
          }
          // resend once from the server's offset; a second 416 waits for the next tick
          break;
      }
    }
  }
}
