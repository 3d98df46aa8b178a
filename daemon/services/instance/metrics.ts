/**
 * What GET /-/metrics adds to the counters and histograms of daemon/metrics.ts, read at scrape time: the build
 * queue, the webhook outbox, git processes, the PostgreSQL connection pool, process memory, CPU, open files and event
 * loop lag. Nothing here runs per request.
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { AppContext } from '../../context.js';
import { heldBuildRequests } from '../ci/build-queue.js';
import { gitProcessesRunning, renderMetrics, SQLITE_TRANSACTION_SECONDS, type Gauge } from '../../metrics.js';
import { countQueuedBuilds } from '../../db/builds.js';
import { countPendingHookDeliveries } from '../../db/hooks.js';

let loopDelay: IntervalHistogram | null = null;

/** Event loop delay since the previous scrape (the monitor starts on the first scrape, so an unscraped daemon pays nothing). */
function eventLoopGauges(): Gauge[] {
  if (!loopDelay) {
    loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
  }
  const h = loopDelay;
  const seconds = (ns: number) => (Number.isFinite(ns) && h.count > 0 ? ns / 1e9 : 0);
  const gauges: Gauge[] = [
    { name: 'nodejs_eventloop_lag_mean_seconds', help: 'Mean event loop delay since the previous scrape', samples: [{ value: seconds(h.mean) }] },
    { name: 'nodejs_eventloop_lag_p99_seconds', help: '99th percentile of the event loop delay since the previous scrape', samples: [{ value: seconds(h.percentile(99)) }] },
    { name: 'nodejs_eventloop_lag_max_seconds', help: 'Largest event loop delay since the previous scrape', samples: [{ value: seconds(h.max) }] },
  ];
  h.reset();
  return gauges;
}

function openFiles(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null; // not Linux
  }
}

function processGauges(): Gauge[] {
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  const gauges: Gauge[] = [
    { name: 'process_resident_memory_bytes', help: 'Resident set size', samples: [{ value: mem.rss }] },
    { name: 'nodejs_heap_size_total_bytes', help: 'V8 heap allocated', samples: [{ value: mem.heapTotal }] },
    { name: 'nodejs_heap_size_used_bytes', help: 'V8 heap in use', samples: [{ value: mem.heapUsed }] },
    { name: 'nodejs_external_memory_bytes', help: 'Memory of C++ objects bound to JavaScript (buffers included)', samples: [{ value: mem.external }] },
    { name: 'process_cpu_seconds_total', help: 'User and system CPU time', type: 'counter', samples: [{ value: (cpu.user + cpu.system) / 1e6 }] },
    { name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch', samples: [{ value: Math.round(Date.now() / 1000 - process.uptime()) }] },
  ];
  const fds = openFiles();
  if (fds !== null) gauges.push({ name: 'process_open_fds', help: 'Open file descriptors', samples: [{ value: fds }] });
  return gauges;
}

async function queueGauges(ctx: AppContext): Promise<Gauge[]> {
  const builds = await countQueuedBuilds(ctx.data);
  const outbox = await countPendingHookDeliveries(ctx.data);
  const count = (status: 'pending' | 'running') => builds[status];
  return [
    { name: 'gantry_builds', help: 'Builds waiting for a runner (pending) and being run (running)', samples: (['pending', 'running'] as const).map((s) => ({ labels: { status: s }, value: count(s) })) },
    { name: 'gantry_webhook_outbox_pending', help: 'Webhook deliveries not yet sent (the outbox depth)', samples: [{ value: outbox }] },
    { name: 'gantry_git_processes', help: 'git child processes running now', samples: [{ value: gitProcessesRunning() }] },
    { name: 'gantry_runner_held_requests', help: 'Runner build requests (POST /ci/api/v1/builds/register) held until a build is queued or the hold ends', samples: [{ value: heldBuildRequests(ctx) }] },
  ];
}

/** What the PostgreSQL executor exposes of its pg pool (db/layer/postgres.ts). */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** The pooled connections of this daemon (PostgreSQL only: SQLite has one connection and nothing to wait for). */
function poolGauges(ctx: AppContext): Gauge[] {
  const pool = (ctx.data as { pool?: PoolCounts }).pool;
  if (!pool) return [];
  return [
    {
      name: 'gantry_postgres_pool_connections',
      help: 'Connections of the PostgreSQL pool, in use by a query or transaction (busy) or idle',
      samples: [
        { labels: { state: 'busy' }, value: pool.totalCount - pool.idleCount },
        { labels: { state: 'idle' }, value: pool.idleCount },
      ],
    },
    { name: 'gantry_postgres_pool_waiting', help: 'Queries and transactions waiting for a connection of the pool', samples: [{ value: pool.waitingCount }] },
  ];
}

/** The whole metrics page of a daemon in the Prometheus text format. */
export async function metricsText(ctx: AppContext): Promise<string> {
  const queues = await queueGauges(ctx);
  // The SQLite transaction timings are process-wide: a daemon on PostgreSQL has none of its own to show.
  const omit = ctx.data.dialect.name === 'postgres' ? SQLITE_ONLY : undefined;
  return renderMetrics([...queues, ...poolGauges(ctx), ...processGauges(), ...eventLoopGauges()], omit, ctx.data.dialect.name);
}

const SQLITE_ONLY: ReadonlySet<string> = new Set([SQLITE_TRANSACTION_SECONDS]);
