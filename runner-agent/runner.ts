/**
 * The polling loop of `run` and `run-single`: asks the server for builds (backing off while idle, asking again at
 * once after a build arrived), runs up to N at the same time, and stops gracefully (finish running builds) or by
 * force (kill them, report them failed).
 */
import type { RunnerEntry } from './config.js';
import { BuildJob } from './executor.js';
import type { Logger } from './log.js';
import { CiClient } from './network.js';
import type { UploaderTiming } from './trace-uploader.js';
import type { BuildPayload } from './types.js';

/** Idle backoff: starts at `min`, doubles after each empty poll up to `max`, back to `min` after a build. */
export class Backoff {
  private current: number;

  constructor(readonly min = 500, readonly max = 5000) {
    this.current = min;
  }

  /** The delay to wait after an empty poll (and double the next one). */
  next(): number {
    const delay = this.current;
    this.current = Math.min(this.max, this.current * 2);
    return delay;
  }

  /** A build arrived: poll again at once, and restart from `min` after the next empty poll. */
  reset(): void {
    this.current = this.min;
  }
}

/** Options of the loop. */
export interface LoopOptions {
  runners: RunnerEntry[];
  concurrent: number;
  buildsDir: string;
  log: Logger;
  /** Exit after this many builds (run-single --max-builds). */
  maxBuilds?: number;
  /** Exit when no build arrived for this many seconds (run-single --wait-timeout). */
  waitTimeoutS?: number;
  backoff?: Backoff;
  timing?: UploaderTiming;
  /** How long a runner whose token was refused (403) is left alone (ms). */
  unhealthyMs?: number;
  /**
   * Seconds the server may hold a build request while nothing is pending (long-polling, default 50; 0 = off). Only
   * with one registered runner: several are asked in turn, each answering at once, with the idle backoff between.
   */
  longPollSeconds?: number;
}

/** The default hold asked for: below the client's 60 s timeout and nginx's proxy_read_timeout. */
export const DEFAULT_LONG_POLL_SECONDS = 50;

interface RunnerState {
  entry: RunnerEntry;
  client: CiClient;
  lastUpdate: string | null;
  unhealthyUntil: number;
}

/** The build loop over one or more registered runners. */
export class RunnerLoop {
  private readonly running = new Set<BuildJob>();
  private readonly states: RunnerState[];
  private stopping = false;
  private forced = false;
  private wake: (() => void) | null = null;
  private started = 0;
  private next = 0;
  private lastBuildAt = Date.now();
  /** Abandons a held build request at a stop. */
  private readonly polling = new AbortController();
  /** The last empty answer was held by the server: ask again at once. */
  private heldEmpty = false;

  constructor(private readonly o: LoopOptions) {
    this.states = o.runners.map((entry) => ({ entry, client: new CiClient(entry.url), lastUpdate: null, unhealthyUntil: 0 }));
  }

  /** Whether forceStop() was called. */
  get wasForced(): boolean {
    return this.forced;
  }

  /** Builds running now. */
  get active(): number {
    return this.running.size;
  }

