/** gantry daemon start|stop|status|logs: run gantryd in the background, with its pid and log in the data dir. */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync, fstatSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isSea } from 'node:sea';
import type { Command } from 'commander';
import { isMap, parseDocument } from 'yaml';
import { ConfigError, SETTINGS, configFileOf, resolveConfig, type DaemonFlags } from '../../daemon/config.js';
import { HttpClient } from '../../shared/http.js';
import type { Factory } from '../client.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, renderRecord } from '../output.js';
import { packageRoot } from '../paths.js';
import { nonNegativeInt, positiveInt } from './common.js';
import { daemonEnv } from '../../shared/daemon-env.js';

const READY = /^gantryd listening on (\S+)\s*$/m;
const SSH_READY = /^gantryd ssh listening on (\S+)\s*$/m;
const NO_SSH = /^gantryd: no SSH: (.+)$/m;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The files `gantry daemon` keeps in a data dir. */
export function daemonFiles(dataDir: string) {
  return {
    pid: join(dataDir, 'gantryd.pid'), url: join(dataDir, 'gantryd.url'), ssh: join(dataDir, 'gantryd.ssh'), log: join(dataDir, 'gantryd.log'),
  };
}

/** The data dir the daemon would use for these flags and environment (same rules as gantryd). */
function dataDirOf(flags: DaemonFlags, env: NodeJS.ProcessEnv): string {
  try {
    return resolveConfig(flags, env).dataDir;
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
}

/** Whether a process is alive and (where /proc tells) a gantryd; zombies count as stopped. */
export function isGantryd(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('gantryd');
  } catch {
    return true; // no /proc (macOS): trust kill(0)
  }
}

interface DaemonState {
  dataDir: string;
  pid: number | null;
  url: string | null;
  /** host:port of the SSH server, null when it does not run. */
  ssh: string | null;
  running: boolean;
}

/** Read the pid and URL files of a data dir and check the process. */
function readState(dataDir: string): DaemonState {
  const files = daemonFiles(dataDir);
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return null;
    }
  };
  const pidText = read(files.pid);
  const pid = pidText && /^\d+$/.test(pidText) ? Number(pidText) : null;
  return { dataDir, pid, url: read(files.url), ssh: read(files.ssh), running: pid !== null && isGantryd(pid) };
}

/** Remove the pid and URL files. */
function clearState(dataDir: string): void {
  const files = daemonFiles(dataDir);
  for (const file of [files.pid, files.url, files.ssh]) {
    try {
      rmSync(file, { force: true });
    } catch {
      /* the data dir is not a directory: nothing to clear */
    }
  }
}

/** Read a file from a byte offset to its end. */
function readFrom(file: string, offset: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return '';
    const buf = Buffer.alloc(size - offset);
    const n = readSync(fd, buf, 0, buf.length, offset);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The last `n` non-empty lines of a text. */
function tail(text: string, n: number): string[] {
  return text.split('\n').filter((l) => l.trim() !== '').slice(-n);
}

/** GET /-/health; true on 200. */
async function healthy(url: string): Promise<boolean> {
  const http = new HttpClient({ baseUrl: url, timeoutMs: 3000 });
  try {
    return (await http.request('GET', '/-/health', { allowErrors: true })).status === 200;
  } catch {
    return false;
  } finally {
    await http.close();
  }
}

interface StartOptions extends DaemonFlags {
  timeout: number;
  json?: boolean;
}

/** The start flags remembered in the data dir's gantry.yml: not the secrets (the root password counts only once). */
const REMEMBERED: ReadonlyArray<keyof DaemonFlags> = [
  'host', 'port', 'externalUrl', 'logLevel', 'sshPort', 'sshHost', 'sshExternalHost', 'sshExternalPort',
];

/**
 * Write the settings given to this start into `<data-dir>/gantry.yml` (gantryd reads that file at every start), keeping
 * what else the file says and its comments. Returns the flags written, or null when none was given.
 */
function remember(dataDir: string, o: StartOptions): { given: string; file: string } | null {
  const given = SETTINGS.filter((s) => REMEMBERED.includes(s.flag) && o[s.flag] !== undefined);
  if (!given.length) return null;
  const file = configFileOf(dataDir);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '# gantryd settings (README "Configuration"): flags and GANTRY_* variables override them.\n';
  }
  const doc = parseDocument(text);
  if (!isMap(doc.contents)) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  for (const s of given) {
    const value = String(o[s.flag]);
    doc.set(s.key, /^\d{1,5}$/.test(value) ? Number(value) : value);
  }
  writeFileSync(file, String(doc), { mode: 0o600 });
  return { given: given.map((s) => `--${s.key} ${o[s.flag]}`).join(' '), file };
}

