/**
 * Durable hook delivery: an outbox table (hook_deliveries) and a background worker that posts it. A row is aimed at a
 * project hook, a system hook (services/hooks/system-hooks.ts) or a project service (services/project-services/: Slack).
 *
 * Producers call queueHookDeliveries(tx, projectId, event, payload) INSIDE the transaction that records what
 * happened (a push, an issue change, a note, a build, a pipeline): one pending row per hook of the project that is
 * subscribed to the event, and one per active service of the project subscribed to it that has a message for it, so
 * the delivery commits (or rolls back) with the change. System hook events are queued the same way by the services of
 * users, projects, groups, members and keys (queueSystemHooks), and pushes here. The workers are woken right after that
 * transaction by a wake-up on `gantry_hooks` (db/layer/wake-ups.ts: on SQLite in this process; on PostgreSQL on every
 * daemon, a NOTIFY sent at the commit) and also poll, so rows left by an earlier run (or a notification lost) are sent too.
 *
 * A worker runs on the data layer and may run on several daemons at once over one PostgreSQL database: it claims due
 * rows in one statement (UPDATE ... WHERE id IN (the due pending rows ... FOR UPDATE SKIP LOCKED on PostgreSQL), which
 * moves next_attempt_at to the end of a lease), so each attempt is posted by one worker only. It posts the JSON
 * payload with GitLab's headers (Content-Type, X-Gitlab-Event (`System Hook` for system hooks; none for a service's
 * message, which goes to its webhook URL), X-Gitlab-Token when the hook has a token, User-Agent)
 * and a timeout, a few at a time. A 2xx answer marks the row delivered (never sent again); anything else is retried
 * with exponential backoff until the attempts run out (failed). A daemon that dies mid-send leaves the row pending
 * with a lease; it is sent again when the lease ends (at least once). Every attempt of one delivery carries the same
 * `Idempotency-Key` header (a UUID derived from the row, as GitLab 17.4+ sends), so a receiver that got a delivery
 * whose answer the daemon never recorded (killed in between) can recognise the resend and process it once. Knobs for
 * tests and operators: GANTRY_HOOK_RETRY_BASE_MS (default 10000) and GANTRY_HOOK_MAX_ATTEMPTS (default 8), or the
 * options of startHookDeliveryWorker.
 */
import type { Agent, Dispatcher } from 'undici';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { listenForWakeUps, type WakeUpListener } from '../../db/layer/wake-ups.js';
import type { HookEvent } from '../../db/schema-hooks.js';
import type { BackgroundWorker } from '../../background.js';
import type { Queries } from '../../db/layer/types.js';
import type { HookEventKind } from './project-hooks.js';
import { onPush } from '../repository/push.js';
import { HOOKS_CHANNEL, insertDeliveriesAsync, type QueuedDelivery } from './outbox.js';
import { parseProperties } from '../project-services/services.js';
import { slackMessage } from '../project-services/slack.js';
import { queueSystemHooks, systemPushData } from './system-hooks.js';
import {
  activeServicesWith, claimDueDeliveries, deliveryTargets, handBackDeliveries, markDelivered, markFailed, markRetry, nextDeliveryDue,
  projectHasHookOrServiceWith, projectHookIdsWith, pruneDeliveries,
} from '../../db/hooks.js';
import { projectNames } from '../../db/projects.js';

export { HOOK_EVENTS, type HookEvent } from '../../db/schema-hooks.js';
export { HOOKS_CHANNEL, insertDeliveriesAsync, type DeliveryTarget, type QueuedDelivery } from './outbox.js';

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

/** The X-Gitlab-Event header of every system hook delivery (8.13: 'system_hooks'.singularize.titleize). */
export const SYSTEM_HOOK_HEADER = 'System Hook';

