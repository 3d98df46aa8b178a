/**
 * The wake-up side of the build queue (long-polling POST /ci/api/v1/builds/register, issue 26 item 3): a transaction
 * that makes a build pending signals it (signalBuildQueued), and the runners held by this daemon for lack of a build
 * (BuildWaiters) try their claim again. A signal is only a hint: the claim (services/ci/runners.ts claimBuild) stays the
 * only decider of who gets a build, so a build is never handed out twice, and a lost signal costs at most one hold.
 *
 * The signal is a wake-up on the channel `gantry_builds` with the payload '<project id>:<build id>,...'
 * (db/layer/wake-ups.ts): on PostgreSQL a NOTIFY sent at the commit (never for a rollback) to every daemon, this one
 * included; on SQLite the waiters of this process, on the next turn.
 */
import { stateSlot, type AppContext } from '../../context.js';
import type { Database, Queries } from '../../db/layer/types.js';
import { listenForWakeUps, wakeAtCommit, type WakeUpListener } from '../../db/layer/wake-ups.js';
import type { CommitStatusRow, RunnerRow } from '../../db/schema-ci.js';

/** The notification channel that tells every daemon a build was queued (PostgreSQL). */
export const BUILDS_CHANNEL = 'gantry_builds';

/** The runner waiters of a daemon (its runner API's), for its count of held requests. */
const WAITERS = stateSlot('runner waiters', () => new Set<BuildWaiters>());

/** Count `waiters`' holds as this daemon's (until the returned function is called). */
export function countHeldRequests(ctx: AppContext, waiters: BuildWaiters): () => void {
  const all = ctx.state.get(WAITERS);
  all.add(waiters);
  return () => void all.delete(waiters);
}

/** Build requests held now by this daemon (GET /-/metrics: gantry_runner_held_requests). */
export function heldBuildRequests(ctx: AppContext): number {
  let n = 0;
  for (const w of ctx.state.get(WAITERS)) n += w.size;
  return n;
}

/** Longest notification payload sent (PostgreSQL refuses 8000 bytes and more). */
const MAX_PAYLOAD = 7000;

/**
 * Signal, inside the transaction that made these builds pending, that they wait for a runner: one notification per
 * project (ids comma-separated, split below PostgreSQL's payload limit), so a stage of many builds is one round trip.
 * Generic commit statuses are not signalled.
 */
export async function signalBuildsQueued(tx: Queries, builds: readonly Pick<CommitStatusRow, 'id' | 'projectId' | 'type'>[]): Promise<void> {
  const byProject = new Map<number, number[]>();
  for (const b of builds) if (b.type === 'build') byProject.set(b.projectId, [...(byProject.get(b.projectId) ?? []), b.id]);
  if (byProject.size === 0) return;
  for (const [projectId, ids] of byProject) {
    let payload = '';
    for (const id of ids) {
      if (payload && payload.length + String(id).length + 1 > MAX_PAYLOAD) {
        await wakeAtCommit(tx, BUILDS_CHANNEL, `${projectId}:${payload}`);
        payload = '';
      }
      payload += payload ? `,${id}` : String(id);
    }
    await wakeAtCommit(tx, BUILDS_CHANNEL, `${projectId}:${payload}`);
  }
}

/** signalBuildsQueued for one build. */
export const signalBuildQueued = (tx: Queries, build: Pick<CommitStatusRow, 'id' | 'projectId' | 'type'>): Promise<void> => signalBuildsQueued(tx, [build]);

/** What a held request is answered with: a claimed build, or null (nothing came: 204). */
export type Claimed = { build: CommitStatusRow; token: string } | null;

/** How BuildWaiters claims for a runner (claimBuild on the runner as it is now; null when it is gone or paused). */
export type ClaimFn = (runnerId: number, current?: RunnerRow) => Promise<Claimed>;

/** Which of these builds still wait for a runner (pending, none assigned). */
export type PendingFn = (buildIds: readonly number[]) => Promise<number[]>;

const isId = (n: number) => Number.isSafeInteger(n) && n > 0 && n <= 2147483647;

interface Waiter {
  runnerId: number;
  /** The projects whose builds it may take; null: any project (a shared runner that is not locked). */
  projects: ReadonlySet<number> | null;
  state: 'held' | 'claiming' | 'done';
  /** A wake-up came while it was claiming: claim once more. */
  again: boolean;
  /** Its hold ended (timeout, drain, client gone) while it was claiming: answer once the claim is done. */
  expired: boolean;
  timer: NodeJS.Timeout | null;
  resolve: (r: Claimed) => void;
  reject: (e: unknown) => void;
}

/**
 * The runners this daemon holds, in arrival order. A wake-up for build B of project P marks the waiters that may take
 * P's builds (and every unlocked shared runner) to try again; one pass at a time tries them in order, oldest first, one
 * claim after another, while a signalled build still waits for a runner (so a build another daemon's runner took
 * costs one lookup here, not a claim per held runner). No timer polls the database: each
 * waiter has one timer, its hold's end.
 */
