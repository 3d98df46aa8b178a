/**
 * Durable project hook delivery: an outbox table (hook_deliveries) and a background worker that posts it.
 *
 * Producers call queueHookDeliveries(tx, projectId, event, payload) INSIDE the transaction that records what
 * happened (a push, an issue change, a note, a build, a pipeline): one pending row per hook of the project that is
 * subscribed to the event, so the delivery commits (or rolls back) with the change. The worker is woken right after
 * that transaction and also polls, so rows left by an earlier run (or another process) are sent too.
 *
 * The worker claims a due row atomically (UPDATE ... WHERE status = 'pending' AND next_attempt_at <= now, which
 * moves next_attempt_at to the end of a lease), posts the JSON payload with GitLab's headers (Content-Type,
 * X-Gitlab-Event, X-Gitlab-Token when the hook has a token, User-Agent) and a timeout, a few at a time. A 2xx answer
 * marks the row delivered (never sent again); anything else is retried with exponential backoff until the attempts
 * run out (failed). A daemon that dies mid-send leaves the row pending with a lease; it is sent again when the lease
 * ends (at least once). Every attempt of one delivery carries the same `Idempotency-Key` header (a UUID derived from
 * the row, as GitLab 17.4+ sends), so a receiver that got a delivery whose answer the daemon never recorded (killed
 * in between) can recognise the resend and process it once. Knobs for tests and operators: GANTRY_HOOK_RETRY_BASE_MS (default 10000) and
 * GANTRY_HOOK_MAX_ATTEMPTS (default 8), or the options of startHookDeliveryWorker.
 */
import { and, asc, eq, inArray, lt, lte, min, ne, sql } from 'drizzle-orm';
import type { Agent, Dispatcher } from 'undici';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { projectHooks } from '../db/schema.js';
import { hookDeliveries, type HookDeliveryRow, type HookEvent } from '../db/schema-hooks.js';
import { registerWorker } from '../background.js';
import type { Queries } from '../db/layer/types.js';
import type { HookEventKind } from './project-hooks.js';
import { onPush } from './push.js';

export { HOOK_EVENTS, type HookEvent } from '../db/schema-hooks.js';

/** The X-Gitlab-Event header of each event (GitLab: the hook name, singular and titleized). */
export const HOOK_EVENT_HEADER: Record<HookEvent, string> = {
  push: 'Push Hook', tag_push: 'Tag Push Hook', issue: 'Issue Hook', merge_request: 'Merge Request Hook', note: 'Note Hook',
  build: 'Build Hook', pipeline: 'Pipeline Hook',
};

/** The hook switch (project_hooks column) that subscribes a hook to each event. */
export const HOOK_EVENT_FLAG: Record<HookEvent, HookEventKind> = {
  push: 'push_events', tag_push: 'tag_push_events', issue: 'issues_events', merge_request: 'merge_requests_events', note: 'note_events',
  build: 'build_events', pipeline: 'pipeline_events',
};

const FLAG_COLUMN = {
  push_events: projectHooks.pushEvents, tag_push_events: projectHooks.tagPushEvents, issues_events: projectHooks.issuesEvents,
  merge_requests_events: projectHooks.mergeRequestsEvents, note_events: projectHooks.noteEvents, build_events: projectHooks.buildEvents,
  pipeline_events: projectHooks.pipelineEvents, wiki_page_events: projectHooks.wikiPageEvents,
} as const;

/** A database handle to write with: the caller's transaction (`tx`), or ctx.db outside one. */
export type HookWriter = Pick<AppContext['db'], 'select' | 'insert'>;

/**
 * Queue `payload` for every hook of the project subscribed to `event` (push -> push_events, tag_push ->
 * tag_push_events, issue -> issues_events, merge_request -> merge_requests_events, note -> note_events, build ->
 * build_events, pipeline -> pipeline_events). Call it inside the transaction that records the change, passing
 * `tx`, with the complete GitLab payload (object_kind ...); it is sent as is. The running workers are woken once the
 * synchronous transaction is over. Returns the number of deliveries queued.
 */
export function queueHookDeliveries(tx: HookWriter, projectId: number, event: HookEvent, payload: unknown): number {
  const flag = FLAG_COLUMN[HOOK_EVENT_FLAG[event]];
  const hooks = tx.select({ id: projectHooks.id }).from(projectHooks)
    .where(and(eq(projectHooks.projectId, projectId), eq(flag, true))).orderBy(asc(projectHooks.id)).all();
  if (!hooks.length) return 0;
  const t = now();
  const body = JSON.stringify(payload);
  tx.insert(hookDeliveries).values(hooks.map((h) => ({ hookId: h.id, event, payload: body, nextAttemptAt: t, createdAt: t }))).run();
  // better-sqlite3 transactions are synchronous: this runs after the commit (or the rollback, when it finds nothing).
  setImmediate(notifyHookDeliveries);
  return hooks.length;
}