/**
 * Queue `payload` for every hook of the project subscribed to `event` (push -> push_events, tag_push -> tag_push_events,
 * issue -> issues_events, merge_request -> merge_requests_events, note -> note_events, build -> build_events, pipeline ->
 * pipeline_events), with the complete GitLab payload (object_kind ...), sent as is; and, the one seam for services, the
 * message of every active service of the project subscribed to the event (Slack: services/project-services/slack.ts),
 * when 8.13 sends one for this payload. Call it inside the writing transaction (`tx`) of ctx.data.transaction. One read
 * of the subscribed hooks, one of the subscribed services and one INSERT of their rows. Returns the number of deliveries
 * queued.
 */
export async function queueHookDeliveries(tx: Queries, projectId: number, event: HookEvent, payload: unknown): Promise<number> {
  const hooks = await projectHookIdsWith(tx, projectId, HOOK_EVENT_FLAG[event]);
  const body = hooks.length ? JSON.stringify(payload) : '';
  const rows: QueuedDelivery[] = hooks.map((id) => ({ target: 'hook_id', id, event, body }));
  rows.push(...await serviceDeliveries(tx, projectId, event, payload));
  return insertDeliveriesAsync(tx, rows);
}

/** Whether the project has a hook or an active service subscribed to `event` (so its payload is worth building). */
export async function projectWantsEvent(q: Queries, projectId: number, event: HookEvent): Promise<boolean> {
  return projectHasHookOrServiceWith(q, projectId, HOOK_EVENT_FLAG[event]);
}

/** The deliveries of the project's active services subscribed to `event`: the service's message for the payload. */
async function serviceDeliveries(tx: Queries, projectId: number, event: HookEvent, payload: unknown): Promise<QueuedDelivery[]> {
  const services = await activeServicesWith(tx, projectId, HOOK_EVENT_FLAG[event]);
  if (!services.length) return [];
  const names = await projectNames(tx, projectId);
  if (!names) return [];
  // 8.13: the project's name_with_namespace without its spaces
  const projectName = `${names.namespaceName} / ${names.name}`.replace(/\s/g, '');
  const out: QueuedDelivery[] = [];
  for (const s of services) {
    const message = s.type === 'slack' ? slackMessage(event, payload as Record<string, unknown>, parseProperties(s.properties), projectName) : null;
    if (message) out.push({ target: 'service_id', id: s.id, event, body: JSON.stringify(message) });
  }
  return out;
}