  /** Stop asking for builds; running builds finish (first SIGTERM). */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.o.log.info(this.running.size > 0 ? `stopping: waiting for ${this.running.size} running build(s) to finish` : 'stopping');
    this.polling.abort();
    this.wake?.();
  }

  /** Kill the running builds (they are reported failed) and stop (second SIGTERM). */
  forceStop(): void {
    this.stopping = true;
    this.forced = true;
    this.o.log.warn(`forced stop: killing ${this.running.size} running build(s)`);
    for (const job of this.running) {
      job.giveUpFinalUpdate();
      job.abort('the runner was stopped');
    }
    this.polling.abort();
    this.wake?.();
  }

  /** Sleep up to `ms`, woken early by stop() or a finished build. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  /** Ask each runner (round robin) for one build; the first build found is started. Returns whether one was. */
  private async pollOnce(): Promise<boolean> {
    const now = Date.now();
    this.heldEmpty = false;
    for (let i = 0; i < this.states.length; i++) {
      const state = this.states[(this.next + i) % this.states.length];
      if (state.unhealthyUntil > now) continue;
      const hold = this.holdSeconds();
      const started = Date.now();
      const res = await state.client.requestBuild(state.entry.token, state.lastUpdate, hold, this.polling.signal);
      // a build that arrives just after a stop still runs: the server has already marked it running
      if (this.stopping && res.kind !== 'build') return false;
      switch (res.kind) {
        case 'build':
          state.lastUpdate = res.lastUpdate;
          this.next = (this.next + i + 1) % this.states.length;
          this.startJob(state, res);
          return true;
        case 'none':
          state.lastUpdate = res.lastUpdate;
          // Held for a while (not a server that ignores the header, nor a draining one): no sleep before the next ask.
          this.heldEmpty = hold > 0 && Date.now() - started >= 1000;
          break;
        case 'forbidden':
          state.unhealthyUntil = Date.now() + (this.o.unhealthyMs ?? 60_000);
          this.o.log.warn('the server refused the runner token (403): was the runner deleted? retrying later', { runner: state.entry.description || state.entry.id });
          break;
        case 'error':
          this.o.log.warn('asking for a build failed', { runner: state.entry.description || state.entry.id, error: res.message });
          break;
      }
    }
    return false;
  }

  /** The hold to ask for: with one runner, the long-poll seconds (within run-single's --wait-timeout); else 0. */
  private holdSeconds(): number {
    if (this.states.length !== 1) return 0;
    let hold = this.o.longPollSeconds ?? DEFAULT_LONG_POLL_SECONDS;
    if (this.o.waitTimeoutS !== undefined && this.running.size === 0) {
      hold = Math.min(hold, Math.ceil(Math.max(0, this.o.waitTimeoutS * 1000 - (Date.now() - this.lastBuildAt)) / 1000));
    }
    return Math.max(0, Math.floor(hold));
  }

  private startJob(state: RunnerState, res: { build: BuildPayload }): void {
    const job = new BuildJob({ client: state.client, runner: state.entry, build: res.build, buildsDir: this.o.buildsDir, log: this.o.log, timing: this.o.timing });
    this.running.add(job);
    this.started++;
    void job.run().finally(() => {
      this.running.delete(job);
      this.lastBuildAt = Date.now();
      this.wake?.();
    });
  }

  /** Run until stopped (or the build limit / wait timeout of run-single); resolves when every build has finished. */
  async run(): Promise<void> {
    const backoff = this.o.backoff ?? new Backoff();
    this.o.log.info(`runner started; polling for builds`, { runners: this.states.length, concurrent: this.o.concurrent });
    while (!this.stopping) {
      if (this.o.maxBuilds !== undefined && this.started >= this.o.maxBuilds) {
        if (this.running.size === 0) {
          this.o.log.info('this runner has processed its build limit, so now exiting');
          break;
        }
        await this.sleep(60_000);
        continue;
      }
      if (this.running.size >= this.o.concurrent) {
        await this.sleep(60_000); // woken when a build ends
        continue;
      }
      const got = await this.pollOnce();
      if (got) {
        backoff.reset();
        continue;
      }
      if (this.stopping) break;
      if (this.o.waitTimeoutS !== undefined && this.running.size === 0 && Date.now() - this.lastBuildAt > this.o.waitTimeoutS * 1000) {
        this.o.log.info(`no build received in ${this.o.waitTimeoutS} seconds, exiting`);
        break;
      }
      if (this.heldEmpty) continue;
      await this.sleep(backoff.next());
    }
    while (this.running.size > 0) await this.sleep(60_000);
    await Promise.all(this.states.map((s) => s.client.close().catch(() => undefined)));
    this.o.log.info(this.forced ? 'stopped (running builds were killed)' : 'stopped');
  }
}