/**
 * The async twin of queueHookDeliveries, on the data layer: call it inside the writing transaction (`tx`) of
 * ctx.data.transaction. The running workers of this process are woken on the next turn (after the commit on SQLite,
 * where a transaction runs within one turn; on PostgreSQL a worker that wakes before the commit finds nothing and the
 * poll, or the next wake, sends it). Returns the number of deliveries queued.
 */
export async function queueHookDeliveriesAsync(tx: Queries, projectId: number, event: HookEvent, payload: unknown): Promise<number> {
  const flag = HOOK_EVENT_FLAG[event];
  const hooks = await tx.all<{ id: number }>(`SELECT id FROM project_hooks WHERE project_id = ? AND ${flag} = TRUE ORDER BY id`, [projectId]);
  if (!hooks.length) return 0;
  const t = now();
  const body = JSON.stringify(payload);
  for (const h of hooks) {
    await tx.run('INSERT INTO hook_deliveries (hook_id, event, payload, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?)', [h.id, event, body, t, t]);
  }
  setImmediate(notifyHookDeliveries);
  return hooks.length;
}

/** Wake every running delivery worker now (queueHookDeliveries does this itself after the transaction). */
export function notifyHookDeliveries(): void {
  for (const w of running) w.wake();
}

// Pushes: one push or tag_push delivery per ref update, with the push data services/push.ts built.
onPush({
  inTransaction(tx, _ctx, push) {
    for (const u of push.updates) queueHookDeliveries(tx, push.project.id, u.data.object_kind, u.data);
  },
});

/** Retry delays as multiples of the base (10 s by default): 10 s, 30 s, 1 min, 5 min, 15 min, 1 h, 3 h, then 3 h. */
const BACKOFF_STEPS = [1, 3, 6, 30, 90, 360, 1080];

/** The wait before the next attempt after `attempts` failed ones. */
export function retryDelay(attempts: number, baseMs: number): number {
  return baseMs * BACKOFF_STEPS[Math.min(Math.max(attempts, 1), BACKOFF_STEPS.length) - 1];
}

/** Tuning of a delivery worker; every field has a default (the env variables, then built-in values). */
export interface HookWorkerOptions {
  /** First retry delay in ms (GANTRY_HOOK_RETRY_BASE_MS, default 10000); later ones grow from it. */
  retryBaseMs?: number;
  /** Attempts before a delivery is marked failed (GANTRY_HOOK_MAX_ATTEMPTS, default 8). */
  maxAttempts?: number;
  /** Deliveries sent at the same time (default 4). */
  concurrency?: number;
  /** Time allowed for one request, answer included (default 10000 ms). */
  timeoutMs?: number;
  /** How long a claimed row is held before another sender may take it (default timeout + 5 s). */
  leaseMs?: number;
  /** Longest sleep between looks at the table (default 30000 ms; the worker also wakes on new rows and due retries). */
  pollMs?: number;
  /** Delivered and failed rows older than this are removed (default 30 days). */
  retentionMs?: number;
  /** Where unexpected worker errors go (default: stderr). Failed deliveries are recorded on their rows, not logged. */
  log?: (message: string, err: unknown) => void;
}

/** A running delivery worker. */
export interface HookDeliveryWorker {
  /** Look for due deliveries now. */
  wake(): void;
  /** Stop: abort requests in flight and hand their rows back (pending, due now). */
  stop(): void;
}

const running = new Set<Worker>();

const envInt = (name: string): number | undefined => {
  const v = process.env[name];
  if (v === undefined || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v.trim());
};

const iso = (ms: number) => new Date(ms).toISOString();

/** A due delivery with what sending it needs from its hook. */
interface Claimed {
  id: number;
  event: HookEvent;
  payload: string;
  attempts: number;
  url: string;
  token: string | null;
  verifySsl: boolean;
}

/** The outcome of one attempt. */
interface Attempt {
  ok: boolean;
  status: number | null;
  error: string | null;
}

class Worker implements HookDeliveryWorker {
  private readonly o: Required<Omit<HookWorkerOptions, 'log'>> & Pick<HookWorkerOptions, 'log'>;
  private readonly inflight = new Map<number, AbortController>();
  private timer: NodeJS.Timeout | null = null;
  private woken = false;
  private stopped = false;
  private lastPrune = 0;
  /** undici and its two agents, loaded on the first delivery (the daemon's start does not pay for undici). */
  private http: Promise<{ request: typeof import('undici').request; agent: Agent; insecureAgent: Agent }> | null = null;