// Pushes: one push or tag_push delivery per ref update, with the push data services/repository/push.ts built; and the system
// hooks subscribed to pushes (push_events) or tag pushes (tag_push_events) get 8.13's system push data.
onPush({
  async inTransactionAsync(tx, _ctx, push) {
    for (const u of push.updates) {
      await queueHookDeliveries(tx, push.project.id, u.data.object_kind, u.data);
      const tag = u.data.object_kind === 'tag_push';
      await queueSystemHooks(tx, systemPushData(u.data), tag ? 'tag_push_events' : 'push_events');
    }
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
  /** Stop: abort requests in flight and hand their rows back (pending, due now); resolves once they are. */
  stop(): Promise<void>;
}

const envInt = (name: string): number | undefined => {
  const v = process.env[name];
  if (v === undefined || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v.trim());
};

const iso = (ms: number) => new Date(ms).toISOString();

/** A due delivery with what sending it needs from its hook. */
interface Claimed {
  id: number;
  payload: string;
  attempts: number;
  url: string;
  token: string | null;
  verifySsl: boolean;
  /** The X-Gitlab-Event header (none for a service: Slack's webhook is not a GitLab hook). */
  header: string | null;
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
  /** The pass in progress, and whether a wake came during it (then another pass follows at once). */
  private passing = false;
  private again = false;
  private stopped = false;
  private lastPrune = 0;
  /** Its wake-ups on `gantry_hooks`. */
  private listener: WakeUpListener | null = null;
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

  /** Listen to the wake-ups of insertDeliveriesAsync (on PostgreSQL every daemon's); without them the poll still finds every row. */
  listen(): void {
    this.listener = listenForWakeUps(this.ctx.data, HOOKS_CHANNEL, () => this.wake(),
      (e) => this.log('hook delivery worker cannot listen for new deliveries (polling instead)', e));
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

  stop(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ids = [...this.inflight.keys()];
    for (const c of this.inflight.values()) c.abort();
    this.inflight.clear();
    void this.http?.then((h) => Promise.all([h.agent.destroy(), h.insecureAgent.destroy()])).catch(() => undefined);
    const unlisten = this.listener?.stop();
    // Interrupted sends do not count: the rows are due again for the next start (of any daemon).
    const handBack = ids.length && !this.closed()
      ? handBackDeliveries(this.ctx.data, ids, now()).then(() => undefined, (e: unknown) => {
          if (!this.closed()) this.log('could not hand back hook deliveries in flight', e);
        })
      : undefined;
    return Promise.all([unlisten, handBack]).then(() => undefined);
  }

  /** Whether the context's database was closed (a test that closed it without stopping the worker). */
  private closed(): boolean {
    if (this.ctx.data.sqlite) return !this.ctx.data.sqlite.isOpen();
    return (this.ctx.data as { pool?: { ending?: boolean } }).pool?.ending === true;
  }

  private log(message: string, err: unknown): void {
    if (this.o.log) this.o.log(message, err);
    else process.stderr.write(`gantry: ${message}: ${(err as Error)?.message ?? String(err)}\n`);
  }

  /** Claim what is due (up to the free slots), start sending it, and sleep until the next row is due. */
  private pass(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    // A context whose database was closed without stopping the worker (tests) ends it quietly.
    if (this.closed()) return void this.stop();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.passing = true;
    void this.look().then((delay) => {
      this.passing = false;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        return this.pass();
      }
      this.timer = setTimeout(() => this.pass(), delay);
      this.timer.unref();
    });
  }

  /** One look at the table: prune, claim and send, then how long to sleep. Never throws. */
  private async look(): Promise<number> {
    let delay = this.o.pollMs;
    try {
      await this.prune();
      const free = this.o.concurrency - this.inflight.size;
      if (free > 0) for (const claimed of await this.claim(free)) this.send(claimed);
      if (this.inflight.size < this.o.concurrency && !this.stopped) {
        const next = await nextDeliveryDue(this.ctx.data);
        // At least 20 ms: a due row another sender holds is not retried in a busy loop.
        if (next) delay = Math.min(this.o.pollMs, Math.max(20, Date.parse(next) - Date.now()));
      }
    } catch (e) {
      if (this.closed()) void this.stop();
      else if (!this.stopped) this.log('hook delivery worker failed', e);
    }
    return delay;
  }

  /**
   * Take up to `limit` due rows for sending, in one statement: each moves to the end of a lease (its next_attempt_at)
   * with one more attempt. On PostgreSQL the rows are locked with SKIP LOCKED, so workers of other daemons claiming at
   * the same moment take other rows; on SQLite the one writer makes the statement atomic. Returns what sending needs.
   */
  private async claim(limit: number): Promise<Claimed[]> {
    if (this.stopped) return [];
    const t = Date.now();
    const at = iso(t);
    const rows = await this.ctx.data.transaction((tx) => claimDueDeliveries(tx, at, iso(t + this.o.leaseMs), limit));
    if (!rows.length) return [];
    const targets = (column: 'hook_id' | 'system_hook_id' | 'service_id') =>
      deliveryTargets(this.ctx.data, column, [...new Set(rows.map((r) => r[column]).filter((id): id is number => id !== null))]);
    const [hooks, systemHooks, services] = await Promise.all([targets('hook_id'), targets('system_hook_id'), targets('service_id')]);
    const claimed: Claimed[] = [];
    const orphans: Claimed[] = [];
    for (const r of rows.sort((a, b) => a.id - b.id)) {
      const base = { id: r.id, payload: r.payload, attempts: r.attempts };
      if (r.hook_id !== null) {
        const h = hooks.get(r.hook_id);
        // a hook deleted meanwhile took its deliveries with it
        if (h) claimed.push({ ...base, url: h.url, token: h.token, verifySsl: !!h.enable_ssl_verification, header: HOOK_EVENT_HEADER[r.event as HookEvent] ?? null });
      } else if (r.system_hook_id !== null) {
        const h = systemHooks.get(r.system_hook_id);
        if (h) claimed.push({ ...base, url: h.url, token: h.token, verifySsl: !!h.enable_ssl_verification, header: SYSTEM_HOOK_HEADER });
      } else if (r.service_id !== null) {
        const s = services.get(r.service_id);
        // the service's webhook, read now: a service deactivated since the row was queued has none (the row fails)
        const webhook = s ? parseProperties(s.url).webhook : null;
        if (typeof webhook === 'string' && webhook) claimed.push({ ...base, url: webhook, token: null, verifySsl: true, header: null });
        else if (s) orphans.push({ ...base, url: '', token: null, verifySsl: true, header: null });
      }
    }
    for (const o of orphans) await this.record({ ...o, attempts: Math.max(o.attempts, this.o.maxAttempts) }, { ok: false, status: null, error: 'the service has no webhook' }, o.attempts);
    return claimed;
  }

  private send(d: Claimed): void {
    const abort = new AbortController();
    this.inflight.set(d.id, abort);
    void this.post(d, abort.signal).then(async (result) => {
      // A stopped worker has handed the row back already.
      if (this.stopped || this.inflight.get(d.id) !== abort) return;
      try {
        await this.record(d, result);
      } catch (e) {
        if (!this.closed()) this.log('could not record a hook delivery', e);
      }
      this.inflight.delete(d.id);
      this.wake();
    });
  }

  /** POST the payload once; never throws. */
  private async post(d: Claimed, stop: AbortSignal): Promise<Attempt> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Gantry',
      'idempotency-key': this.ctx.secrets.uuid('hook-delivery', String(d.id)),
    };
    if (d.header) headers['x-gitlab-event'] = d.header;
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
      // the one deadline is enforced twice (the abort signal, undici's headers/body timeouts): whichever fires first,
      // the attempt timed out
      const code = (e as { code?: unknown }).code;
      if (timeout.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
        return { ok: false, status: null, error: `timed out after ${this.o.timeoutMs} ms` };
      }
      return { ok: false, status: null, error: errorText(e) };
    }
  }

  /**
   * Write the outcome: delivered, due again after the backoff, or failed when out of attempts. Only while the row is
   * still this attempt's (pending, same attempt count): a sender whose lease ran out and whose row another worker took
   * meanwhile leaves the row to that one.
   */
  private async record(d: Claimed, a: Attempt, attempts = d.attempts): Promise<void> {
    const t = Date.now();
    const outcome = { id: d.id, attempts, status: a.status, error: a.error };
    if (a.ok) await markDelivered(this.ctx.data, outcome, iso(t));
    else if (d.attempts >= this.o.maxAttempts) await markFailed(this.ctx.data, outcome);
    else await markRetry(this.ctx.data, outcome, iso(t + retryDelay(d.attempts, this.o.retryBaseMs)));
  }

  /** Remove finished rows past the retention period (at most once an hour per worker; any daemon's worker may). */
  private async prune(): Promise<void> {
    const t = Date.now();
    if (t - this.lastPrune < 3600_000) return;
    this.lastPrune = t;
    await pruneDeliveries(this.ctx.data, iso(t - this.o.retentionMs));
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

/** Start a delivery worker for a context (the daemon does this through hookDeliveryWorker, in main.ts's list; tests may call it directly). */
export function startHookDeliveryWorker(ctx: AppContext, opts: HookWorkerOptions = {}): HookDeliveryWorker {
  const w = new Worker(ctx, opts);
  w.listen();
  w.wake();
  return w;
}

// The daemon's worker: started with the daemon (startBackground), stopped on shutdown.
const daemonWorkers = new Map<AppContext, HookDeliveryWorker>();
export const hookDeliveryWorker: BackgroundWorker = {
  name: 'hook deliveries',
  start(ctx) {
    if (!daemonWorkers.has(ctx)) daemonWorkers.set(ctx, startHookDeliveryWorker(ctx));
  },
  async stop(ctx) {
    const w = daemonWorkers.get(ctx);
    daemonWorkers.delete(ctx);
    await w?.stop();
  },
};
