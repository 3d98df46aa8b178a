/**
 * The asynchronous data layer (docs/design/postgres.md, "Data-layer shape"): one small interface over SQL text with
 * `?` placeholders, implemented for SQLite (better-sqlite3, the daemon's own connection) and for PostgreSQL (pg).
 * Every room reaches the database only through `ctx.data`.
 */

/** A row as the database returns it: plain object, column name to value. */
export type Row = Record<string, unknown>;

/** What a statement changed. `lastId`: the id of a row inserted with `RETURNING id` (both engines) or SQLite's rowid. */
export interface RunResult {
  changes: number;
  lastId?: number;
}

/** Statements on one engine: the database itself, or a transaction. */
export interface Queries {
  readonly dialect: Dialect;
  all<T = Row>(sql: string, args?: readonly unknown[]): Promise<T[]>;
  get<T = Row>(sql: string, args?: readonly unknown[]): Promise<T | undefined>;
  run(sql: string, args?: readonly unknown[]): Promise<RunResult>;
  /** Several statements without parameters (a migration file); only the PostgreSQL executor has it so far. */
  exec?(sql: string): Promise<void>;
  /** SQLite only: the wake-up listeners on this connection, by channel (db/layer/wake-ups.ts; the same map in its transactions). */
  readonly localWakeUps?: LocalWakeUps;
}

/** In-process wake-up listeners by channel: what the SQLite connection keeps instead of PostgreSQL's LISTEN. */
export type LocalWakeUps = Map<string, Set<(payload: string | null) => void>>;

export interface Database extends Queries {
  /**
   * BEGIN ... COMMIT (rolled back when `fn` throws). `fn` may await `tx` only: never git, storage, timers or the
   * network (on SQLite a transaction that is still open at the next turn of the event loop is rolled back and refused).
   * `tx` calls made side by side (`Promise.all`) run one at a time in call order on both engines (SQLite's are
   * synchronous; PostgreSQL's wait their turn on the transaction's one connection, which pg 9 requires).
   */
  transaction<T>(fn: (tx: Queries) => Promise<T>): Promise<T>;
  /** Several reads that must agree (a list's COUNT and its page): a read transaction on either engine. */
  snapshot<T>(fn: (q: Queries) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * Notifications across daemons: PostgreSQL's LISTEN/NOTIFY, on a connection of its own (absent on SQLite, where one
   * process owns the file). `fn` gets each payload sent on `channel` once the sending transaction commits, and null
   * after the listening connection was lost and made again (notifications may have been missed meanwhile: look
   * again). Resolves once listening, to a function that stops it.
   */
  listen?(channel: string, fn: (payload: string | null) => void): Promise<() => Promise<void>>;
  /** Send a notification (outside a transaction; inside one, `SELECT pg_notify(?, ?)` on `tx` is sent at its commit). */
  notify?(channel: string, payload?: string): Promise<void>;
  /**
   * PostgreSQL only: run `fn` while holding the session advisory lock `key` (pg_try_advisory_lock on a connection of
   * its own); null without running it when another session holds the lock.
   */
  withAdvisoryLock?<T>(key: number, fn: () => Promise<T>): Promise<T | null>;
  /** SQLite only: the connection's state, read synchronously (the caches exact until the next write, db/read-cache.ts). */
  readonly sqlite?: SqliteConnectionState;
}

/** What the SQLite layer tells about its one connection, synchronously. */
export interface SqliteConnectionState {
  /**
   * Whether a transaction of the layer is open on the connection (kept in JS by the layer, which runs every BEGIN:
   * true from BEGIN until the connection has left the transaction).
   */
  inTransaction(): boolean;
  /** Whether the connection is still open. */
  isOpen(): boolean;
  /** Rows written on this connection so far (total_changes()): moves with every write of this process. */
  totalChanges(): number;
  /**
   * Statements that may write (not read-only) the layer has run on this connection so far, counted before each runs:
   * moves with every write of this process, and with writes that changed no row. Every statement of the daemon's
   * connection goes through the layer once it is open (the migrations run before), so the caches' version
   * (db/read-cache.ts) reads this JS counter instead of total_changes(), a statement of its own.
   */
  writes(): number;
  /** PRAGMA data_version: moves with every commit of another connection to the file. */
  dataVersion(): number;
}

/**
 * The SQL that differs between the engines, as fragments. Everything else is written once: booleans as `TRUE`/`FALSE`
 * and bound as JS booleans, timestamps as ISO 8601 text (PostgreSQL's timestamptz reads back as the same string),
 * `INSERT ... ON CONFLICT ... DO NOTHING/UPDATE`, `RETURNING`, `COALESCE`, `CASE`.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** `IN ${inIds}` with the parameter `ids(list)`: one statement text for any number of ids. */
  readonly inIds: string;
  /** The parameter of `inIds` and `idList` (repeats dropped). */
  ids(list: readonly number[]): unknown;
  /**
   * The ids of the parameter `ids(list)` as a table `alias` with one column, `value`, to join from:
   * `FROM ${idList('j')} CROSS JOIN t WHERE t.id = j.value`. On SQLite an `IN ${inIds}` builds a temporary index of
   * the list for every statement (an 88 KiB page cache each: mmap, page faults, munmap), which the list pages paid
   * several times a request; a join from the list reads it as it is.
   */
  idList(alias: string): string;
  /** Case-insensitive equality of a column to a parameter: `username = ? COLLATE NOCASE` / `lower(username) = lower(?)`. */
  nocaseEq(column: string): string;
  /** Case-insensitive LIKE (use with likePattern() and `ESCAPE '\'`): `LIKE` / `ILIKE`. */
  readonly ilike: string;
  /** Today's UTC date as `YYYY-MM-DD` text, for comparisons with date columns. */
  readonly today: string;
  /** The smaller of two numbers: `MIN(a, b)` / `LEAST(a, b)`. */
  least(a: string, b: string): string;
  /** The larger of two numbers: `MAX(a, b)` / `GREATEST(a, b)`. */
  greatest(a: string, b: string): string;
}
