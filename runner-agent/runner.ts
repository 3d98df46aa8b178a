/**
 * The polling loop of `run` and `run-single`: asks the server for builds (each runner on its own, held by the server
 * while nothing is pending, backing off where it answers at once, asking again at once after a build arrived), runs
 * up to N at the same time, and stops gracefully (finish running builds) or by
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
  /** The idle backoff's bounds (each runner backs off on its own). */
  backoff?: Backoff;
  timing?: UploaderTiming;
  /** How long a runner whose token was refused (403) is left alone (ms). */
  unhealthyMs?: number;
  /**
   * Seconds the server may hold a build request while nothing is pending (long-polling, default 50; 0 = off). Every
   * runner holds a request of its own at once while there is a free build slot for each; with fewer slots than
   * runners they take the slots in turn, each holding at most SHARED_SLOT_HOLD_SECONDS.
   */
  longPollSeconds?: number;
}

/** The default hold asked for: below the client's 60 s timeout and nginx's proxy_read_timeout. */
export const DEFAULT_LONG_POLL_SECONDS = 50;
/** The hold of a runner whose slot others wait for (fewer free build slots than runners). */
export const SHARED_SLOT_HOLD_SECONDS = 5;

interface RunnerState {
  entry: RunnerEntry;
  client: CiClient;
  lastUpdate: string | null;
  unhealthyUntil: number;
}

/**
 * The build loop over one or more registered runners. Each runner asks for builds on its own (a request held by the
 * server while nothing is pending, so a build starts the moment it is queued), but a request is a build slot: the
 * server may answer it with a build that is then already the runner's, so the requests in flight and the builds
 * running together never exceed `concurrent` (nor what is left of --max-builds). Runners waiting for a slot take it in
 * the order they asked (none starves another); while slots are fewer than the runners that want one, holds are short.
 */