/**
 * The program that runs gantryd and the arguments before its own: node with bin/gantryd.js, or, for the single-file
 * executable of gantry (npm run package), the gantryd executable beside it (else the one on PATH).
 */
function gantrydProgram(): { command: string; args: string[] } {
  if (!isSea()) return { command: process.execPath, args: [join(packageRoot(), 'bin', 'gantryd.js')] };
  const sibling = join(dirname(process.execPath), 'gantryd');
  return { command: existsSync(sibling) ? sibling : 'gantryd', args: [] };
}

/** Start gantryd detached; resolve once it printed its ready line and answers /-/health. */
async function startDaemon(io: IO, o: StartOptions): Promise<void> {
  const dataDir = dataDirOf(o, io.env);
  const state = readState(dataDir);
  if (state.running) {
    throw new CliError(`gantryd is already running (pid ${state.pid}${state.url ? ` at ${state.url}` : ''})`, 'stop it with `gantry daemon stop`');
  }
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new CliError(`cannot use data dir ${dataDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 'choose a writable directory with --data-dir');
  }
  clearState(dataDir);
  const files = daemonFiles(dataDir);
  let logFd: number;
  try {
    logFd = openSync(files.log, 'a', 0o600);
  } catch (e) {
    throw new CliError(`cannot write ${files.log}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 'choose a writable directory with --data-dir');
  }
  const offset = fstatSync(logFd).size;
  const program = gantrydProgram();
  const args = [...program.args, '--data-dir', dataDir];
  const pass: Array<[keyof DaemonFlags, string]> = [
    ['host', '--host'], ['port', '--port'], ['externalUrl', '--external-url'], ['rootPassword', '--root-password'],
    ['runnersToken', '--runners-token'], ['logLevel', '--log-level'], ['sshPort', '--ssh-port'], ['sshHost', '--ssh-host'],
    ['sshExternalHost', '--ssh-external-host'], ['sshExternalPort', '--ssh-external-port'],
  ];
  for (const [key, flag] of pass) if (o[key] !== undefined) args.push(flag, String(o[key]));

  io.err(`Starting gantryd (data dir ${dataDir}, log ${files.log})...`);
  const child = spawn(program.command, args, { detached: true, stdio: ['ignore', logFd, logFd], env: daemonEnv(io.env), cwd: dataDir });
  closeSync(logFd);
  let exited: { code: number | null; signal: string | null } | null = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  const spawnError = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', resolve);
  });
  if (spawnError || child.pid === undefined) {
    io.err('\n');
    throw new CliError(`cannot run gantryd: ${spawnError?.message ?? 'no pid'}`);
  }
  const pid = child.pid;
  writeFileSync(files.pid, `${pid}\n`, { mode: 0o644 });

  const deadline = Date.now() + o.timeout * 1000;
  let output = '';
  let url: string | null = null;
  let lastDot = Date.now();
  while (!url) {
    await sleep(100);
    output = readFrom(files.log, offset);
    url = READY.exec(output)?.[1] ?? null;
    if (url) break;
    if (exited) {
      clearState(dataDir);
      io.err(' failed.\n');
      const lines = tail(output, 10);
      const last = (lines.pop() ?? '').replace(/^gantryd: /, '');
      for (const line of lines) io.err(`  ${line}\n`);
      const how = (exited as { code: number | null; signal: string | null }).signal ?? `exit code ${(exited as { code: number | null }).code}`;
      throw new CliError(`gantryd did not start (${how}): ${last || 'no output'}`, `its log is ${files.log}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      clearState(dataDir);
      io.err(' timed out.\n');
      for (const line of tail(output, 10)) io.err(`  ${line}\n`);
      throw new CliError(`gantryd was not ready within ${o.timeout} s; it was stopped`, `see ${files.log}, or allow more time with --timeout`);
    }
    if (io.stderrIsTTY && Date.now() - lastDot >= 500) {
      io.err('.');
      lastDot = Date.now();
    }
  }
  if (!(await healthy(url))) {
    io.err(' failed.\n');
    throw new CliError(`gantryd (pid ${pid}) printed ${url} but GET /-/health does not answer 200`, `see ${files.log}`);
  }
  writeFileSync(files.url, `${url}\n`, { mode: 0o644 });
  const ssh = SSH_READY.exec(output)?.[1] ?? null;
  if (ssh) writeFileSync(files.ssh, `${ssh}\n`, { mode: 0o644 });
  child.unref();
  io.err(' ready.\n');
  // Not only in the log: why git over SSH is unavailable (the default port taken by another program, say).
  const noSsh = NO_SSH.exec(output)?.[1];
  if (noSsh) io.err(`Warning: gantryd runs without SSH: ${noSsh}\n`);
  const remembered = remember(dataDir, o);
  if (remembered) io.err(`Remembered ${remembered.given} in ${remembered.file}: a plain \`gantry daemon start\` uses them next time.\n`);

  let rootPassword: string | null = null;
  if (/created user root with password/.test(output)) {
    try {
      rootPassword = readFileSync(join(dataDir, 'initial_root_password'), 'utf8').trim();
    } catch {
      rootPassword = /created user root with password (\S+)/.exec(output)?.[1] ?? null;
    }
  }
  if (o.json) {
    printJson(io, { url, pid, ssh, ssh_warning: noSsh ?? null, data_dir: dataDir, log_file: files.log, root_password: rootPassword });
  } else {
    io.out(`${url}\n`);
    io.err(`gantryd is running (pid ${pid}) at ${url}${ssh ? `, git over SSH on ${ssh}` : ''}.\n`);
    if (rootPassword) {
      io.err(`First start: created user root with password ${rootPassword}\n` +
        `  (shown once; also in ${join(dataDir, 'initial_root_password')}; change it and delete that file)\n`);
    }
    io.err(`Log in with: gantry login --url ${url} --username root\n`);
  }
}

/** Send SIGTERM and wait for the process to go; SIGKILL after the timeout when forced. */
async function stopDaemon(io: IO, o: { dataDir?: string; timeout: number; force?: boolean }): Promise<void> {
  const dataDir = dataDirOf({ dataDir: o.dataDir }, io.env);
  const state = readState(dataDir);
  if (!state.running || state.pid === null) {
    clearState(dataDir);
    io.err(`gantryd is not running (data dir ${dataDir}).\n`);
    return;
  }
  const pid = state.pid;
  process.kill(pid, 'SIGTERM');
  io.err(`Stopping gantryd (pid ${pid})...`);
  const waitGone = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!isGantryd(pid)) return true;
      await sleep(100);
    }
    return !isGantryd(pid);
  };
  if (!(await waitGone(o.timeout * 1000))) {
    if (!o.force) {
      io.err(' still running.\n');
      throw new CliError(`gantryd (pid ${pid}) did not stop within ${o.timeout} s`, 'wait and retry, or use --force to kill it');
    }
    process.kill(pid, 'SIGKILL');
    await waitGone(5000);
    io.err(' killed.\n');
  } else {
    io.err(' stopped.\n');
  }
  clearState(dataDir);
}