export class BuildWaiters {
  private readonly waiters = new Set<Waiter>();
  private readonly toTry = new Set<Waiter>();
  /** The builds signalled for this pass; null after a wake-up that names none (a lost LISTEN): try every waiter. */
  private signalled: Set<number> | null = new Set();
  private passing = false;
  private closed = false;
  private listener: WakeUpListener | null = null;

  constructor(
    private readonly claim: ClaimFn,
    private readonly pending: PendingFn,
    private readonly log: (message: string, e: unknown) => void = () => undefined,
  ) {}

  /** Start receiving the wake-ups of signalBuildsQueued (on PostgreSQL every daemon's). */
  start(data: Database): void {
    this.listener = listenForWakeUps(data, BUILDS_CHANNEL, (payload) => {
      // null (notifications may have been lost) or a payload not understood: anything may have changed
      const m = payload === null ? null : /^(\d+):(\d+(?:,\d+)*)$/.exec(payload);
      this.woken(m ? Number(m[1]) : null, m ? m[2]!.split(',').map(Number) : null);
    }, (e) => this.log('held runners cannot listen for queued builds (they wait for their hold to end instead)', e));
  }

  /** How many requests are held now. */
  get size(): number {
    return this.waiters.size;
  }

  /**
   * Hold a runner for up to `ms`: claims once at once (so a build queued just before cannot be missed), then on each
   * wake-up for its projects, until it got a build or the hold ends (null). `gone` fires when the client went away.
   */
  hold(runner: RunnerRow, projects: readonly number[] | null, ms: number, gone: (stop: () => void) => void): Promise<Claimed> {
    return new Promise<Claimed>((resolve, reject) => {
      const w: Waiter = {
        runnerId: runner.id, projects: projects ? new Set(projects) : null, state: 'held', again: false, expired: false, timer: null, resolve, reject,
      };
      if (this.closed) return void this.claim(runner.id, runner).then(resolve, reject); // stopping: no hold
      this.waiters.add(w);
      w.timer = setTimeout(() => this.expire(w), ms);
      gone(() => this.expire(w));
      void this.attempt(w, runner);
    });
  }

  /** End every hold now (the drain): held requests answer 204, those claiming answer once their claim is done. */
  close(): void {
    this.closed = true;
    for (const w of [...this.waiters]) this.expire(w);
  }

  /** Stop listening (the app closes). */
  async stop(): Promise<void> {
    this.close();
    await this.listener?.stop();
  }

  private woken(projectId: number | null, buildIds: readonly number[] | null): void {
    if (this.closed || this.waiters.size === 0) return;
    const known = projectId !== null && buildIds !== null && isId(projectId) && buildIds.every(isId);
    let marked = false;
    for (const w of this.waiters) {
      if (known && w.projects && !w.projects.has(projectId)) continue;
      if (w.state === 'claiming') w.again = true;
      else this.toTry.add(w);
      marked = true;
    }
    if (!marked) return;
    if (!known) this.signalled = null;
    else for (const id of buildIds) this.signalled?.add(id);
    void this.pass();
  }

  private async pass(): Promise<void> {
    if (this.passing) return;
    this.passing = true;
    try {
      while (this.toTry.size > 0) {
        const w = this.toTry.values().next().value!;
        this.toTry.delete(w);
        if (w.state === 'claiming') w.again = true;
        if (w.state !== 'held') continue;
        await this.attempt(w);
        if (this.signalled && this.toTry.size > 0) {
          // Go on only while a signalled build still waits (once taken, here or on another daemon: stop).
          const asked = [...this.signalled];
          const waiting = new Set(await this.pending(asked));
          for (const id of asked) if (!waiting.has(id)) this.signalled?.delete(id);
          if (this.signalled?.size === 0) break;
        }
      }
    } catch (e) {
      this.log('held runners could not be woken (they wait for their hold to end instead)', e);
    } finally {
      this.toTry.clear();
      this.signalled = new Set();
      this.passing = false;
    }
  }

  /** Claim for a waiter (again while wake-ups came meanwhile); true when it got a build. */
  private async attempt(w: Waiter, current?: RunnerRow): Promise<boolean> {
    w.state = 'claiming';
    w.again = false;
    try {
      for (;;) {
        const got = await this.claim(w.runnerId, current);
        current = undefined;
        if (got) {
          this.finish(w, got);
          return true;
        }
        if (w.expired) break;
        if (!w.again) {
          w.state = 'held';
          return false;
        }
        w.again = false;
      }
    } catch (e) {
      this.finish(w, null, e);
      return false;
    }
    this.finish(w, null);
    return false;
  }

  private expire(w: Waiter): void {
    if (w.state === 'done') return;
    if (w.state === 'claiming') w.expired = true;
    else this.finish(w, null);
  }

  private finish(w: Waiter, result: Claimed, error?: unknown): void {
    if (w.state === 'done') return;
    w.state = 'done';
    if (w.timer) clearTimeout(w.timer);
    this.waiters.delete(w);
    this.toTry.delete(w);
    if (error !== undefined) w.reject(error);
    else w.resolve(result);
  }
}