export class RunnerLoop {
  private readonly running = new Set<BuildJob>();
  private readonly states: RunnerState[];
  private stopping = false;
  private forced = false;
  /** The build limit or the wait timeout was reached: ask no more. */
  private finished = false;
  private started = 0;
  /** Build requests in flight. */
  private asking = 0;
  /** The runners waiting for a build slot, in the order they asked. */
  private readonly queue: RunnerState[] = [];
  /** Runners waiting for a slot: woken when one may be free (a request came back, a build ended, a stop). */
  private readonly slotSleepers = new Set<() => void>();
  /** Runners backing off: woken only when a build ended or the loop is over (not by the other runners' requests). */
  private readonly idleSleepers = new Set<() => void>();
  private lastBuildAt = Date.now();
  /** Abandons the held build requests at a stop. */
  private readonly polling = new AbortController();

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
    this.changed();
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
    this.changed();
  }

  /** Wake the runners waiting for a slot, and with `all` those backing off too. */
  private changed(all = true): void {
    const sleepers = [...this.slotSleepers, ...(all ? this.idleSleepers : [])];
    this.slotSleepers.clear();
    if (all) this.idleSleepers.clear();
    for (const wake of sleepers) wake();
  }

  /** Sleep up to `ms` in `set`, woken early by changed(). */
  private sleep(ms: number, set: Set<() => void> = this.idleSleepers): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }

  /** Build slots not taken by a running build or a request in flight (within what is left of --max-builds). */
  private freeSlots(): number {
    const left = this.o.maxBuilds === undefined ? Infinity : this.o.maxBuilds - this.started;
    return Math.min(this.o.concurrent - this.running.size, left) - this.asking;
  }

  /** Wait for a build slot for `state`, in turn, and take it (asking + 1); false when the loop is over meanwhile. */
  private async slot(state: RunnerState): Promise<boolean> {
    this.queue.push(state);
    try {
      while (!this.stopping && !this.finished) {
        if (this.queue[0] === state && this.freeSlots() > 0) {
          this.asking++; // taken now, before the next in the queue is woken
          return true;
        }
        await this.sleep(60_000, this.slotSleepers);
      }
      return false;
    } finally {
      this.queue.splice(this.queue.indexOf(state), 1);
      this.changed(false); // the next in the queue may go now
    }
  }

  /**
   * The hold to ask for, its slot taken: the long-poll seconds while every runner that may ask has a slot of its own
   * (so a held request keeps no other runner waiting); else at most SHARED_SLOT_HOLD_SECONDS; within run-single's
   * --wait-timeout.
   */
  private holdSeconds(): number {
    let hold = this.o.longPollSeconds ?? DEFAULT_LONG_POLL_SECONDS;
    const now = Date.now();
    const askers = this.states.filter((s) => s.unhealthyUntil <= now).length;
    if (this.freeSlots() + this.asking < askers) hold = Math.min(hold, SHARED_SLOT_HOLD_SECONDS);
    if (this.o.waitTimeoutS !== undefined && this.running.size === 0) {
      hold = Math.min(hold, Math.ceil(Math.max(0, this.o.waitTimeoutS * 1000 - (now - this.lastBuildAt)) / 1000));
    }
    return Math.max(0, Math.floor(hold));
  }

  /** One runner's asking: a slot, a request (held), a build started or the idle backoff, until the loop is over. */
  private async ask(state: RunnerState, backoff: Backoff): Promise<void> {
    while (!this.stopping && !this.finished) {
      const wait = state.unhealthyUntil - Date.now();
      if (wait > 0) {
        await this.sleep(Math.min(wait, 1000));
        this.checkWaitTimeout();
        continue;
      }
      if (!(await this.slot(state))) break;
      const hold = this.holdSeconds();
      const asked = Date.now();
      let res: Awaited<ReturnType<CiClient['requestBuild']>>;
      try {
        res = await state.client.requestBuild(state.entry.token, state.lastUpdate, hold, this.polling.signal);
      } finally {
        this.asking--;
        this.changed(false);
      }
      // a build that arrives just after a stop still runs: the server has already marked it running
      if (res.kind === 'build') {
        state.lastUpdate = res.lastUpdate;
        this.startJob(state, res);
        backoff.reset();
        continue;
      }
      if (this.stopping) break;
      this.checkWaitTimeout();
      switch (res.kind) {
        case 'none':
          state.lastUpdate = res.lastUpdate;
          // Held for a while (not a server that ignores the header, nor a draining one): ask again at once.
          if (hold > 0 && Date.now() - asked >= 1000) continue;
          break;
        case 'forbidden':
          state.unhealthyUntil = Date.now() + (this.o.unhealthyMs ?? 60_000);
          this.o.log.warn('the server refused the runner token (403): was the runner deleted? retrying later', { runner: state.entry.description || state.entry.id });
          continue;
        case 'error':
          this.o.log.warn('asking for a build failed', { runner: state.entry.description || state.entry.id, error: res.message });
          break;
      }
      await this.sleep(backoff.next());
    }
  }

  /** run-single --wait-timeout: nothing running and no build for that long ends the asking. */
  private checkWaitTimeout(): void {
    if (this.finished || this.o.waitTimeoutS === undefined || this.running.size > 0) return;
    if (Date.now() - this.lastBuildAt <= this.o.waitTimeoutS * 1000) return;
    this.o.log.info(`no build received in ${this.o.waitTimeoutS} seconds, exiting`);
    this.finished = true;
    this.changed();
  }

  private startJob(state: RunnerState, res: { build: BuildPayload }): void {
    const job = new BuildJob({ client: state.client, runner: state.entry, build: res.build, buildsDir: this.o.buildsDir, log: this.o.log, timing: this.o.timing });
    this.running.add(job);
    this.started++;
    if (this.o.maxBuilds !== undefined && this.started >= this.o.maxBuilds && !this.finished) {
      this.finished = true;
      this.o.log.info('this runner has processed its build limit, so now exiting');
    }
    void job.run().finally(() => {
      this.running.delete(job);
      this.lastBuildAt = Date.now();
      this.changed();
    });
  }

  /** Run until stopped (or the build limit / wait timeout of run-single); resolves when every build has finished. */
  async run(): Promise<void> {
    const bounds = this.o.backoff ?? new Backoff();
    this.o.log.info(`runner started; polling for builds`, { runners: this.states.length, concurrent: this.o.concurrent });
    await Promise.all(this.states.map((s) => this.ask(s, new Backoff(bounds.min, bounds.max))));
    while (this.running.size > 0) await this.sleep(60_000);
    await Promise.all(this.states.map((s) => s.client.close().catch(() => undefined)));
    this.o.log.info(this.forced ? 'stopped (running builds were killed)' : 'stopped');
  }
}