/** Print whether the daemon of a data dir runs; exit code 3 when it does not. */
async function statusDaemon(io: IO, o: { dataDir?: string; json?: boolean }): Promise<void> {
  const dataDir = dataDirOf({ dataDir: o.dataDir }, io.env);
  const state = readState(dataDir);
  const health = state.running && state.url ? await healthy(state.url) : false;
  const files = daemonFiles(dataDir);
  if (o.json) {
    printJson(io, {
      running: state.running, pid: state.running ? state.pid : null, url: state.running ? state.url : null,
      ssh: state.running ? state.ssh : null, healthy: health, data_dir: dataDir, log_file: files.log,
    });
  } else if (state.running) {
    io.out(renderRecord([
      ['status', health ? 'running' : 'running, not answering /-/health'],
      ['pid', state.pid],
      ['url', state.url],
      ['ssh', state.ssh ?? 'not running'],
      ['data dir', dataDir],
      ['log', files.log],
    ]));
  } else {
    io.out(renderRecord([['status', 'stopped'], ['data dir', dataDir]]));
  }
  if (!state.running) throw new CliError('', null, EXIT.stopped);
}

/** Print the log (or its last lines), optionally following it. */
async function showLogs(io: IO, o: { dataDir?: string; follow?: boolean; lines?: number }): Promise<void> {
  const dataDir = dataDirOf({ dataDir: o.dataDir }, io.env);
  const file = daemonFiles(dataDir).log;
  if (!existsSync(file)) throw new CliError(`no log at ${file}`, 'the daemon of this data dir was never started with `gantry daemon start`');
  const text = readFrom(file, 0);
  if (o.lines !== undefined) {
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const shown = o.lines === 0 ? [] : lines.slice(-o.lines);
    if (shown.length) io.out(`${shown.join('\n')}\n`);
  } else {
    io.out(text);
  }
  if (!o.follow) return;
  let offset = Buffer.byteLength(text);
  for (;;) {
    await sleep(250);
    const size = statSync(file).size;
    if (size < offset) offset = 0; // truncated or replaced
    const more = readFrom(file, offset);
    if (more) {
      io.out(more);
      offset += Buffer.byteLength(more);
    }
  }
}

