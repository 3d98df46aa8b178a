/**
 * Process metrics in the Prometheus text exposition format (version 0.0.4), without a client library: counters and
 * histograms that the hot paths update with one increment or one observe (no allocation once a series exists), and
 * a formatter that GET /-/metrics calls. Lowest floor: db/ and git/ observe here; values that are read at scrape
 * time (queue depths, memory) are added by the caller as gauges.
 */

/** Latency buckets in seconds (HTTP requests, SQLite transactions). */
export const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** Buckets for git processes, which run from milliseconds (rev-parse) to minutes (a clone of a big repository). */
export const PROCESS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] as const;

/** A histogram series: per-bucket counts (not cumulative until rendered), sum and count. */
export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  /** Record one value (seconds). */
  observe(value: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    if (i < b.length) this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/** A counter series. */
export class Counter {
  value = 0;

  inc(by = 1): void {
    this.value += by;
  }
}

type Labels = Record<string, string>;

interface Family<T> {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  series: Map<string, { labels: Labels; metric: T }>;
  make(): T;
}

const families: Family<Counter | Histogram>[] = [];

function family<T extends Counter | Histogram>(name: string, help: string, type: Family<T>['type'], make: () => T) {
  const f: Family<T> = { name, help, type, series: new Map(), make };
  families.push(f as Family<Counter | Histogram>);
  /** The series of these label values, created on first use (callers keep it to skip the lookup next time). */
  return (labels: Labels = {}): T => {
    const key = JSON.stringify(labels);
    let s = f.series.get(key);
    if (!s) {
      s = { labels, metric: make() };
      f.series.set(key, s);
    }
    return s.metric;
  };
}

/** A counter family; call the result with label values to get a series. */
export const counter = (name: string, help: string) => family(name, help, 'counter', () => new Counter());
/** A histogram family; call the result with label values to get a series. */
export const histogram = (name: string, help: string, bounds: readonly number[] = LATENCY_BUCKETS) =>
  family(name, help, 'histogram', () => new Histogram(bounds));

/** HTTP requests by route pattern (never the raw URL), method and status class. */
const httpDuration = histogram('gantry_http_request_duration_seconds', 'HTTP request latency by route pattern, method and status class');

/** The per-status-class series of one route and method, indexed by the status's first digit. */
export class RouteSeries {
  private readonly classes: (Histogram | undefined)[] = [];

  constructor(private readonly route: string, private readonly method: string) {}

  /** Record one finished request. */
  observe(status: number, seconds: number): void {
    const c = (status / 100) | 0;
    (this.classes[c] ??= httpDuration({ route: this.route, method: this.method, status: `${c}xx` })).observe(seconds);
  }
}

const routes = new Map<string, RouteSeries>();

/** The series of a route pattern and method (one object per pair, shared by every app in the process). */
export function routeSeries(route: string, method: string): RouteSeries {
  const key = `${method} ${route}`;
  let s = routes.get(key);
  if (!s) {
    s = new RouteSeries(route, method);
    routes.set(key, s);
  }
  return s;
}

/** The family of SQLite transaction timings (a daemon on PostgreSQL leaves it out of its page). */
export const SQLITE_TRANSACTION_SECONDS = 'gantry_sqlite_transaction_duration_seconds';
/** Transactions on the SQLite database, from BEGIN to COMMIT or ROLLBACK. */
export const sqliteTransactionSeconds = histogram(SQLITE_TRANSACTION_SECONDS, 'SQLite transaction time, BEGIN to COMMIT (outermost transactions)')();

/**
 * Statements sent to the database, by engine: every statement of the data layer (BEGIN, COMMIT and ROLLBACK
 * included: on PostgreSQL each is a round trip).
 * The per-request cost of a route is the difference across requests (scripts/bench/engines.mjs reads it so).
 */
const dbStatements = counter('gantry_db_statements_total', 'Statements sent to the database (BEGIN and COMMIT included), by engine');
/** The statement counter of an engine (its series appears once a database of that engine is opened). */
export const dbStatementsOf = (engine: 'sqlite' | 'postgres'): Counter => dbStatements({ engine });

const gitDuration = histogram('gantry_git_process_duration_seconds', 'git child processes by subcommand, from spawn to exit', PROCESS_BUCKETS);
const gitSeries = new Map<string, Histogram>();
let gitRunning = 0;

/** Note a git process starting; returns the function to call when it exits. */
export function gitProcessStarted(subcommand: string | undefined): () => void {
  const name = subcommand ?? 'git';
  let h = gitSeries.get(name);
  if (!h) gitSeries.set(name, (h = gitDuration({ command: name })));
  const series = h;
  const started = performance.now();
  gitRunning++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    gitRunning--;
    series.observe((performance.now() - started) / 1000);
  };
}

/** git processes running now. */
export const gitProcessesRunning = () => gitRunning;

/** A value read at scrape time. */
export interface Gauge {
  name: string;
  help: string;
  type?: 'gauge' | 'counter';
  samples: { labels?: Labels; value: number }[];
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function labelText(labels: Labels | undefined, extra?: [string, string]): string {
  const parts = Object.entries(labels ?? {}).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra) parts.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

const num = (v: number) => (Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v));

/**
 * Everything in the text exposition format: the registered families (but those named in `omit`, and the series of
 * another `engine`), then the given scrape-time gauges.
 */
export function renderMetrics(gauges: readonly Gauge[] = [], omit?: ReadonlySet<string>, engine?: 'sqlite' | 'postgres'): string {
  const out: string[] = [];
  for (const f of families) {
    if (omit?.has(f.name)) continue;
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const { labels, metric } of f.series.values()) {
      // a series of another engine's databases (one process may open both: the tests, gantryd migrate-db) is not this daemon's
      if (engine && labels.engine !== undefined && labels.engine !== engine) continue;
      if (metric instanceof Counter) {
        out.push(`${f.name}${labelText(labels)} ${num(metric.value)}`);
        continue;
      }
      let cumulative = 0;
      metric.bounds.forEach((bound, i) => {
        cumulative += metric.counts[i]!;
        out.push(`${f.name}_bucket${labelText(labels, ['le', String(bound)])} ${cumulative}`);
      });
      out.push(`${f.name}_bucket${labelText(labels, ['le', '+Inf'])} ${metric.count}`);
      out.push(`${f.name}_sum${labelText(labels)} ${num(metric.sum)}`, `${f.name}_count${labelText(labels)} ${metric.count}`);
    }
  }
  for (const g of gauges) {
    out.push(`# HELP ${g.name} ${escapeHelp(g.help)}`, `# TYPE ${g.name} ${g.type ?? 'gauge'}`);
    for (const s of g.samples) out.push(`${g.name}${labelText(s.labels)} ${num(s.value)}`);
  }
  return `${out.join('\n')}\n`;
}
