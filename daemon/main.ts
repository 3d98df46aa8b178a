/** gantryd: flags/env -> config -> storage -> app -> listen; SIGTERM drains (readiness fails, requests finish), then exits 0. */
import { Command } from 'commander';
import pino from 'pino';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, printableConfig, ConfigError, type DaemonConfig, type DaemonFlags } from './config.js';
import { DaemonState, dataPaths, type AppContext } from './context.js';
import { SchemaError } from './db/connection.js';
import { openDataLayer } from './db/layer/open.js';
import { withDaemonMark } from './run-lock.js';
import { bootstrap, loadSecrets, prepareDataDir } from './bootstrap.js';
import { buildApp } from './app.js';
import { startBackground, stopBackground, type BackgroundWorker } from './background.js';
import { advertisedSshAddress } from './ssh/address.js';
import { startSshServer, type SshLimits, type SshServer } from './ssh/server.js';
import { startIdleReclaimer } from './idle-memory.js';
import { hookDeliveryWorker } from './services/hooks/deliveries.js'; // (and its push listener, registered on import)
import { artifactExpiryWorker, stuckBuildsWorker } from './services/ci/builds.js';
import { mergeLockSweepWorker } from './services/merge-requests/merge.js';
import { signInThrottlePruneWorker } from './policy/sign-in-throttle.js';

/**
 * Every background job of the daemon, in one list (each safe with several daemons at once: see background.ts):
 * checked at start, each job exactly once.
 */
export const BACKGROUND_WORKERS: readonly BackgroundWorker[] = [
  hookDeliveryWorker, artifactExpiryWorker, stuckBuildsWorker, mergeLockSweepWorker, signInThrottlePruneWorker,
];