  constructor(private readonly ctx: AppContext, opts: HookWorkerOptions) {
    const timeoutMs = opts.timeoutMs ?? 10_000;
    this.o = {
      retryBaseMs: opts.retryBaseMs ?? envInt('GANTRY_HOOK_RETRY_BASE_MS') ?? 10_000,
      maxAttempts: Math.max(1, opts.maxAttempts ?? envInt('GANTRY_HOOK_MAX_ATTEMPTS') ?? 8),
      concurrency: Math.max(1, opts.concurrency ?? 4),
      timeoutMs,
      leaseMs: opts.leaseMs ?? timeoutMs + 5_000,
      pollMs: opts.pollMs ?? 30_000,
      retentionMs: opts.retentionMs ?? 30 * 24 * 3600_000,
      log: opts.log,
    };
  }

  private client() {
    this.http ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({ connect: { timeout: this.o.timeoutMs } }),
      insecureAgent: new Agent({ connect: { timeout: this.o.timeoutMs, rejectUnauthorized: false } }),
    }));
    return this.http;
  }

  wake(): void {
    if (this.stopped || this.woken) return;
    this.woken = true;
    setImmediate(() => {
      this.woken = false;
      this.pass();
    });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    running.delete(this);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ids = [...this.inflight.keys()];
    if (ids.length && this.ctx.db.$client.open) {
      // Interrupted sends do not count: the rows are due again for the next start.
      this.ctx.db.update(hookDeliveries)
        .set({ attempts: sql`max(${hookDeliveries.attempts} - 1, 0)`, nextAttemptAt: now(), lockedAt: null })
        .where(and(inArray(hookDeliveries.id, ids), eq(hookDeliveries.status, 'pending'))).run();
    }
    for (const c of this.inflight.values()) c.abort();
    this.inflight.clear();
    void this.http?.then((h) => Promise.all([h.agent.destroy(), h.insecureAgent.destroy()])).catch(() => undefined);
  }

  private log(message: string, err: unknown): void {
    if (this.o.log) this.o.log(message, err);
    else process.stderr.write(`gantry: ${message}: ${(err as Error)?.message ?? String(err)}\n`);
  }

  /** Claim what is due (up to the free slots), start sending it, and sleep until the next row is due. */
  private pass(): void {
    if (this.stopped) return;
    // A context whose database was closed without stopping the worker (tests) ends it quietly.
    if (!this.ctx.db.$client.open) return this.stop();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let delay = this.o.pollMs;
    try {
      this.prune();
      const free = this.o.concurrency - this.inflight.size;
      if (free > 0) {
        const t = now();
        const due = this.ctx.db.select({ id: hookDeliveries.id }).from(hookDeliveries)
          .where(and(eq(hookDeliveries.status, 'pending'), lte(hookDeliveries.nextAttemptAt, t)))
          .orderBy(asc(hookDeliveries.nextAttemptAt), asc(hookDeliveries.id)).limit(free).all();
        for (const { id } of due) {
          const claimed = this.claim(id);
          if (claimed) this.send(claimed);
        }
      }
      if (this.inflight.size < this.o.concurrency) {
        const next = this.ctx.db.select({ at: min(hookDeliveries.nextAttemptAt) }).from(hookDeliveries)
          .where(eq(hookDeliveries.status, 'pending')).get()?.at;
        // At least 20 ms: a due row another sender holds is not retried in a busy loop.
        if (next) delay = Math.min(this.o.pollMs, Math.max(20, Date.parse(next) - Date.now()));
      }
    } catch (e) {
      this.log('hook delivery worker failed', e);
    }
    this.timer = setTimeout(() => this.pass(), delay);
    this.timer.unref();
  }

  /** Take a row for sending if it is still pending and due; null when another sender was first. */
  private claim(id: number): Claimed | null {
    const t = Date.now();
    const at = iso(t);
    const taken = this.ctx.db.update(hookDeliveries)
      .set({ attempts: sql`${hookDeliveries.attempts} + 1`, nextAttemptAt: iso(t + this.o.leaseMs), lockedAt: at })
      .where(and(eq(hookDeliveries.id, id), eq(hookDeliveries.status, 'pending'), lte(hookDeliveries.nextAttemptAt, at))).run();
    if (taken.changes !== 1) return null;
    const row = this.ctx.db.select({
      id: hookDeliveries.id, event: hookDeliveries.event, payload: hookDeliveries.payload, attempts: hookDeliveries.attempts,
      url: projectHooks.url, token: projectHooks.token, verifySsl: projectHooks.enableSslVerification,
    }).from(hookDeliveries).innerJoin(projectHooks, eq(projectHooks.id, hookDeliveries.hookId)).where(eq(hookDeliveries.id, id)).get();
    return row ?? null;
  }

  private send(d: Claimed): void {
    const abort = new AbortController();
    this.inflight.set(d.id, abort);
    void this.post(d, abort.signal).then((result) => {
      // A stopped worker has handed the row back already.
      if (this.stopped || this.inflight.get(d.id) !== abort) return;
      this.inflight.delete(d.id);
      try {
        this.record(d, result);
      } catch (e) {
        this.log('could not record a hook delivery', e);
      }
      this.wake();
    });
  }

  /** POST the payload once; never throws. */
  private async post(d: Claimed, stop: AbortSignal): Promise<Attempt> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-gitlab-event': HOOK_EVENT_HEADER[d.event],
      'user-agent': 'Gantry',
      'idempotency-key': this.ctx.secrets.uuid('hook-delivery', String(d.id)),
    };
    if (d.token) headers['x-gitlab-token'] = d.token;
    const timeout = AbortSignal.timeout(this.o.timeoutMs);
    try {
      const http = await this.client();
      const res = await http.request(d.url, {
        method: 'POST', headers, body: d.payload, signal: AbortSignal.any([stop, timeout]),
        dispatcher: (d.verifySsl ? http.agent : http.insecureAgent) as Dispatcher,
        headersTimeout: this.o.timeoutMs, bodyTimeout: this.o.timeoutMs,
      });
      await res.body.dump({ limit: 64 * 1024 });
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { ok, status: res.statusCode, error: ok ? null : `HTTP ${res.statusCode}` };
    } catch (e) {
      if (timeout.aborted) return { ok: false, status: null, error: `timed out after ${this.o.timeoutMs} ms` };
      return { ok: false, status: null, error: errorText(e) };
    }
  }

  /** Write the outcome: delivered, due again after the backoff, or failed when out of attempts. */
  private record(d: Claimed, a: Attempt): void {
    const t = Date.now();
    const mine = and(eq(hookDeliveries.id, d.id), eq(hookDeliveries.status, 'pending'));
    const common = { lockedAt: null, lastStatusCode: a.status, lastError: a.error };
    let set: Partial<HookDeliveryRow>;
    if (a.ok) set = { ...common, status: 'delivered', deliveredAt: iso(t) };
    else if (d.attempts >= this.o.maxAttempts) set = { ...common, status: 'failed' };
    else set = { ...common, nextAttemptAt: iso(t + retryDelay(d.attempts, this.o.retryBaseMs)) };
    this.ctx.db.update(hookDeliveries).set(set).where(mine).run();
  }

  /** Remove finished rows past the retention period (at most once an hour). */
  private prune(): void {
    const t = Date.now();
    if (t - this.lastPrune < 3600_000) return;
    this.lastPrune = t;
    this.ctx.db.delete(hookDeliveries)
      .where(and(ne(hookDeliveries.status, 'pending'), lt(hookDeliveries.createdAt, iso(t - this.o.retentionMs)))).run();
  }
}

/** A network error as one line: `connect ECONNREFUSED 127.0.0.1:9`, `getaddrinfo ENOTFOUND host`, a TLS error... */
function errorText(e: unknown): string {
  const err = e as Error & { code?: string; cause?: Error & { code?: string } };
  const inner = err?.cause && err.cause.message ? err.cause : err;
  const text = inner?.message || String(e);
  const code = inner?.code ?? err?.code;
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}

/** Start a delivery worker for a context (the daemon does this through registerWorker; tests may call it directly). */
export function startHookDeliveryWorker(ctx: AppContext, opts: HookWorkerOptions = {}): HookDeliveryWorker {
  const w = new Worker(ctx, opts);
  running.add(w);
  w.wake();
  return w;
}

// The daemon's worker: started with the daemon (startBackground), stopped on shutdown.
const daemonWorkers = new Map<AppContext, HookDeliveryWorker>();
registerWorker({
  name: 'hook deliveries',
  start(ctx) {
    if (!daemonWorkers.has(ctx)) daemonWorkers.set(ctx, startHookDeliveryWorker(ctx));
  },
  stop() {
    for (const w of daemonWorkers.values()) w.stop();
    daemonWorkers.clear();
  },
});