/** Registers `daemon start|stop|status|logs`. */
export function registerDaemon(program: Command, factory: Factory): void {
  const { io } = factory;
  const daemon = program.command('daemon').description('run gantryd in the background: start, stop, status, logs');
  const dataDirOption = ['--data-dir <dir>', 'data directory (GANTRY_DATA_DIR, default ~/.local/share/gantry)'] as const;

  daemon
    .command('start')
    .description('start gantryd in the background and wait until it is ready; the settings given are remembered in <data-dir>/gantry.yml')
    .option('--host <host>', 'address to listen on (GANTRY_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port, 0 picks a free one (GANTRY_PORT, default 3080)')
    .option(...dataDirOption)
    .option('--external-url <url>', 'base URL clients use (GANTRY_EXTERNAL_URL)')
    .option('--root-password <password>', 'root password on first start (GANTRY_ROOT_PASSWORD; generated and printed when unset)')
    .option('--runners-token <token>', 'runner registration token (GANTRY_RUNNERS_TOKEN)')
    .option('--log-level <level>', 'log level (GANTRY_LOG_LEVEL, default info)')
    .option('--ssh-port <port>', 'SSH port, 0 picks a free one, off for no SSH (GANTRY_SSH_PORT, default 2222)')
    .option('--ssh-host <host>', 'address SSH listens on (GANTRY_SSH_HOST, default the --host value)')
    .option('--ssh-external-host <host>', 'SSH host advertised in ssh_url_to_repo (GANTRY_SSH_EXTERNAL_HOST)')
    .option('--ssh-external-port <port>', 'SSH port advertised in ssh_url_to_repo (GANTRY_SSH_EXTERNAL_PORT)')
    .option('--timeout <seconds>', 'how long to wait for the daemon to be ready', positiveInt, 30)
    .option('--json', 'print {url, pid, ssh, ssh_warning, data_dir, log_file, root_password} as JSON')
    .action((o: StartOptions) => startDaemon(io, o));

  daemon
    .command('stop')
    .description('stop the background gantryd (SIGTERM, then wait)')
    .option(...dataDirOption)
    .option('--timeout <seconds>', 'how long to wait for it to exit', positiveInt, 15)
    .option('--force', 'kill it (SIGKILL) if it has not exited within the timeout')
    .action((o: { dataDir?: string; timeout: number; force?: boolean }) => stopDaemon(io, o));

  daemon
    .command('status')
    .description('show whether gantryd runs, its pid, URL and SSH address (exit code 3 when stopped)')
    .option(...dataDirOption)
    .option('--json', 'print JSON')
    .action((o: { dataDir?: string; json?: boolean }) => statusDaemon(io, o));

  daemon
    .command('logs')
    .description('print the daemon log (<data-dir>/gantryd.log)')
    .option(...dataDirOption)
    .option('-n, --lines <n>', 'only the last n lines', nonNegativeInt)
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .action((o: { dataDir?: string; follow?: boolean; lines?: number }) => showLogs(io, o));
}