/** Start a daemon for a configuration; resolves once listening. Used by main() and by tests. */
export async function startDaemon(
  config: DaemonConfig,
  opts: { logger?: pino.Logger | false; onListening?: (url: string) => void; sshLimits?: SshLimits } = {},
) {
  const paths = dataPaths(config.dataDir);
  prepareDataDir(paths);
  const secrets = loadSecrets(paths.data);
  // SQLite in the data directory, or PostgreSQL with --database-url.
  // The data dir is marked in use until close() (run-lock.ts: gantryd migrate-db refuses to run meanwhile).
  const database = await withDaemonMark(config.dataDir, () => openDataLayer(config));
  const { data } = database;
  let externalUrl = config.externalUrl ?? `http://${config.host}:${config.port}`;
  const ctx: AppContext = { data, config, secrets, paths, externalUrl: () => externalUrl, state: new DaemonState() };
  // The first start hashes the root password (scrypt, in libuv's thread pool): the routes are built meanwhile.
  const booting = bootstrap(ctx);
  booting.catch(() => undefined); // awaited below; this only keeps an early failure from counting as unhandled

  const logger = opts.logger === false ? false : opts.logger ?? pino({ level: config.logLevel }, pino.destination(2));
  let app: Awaited<ReturnType<typeof buildApp>>;
  let generatedPassword: string | null;
  try {
    app = await buildApp(ctx, { logger: logger ? { loggerInstance: logger } : false });
    ({ generatedPassword } = await booting);
  } catch (e) {
    await database.close();
    throw e;
  }
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (e) {
    await database.close();
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new ConfigError(`port ${config.port} on ${config.host} is already in use; stop the other process or choose another port with --port (0 picks a free one)`);
    }
    if (code === 'EACCES') throw new ConfigError(`not allowed to listen on ${config.host}:${config.port}; choose a port above 1024 with --port`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError(`cannot listen on host ${config.host}; use an address of this machine with --host`);
    throw e;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${hostForUrl}:${port}`;
  if (!config.externalUrl) externalUrl = url;
  // SSH binds its port now (a taken port that was given ends the start as a taken HTTP port does); ssh2 loads after.
  let ssh: SshServer | null = null;
  // Why SSH is not running although it was not switched off (the default port taken): main() says it on the terminal.
  let sshWarning: string | null = null;
  const log = daemonLog(logger);
  try {
    // On either engine; several daemons on one data dir serve the one host key stored there (ssh/host-key.ts).
    ssh = await startSshServer(ctx, (level, message, err) => {
      if (level === 'warn') sshWarning ??= message;
      log(level, message, err);
    }, opts.sshLimits);
  } catch (e) {
    await app.close();
    await database.close();
    throw e;
  }
  const sshAddress = advertisedSshAddress(config.ssh, externalUrl, ssh?.port ?? null);
  ctx.sshAddress = () => sshAddress;
  startBackground(ctx, BACKGROUND_WORKERS);
  opts.onListening?.(url);
  // Route schemas compile on first use (about 1 ms each, once) and only then: compiling all ~300 routes' schemas
  // after the start held about 20 MB for routes an installation may never call (issue 26: idle RSS under 100 MB).

  /**
   * Stop without losing a request (README "Running several daemons"): GET /-/readiness answers 503 at once and every
   * answer from then on closes its connection; when a balancer has checked readiness, new connections are still
   * served for `graceMs` so that it sees the 503 and stops sending; then the HTTP and SSH ports close, idle
   * keep-alive connections are closed, requests in flight (and those still arriving on open connections) are
   * answered, and once they are all done the background workers stop and the database closes. Whatever still runs
   * `timeoutMs` after the start is cut.
   */
  let stopping: Promise<void> | null = null;
  const drain = (opts: Partial<DrainOptions> & { shed?: boolean } = {}) => (stopping ??= (async () => {
    const { graceMs, timeoutMs } = { ...DEFAULT_DRAIN, ...opts };
    const started = Date.now();
    const log = daemonLog(logger);
    app.drain.draining = true;
    for (const f of app.drain.onDrain) f();
    app.server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => res.setHeader('connection', 'close'));
    const grace = app.drain.readinessChecked ? Math.min(graceMs, timeoutMs) : 0;
    log('info', grace ? `stopping: readiness answers 503; still serving new connections for ${grace / 1000} s` : 'stopping: readiness answers 503');
    if (grace) await sleep(grace);
    if (opts.shed !== false && timeoutMs > grace) {
      // Then (and at once when no balancer checked readiness) a balancer that checks passively (nginx's max_fails)
      // learns of the stop from 503s to the requests it may send elsewhere, and stops sending before the port closes:
      // a connection still waiting to be accepted when the port closes is reset, and a POST lost that way could not be
      // retried. A balancer that checked readiness once (at the daemon's start) need not poll it: nginx does not.
      app.drain.shedding = true;
      await sleep(Math.min(SHED_MS, timeoutMs - grace));
    }
    let cut = false;
    let timer: NodeJS.Timeout | undefined;
    // At the bound: every HTTP connection is cut, and a second later the stop goes on whatever still runs (an SSH
    // session's git, which the SSH server's own drain would otherwise wait for).
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        cut = true;
        log('warn', `stopping: requests still running after ${timeoutMs / 1000} s are cut (GANTRY_DRAIN_TIMEOUT)`);
        app.server.closeAllConnections();
        timer = setTimeout(resolve, 1000);
      }, Math.max(0, timeoutMs - (Date.now() - started)));
    });
    try {
      // app.close() stops listening, closes idle connections and resolves once every connection has ended.
      await Promise.race([Promise.all([app.close(), ssh?.close()]), bound]);
    } finally {
      clearTimeout(timer);
    }
    await stopBackground(ctx);
    await database.close();
    if (!cut) log('info', `stopped after ${Date.now() - started} ms`);
  })());
  // (close(): the daemon's own stop, in tests and at a start failure; nothing balances it)
  const close = () => drain({ graceMs: 0, shed: false });
  return { app, ctx, url, ssh, sshWarning: ssh ? null : sshWarning, generatedPassword, close, drain };
}

/** How long a drain answers 503 to repeatable requests (after the grace, if any) before its port closes. */
const SHED_MS = 1000;

/** How SIGTERM stops the daemon: GANTRY_DRAIN_GRACE and GANTRY_DRAIN_TIMEOUT, in seconds (README "Running several daemons"). */
export interface DrainOptions {
  /** After readiness fails, how long new connections are still served (only when a balancer checks readiness). */
  graceMs: number;
  /** From the signal to the exit, at most: requests still running then are cut. */
  timeoutMs: number;
}

const DEFAULT_DRAIN: DrainOptions = { graceMs: 5_000, timeoutMs: 30_000 };

/** The drain settings of the environment, or a ConfigError naming the variable that is wrong. */
export function drainOptions(env: NodeJS.ProcessEnv): DrainOptions {
  const seconds = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || n > 3600) throw new ConfigError(`invalid ${name} "${raw}": use a number of seconds from 0 to 3600`);
    return Math.round(n * 1000);
  };
  const timeoutMs = seconds('GANTRY_DRAIN_TIMEOUT', DEFAULT_DRAIN.timeoutMs);
  const graceGiven = (env.GANTRY_DRAIN_GRACE ?? '').trim() !== '';
  // The default grace shrinks to a shorter timeout; a grace given longer than the timeout is a mistake.
  const graceMs = graceGiven ? seconds('GANTRY_DRAIN_GRACE', DEFAULT_DRAIN.graceMs) : Math.min(DEFAULT_DRAIN.graceMs, timeoutMs);
  if (graceMs > timeoutMs) throw new ConfigError(`GANTRY_DRAIN_GRACE (${graceMs / 1000} s) must not exceed GANTRY_DRAIN_TIMEOUT (${timeoutMs / 1000} s)`);
  return { graceMs, timeoutMs };
}

/** Log lines of the SSH server and the start-up through the daemon's logger (warnings to stderr when there is none). */
function daemonLog(logger: pino.Logger | false) {
  return (level: 'warn' | 'info' | 'debug', message: string, err?: unknown) => {
    if (logger) logger[level](err ? { err } : {}, message);
    else if (level === 'warn') process.stderr.write(`gantryd: ${message}${err ? `: ${(err as Error).message}` : ''}\n`);
  };
}

/** The gantryd command line. */
export async function main(argv: string[]): Promise<void> {
  // `gantryd migrate-db ...` has options of its own (db/migrate-db.ts); loaded only when asked for.
  if (argv[2] === 'migrate-db') return (await import('./db/migrate-db.js')).migrateDbCommand(argv.slice(3));
  if (argv[2] === 'backup') return (await import('./backup.js')).backupCommand(argv.slice(3));
  const program = new Command('gantryd')
    .description('Gantry daemon: GitLab API v3, runner API v1 and git over HTTP on one port; git over SSH on another')
    .option('--host <host>', 'address to listen on (GANTRY_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port to listen on, 0 picks a free one (GANTRY_PORT, default 3080)')
    .option('--data-dir <dir>', 'database, repositories, artifacts, traces, uploads (GANTRY_DATA_DIR, default ~/.local/share/gantry)')
    .option('--external-url <url>', 'base URL clients use (GANTRY_EXTERNAL_URL, default http://<host>:<port>)')
    .option('--root-password <password>', 'root password on first start (GANTRY_ROOT_PASSWORD; generated when unset)')
    .option('--runners-token <token>', 'instance runner registration token (GANTRY_RUNNERS_TOKEN; generated when unset)')
    .option('--log-level <level>', 'log level: fatal, error, warn, info, debug, silent (GANTRY_LOG_LEVEL, default info)')
    .option('--ssh-port <port>', 'built-in SSH server for git, 0 picks a free port, off disables it (GANTRY_SSH_PORT, default 2222)')
    .option('--ssh-host <host>', 'address the SSH server listens on (GANTRY_SSH_HOST, default: the --host value)')
    .option('--ssh-external-host <host>', 'host ssh_url_to_repo advertises, e.g. behind a port forward (GANTRY_SSH_EXTERNAL_HOST)')
    .option('--ssh-external-port <port>', 'port ssh_url_to_repo advertises (GANTRY_SSH_EXTERNAL_PORT, default: the SSH port)')
    .option('--max-body-size <size>', 'largest JSON/form request body, e.g. 10m (GANTRY_MAX_BODY_SIZE, default 10m)')
    .option('--max-push-size <size>', 'largest pack a git push may send, e.g. 2g; 0 = no limit (GANTRY_MAX_PUSH_SIZE, default 0)')
    .option('--signin-max-failures <n>', 'failed sign-ins before an address is banned or a user locked; 0 = off (GANTRY_SIGNIN_MAX_FAILURES, default 10)')
    .option('--signin-find-time <seconds>', 'window in which an address\'s failures count (GANTRY_SIGNIN_FIND_TIME, default 60)')
    .option('--signin-ban-time <seconds>', 'how long an address stays banned (GANTRY_SIGNIN_BAN_TIME, default 3600)')
    .option('--signin-lock-time <seconds>', 'how long a user stays locked (GANTRY_SIGNIN_LOCK_TIME, default 600)')
    .option('--signin-trusted-addresses <list>', 'addresses never banned, comma-separated, or none (GANTRY_SIGNIN_TRUSTED_ADDRESSES, default 127.0.0.1,::1)')
    .option('--trusted-proxies <list>', 'balancers and reverse proxies whose X-Forwarded-For names the client: addresses or CIDRs, comma-separated (GANTRY_TRUSTED_PROXIES, default none)')
    .option('--metrics-token <token>', 'bearer token for GET /-/metrics scrapers (GANTRY_METRICS_TOKEN; admins can always read it)')
    .option('--runner-long-poll <seconds>', 'how long builds/register holds a runner that does not ask (GitLab Runner 1.x) while no build is pending (GANTRY_RUNNER_LONG_POLL, default 10; 0 = no hold)')
    .option('--database-url <url>', 'PostgreSQL database, postgres://user:password@host:5432/name (GANTRY_DATABASE_URL; default: SQLite in the data dir)')
    .option('--config <file>', 'YAML config file, every flag above without its dashes as a key (GANTRY_CONFIG; default <data-dir>/gantry.yml if it exists)')
    .option('--print-config', 'print the effective settings and where each came from (flag, environment, file, default), then exit')
    .addHelpText('after', '\nPrecedence: flags, then environment variables, then the config file, then the defaults.')
    .addHelpText('after', '\nCommands:\n  migrate-db --to <url>  copy a stopped installation\'s SQLite database into PostgreSQL (gantryd migrate-db --help)\n' +
      '  backup <dir>           copy a data directory while gantryd runs: database, repositories, files (gantryd backup --help)')
    .addHelpText('after', '\nStopping: SIGTERM drains (GET /-/readiness answers 503, requests in flight finish) and exits 0. GANTRY_DRAIN_GRACE\n' +
      '(seconds, default 5): how long new connections are still served when a balancer checks readiness; GANTRY_DRAIN_TIMEOUT\n' +
      '(seconds, default 30): the bound on the whole stop. README "Running several daemons".\n')
    .parse(argv);
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  let drainSettings: DrainOptions;
  try {
    const opts = program.opts<DaemonFlags & { config?: string; printConfig?: boolean }>();
    const loaded = loadConfig(opts);
    if (opts.printConfig) {
      process.stdout.write(printableConfig(loaded));
      return;
    }
    drainSettings = drainOptions(process.env);
    daemon = await startDaemon(loaded.config);
  } catch (e) {
    if (e instanceof ConfigError || e instanceof SchemaError) {
      process.stderr.write(`gantryd: ${e.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`gantryd: could not start: ${(e as Error).message}\n`);
    process.exit(1);
  }
  if (daemon.generatedPassword) {
    process.stdout.write(
      `gantryd: created user root with password ${daemon.generatedPassword}\n` +
        `gantryd: it is also in ${join(daemon.ctx.paths.data, 'initial_root_password')}; change it and delete that file\n`,
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`gantryd: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    // A bound even for what the drain cannot cut (an SSH session's git, a database that does not answer).
    setTimeout(() => {
      process.stderr.write(`gantryd: still stopping ${drainSettings.timeoutMs / 1000 + 5} s after ${signal}, exiting now\n`);
      process.exit(1);
    }, drainSettings.timeoutMs + 5000).unref();
    daemon.drain(drainSettings).then(
      () => process.exit(0),
      (e) => {
        process.stderr.write(`gantryd: error while stopping: ${(e as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // memory back to the system after each burst of requests (idle-memory.ts)
  startIdleReclaimer();
  // The ready lines come last: whoever waits for them may send SIGTERM at once, and the handlers must be in place.
  // `gantryd listening on <url>` first (CONTRACT.md: a script taking the first `listening on` line gets the URL), then
  // the SSH line; both in one write, so that a reader who has the first has the second too. The SSH port was bound
  // before either (startDaemon).
  let ready = `gantryd listening on ${daemon.url}\n`;
  if (daemon.ssh) {
    const host = daemon.ssh.host.includes(':') ? `[${daemon.ssh.host}]` : daemon.ssh.host;
    ready += `gantryd ssh listening on ${host}:${daemon.ssh.port}\n`;
  } else if (daemon.sshWarning) {
    ready += `gantryd: no SSH: ${daemon.sshWarning}\n`;
  }
  process.stdout.write(ready);
}
