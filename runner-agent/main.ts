/** gantry-runner: the runner agent (register, run builds with the shell executor, run-single, unregister, list). */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { CliError, EXIT, UsageError } from '../cli/errors.js';
import { addRunner, ciApiBase, defaultBuildsDir, defaultConfigFile, loadConfig, parseTagList, removeRunner, saveConfig, shortToken, type RunnerEntry } from './config.js';
import { createLogger, parseLogLevel, type Logger } from './log.js';
import { CiClient, VERSION } from './network.js';
import { RunnerLoop } from './runner.js';

/** Where the commands write (tests pass their own). */
export interface RunnerIO {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

const processIO: RunnerIO = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
  env: process.env,
};

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function wholeSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 60) throw new InvalidArgumentError('must be a whole number of seconds from 0 to 60');
  return n;
}

function checkUrl(url: string): string {
  try {
    ciApiBase(url);
  } catch (e) {
    throw new UsageError((e as Error).message, 'give the server URL, e.g. --url http://127.0.0.1:3080');
  }
  return url.replace(/\/+$/, '');
}

/** Run the loop until it ends, with SIGTERM/SIGINT: first = finish running builds, second = kill them. */
async function runLoop(loop: RunnerLoop, log: Logger): Promise<number> {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      log.info(`${signal} received: no new builds; waiting for running builds (send it again to kill them)`);
      loop.stop();
    } else loop.forceStop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGQUIT', onSignal);
  try {
    await loop.run();
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('SIGQUIT', onSignal);
  }
  return loop.wasForced ? EXIT.error : EXIT.ok;
}

/** Build the command tree; `setExit` receives the exit code of commands that decide it themselves. */
export function buildProgram(io: RunnerIO, setExit: (code: number) => void): Command {
  const program = new Command('gantry-runner')
    .description('Gantry runner agent: registers with a Gantry (or GitLab 8.x) server and runs CI builds with the shell executor')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError('(add --help for usage)');
  const configFile = (o: { config?: string }) => resolve(o.config ?? defaultConfigFile(io.env));

  program
    .command('register')
    .description('register a new runner with a registration token and save it in the config file')
    .requiredOption('--url <url>', 'server URL (the runner API is <url>/ci/api/v1)')
    .requiredOption('-r, --registration-token <token>', 'the instance\'s runners registration token, or a project\'s runners token')
    .option('--description <text>', 'runner description (default: the host name)')
    .option('--tag-list <tags>', 'comma-separated tags, e.g. docker,linux')
    .option('--run-untagged', 'also take builds without tags (always on when no tags are given)')
    .option('--locked', 'lock the runner to its current projects')
    .option('-c, --config <file>', `config file (default: ${defaultConfigFile(io.env)})`)
    .option('--json', 'print the saved runner as JSON')
    .addHelpText('after', '\nExample:\n  gantry-runner register --url http://127.0.0.1:3080 --registration-token <token> --description build-box --tag-list linux,shell')
    .action(async (o: { url: string; registrationToken: string; description?: string; tagList?: string; runUntagged?: boolean; locked?: boolean; config?: string; json?: boolean }) => {
      const url = checkUrl(o.url);
      const file = configFile(o);
      const config = loadConfig(file);
      const tags = parseTagList(o.tagList);
      const runUntagged = tags.length === 0 ? true : Boolean(o.runUntagged);
      const description = o.description ?? hostname();
      const client = new CiClient(url);
      let registered: { id: number | null; token: string };
      try {
        registered = await client.registerRunner({ token: o.registrationToken, description, tagList: tags, runUntagged, locked: Boolean(o.locked) });
      } catch (e) {
        throw new CliError((e as Error).message, 'check --url and the registration token (admin area or the project\'s CI settings)');
      } finally {
        await client.close();
      }
      const entry: RunnerEntry = {
        id: registered.id, description, url, token: registered.token, tags, run_untagged: runUntagged, locked: Boolean(o.locked),
        registered_at: new Date().toISOString(),
      };
      saveConfig(file, addRunner(config, entry));
      io.err(`Registered runner ${entry.id ?? ''} (token ${shortToken(entry.token)}) with ${url}; saved in ${file}.\n`);
      io.err('Start it with `gantry-runner run`.\n');
      if (o.json) io.out(`${JSON.stringify(entry, null, 2)}\n`);
    });

  program
    .command('run')
    .description('poll for builds and run them (SIGTERM: finish running builds and exit; a second SIGTERM kills them)')
    .option('-c, --config <file>', `config file (default: ${defaultConfigFile(io.env)})`)
    .option('--concurrent <n>', 'builds to run at the same time (default: the config file\'s "concurrent", 1)', positiveInt)
    .option('--builds-dir <dir>', `where builds are checked out (default: ${defaultBuildsDir(io.env)})`)
    .option('--long-poll <seconds>', 'let the server hold each build request this long while nothing is pending, so a build starts the moment it is queued (0 = off, default 50)', wholeSeconds)
    .option('--log-level <level>', 'error, warn, info or debug', 'info')
    .action(async (o: { config?: string; concurrent?: number; buildsDir?: string; longPoll?: number; logLevel: string }) => {
      const file = configFile(o);
      const config = loadConfig(file);
      if (config.runners.length === 0) throw new CliError(`no runners in ${file}`, 'register one first: gantry-runner register --url <url> --registration-token <token>');
      const log = createLogger(parseLogLevel(o.logLevel));
      const loop = new RunnerLoop({
        runners: config.runners, concurrent: o.concurrent ?? config.concurrent, buildsDir: resolve(o.buildsDir ?? defaultBuildsDir(io.env)), log,
        longPollSeconds: o.longPoll,
      });
      setExit(await runLoop(loop, log));
    });

  program
    .command('run-single')
    .description('run builds for one runner given by URL and token, without a config file')
    .requiredOption('--url <url>', 'server URL')
    .requiredOption('-t, --token <token>', 'the RUNNER token (from register), not the registration token')
    .option('--description <text>', 'name shown in traces', hostname())
    .option('--builds-dir <dir>', `where builds are checked out (default: ${defaultBuildsDir(io.env)})`)
    .option('--max-builds <n>', 'exit after this many builds', positiveInt)
    .option('--wait-timeout <seconds>', 'exit when no build arrived for this long', positiveInt)
    .option('--long-poll <seconds>', 'let the server hold each build request this long while nothing is pending, so a build starts the moment it is queued (0 = off, default 50)', wholeSeconds)
    .option('--log-level <level>', 'error, warn, info or debug', 'info')
    .action(async (o: { url: string; token: string; description: string; buildsDir?: string; maxBuilds?: number; waitTimeout?: number; longPoll?: number; logLevel: string }) => {
      const url = checkUrl(o.url);
      const log = createLogger(parseLogLevel(o.logLevel));
      const entry: RunnerEntry = { id: null, description: o.description, url, token: o.token, tags: [], run_untagged: true, locked: false, registered_at: '' };
      const loop = new RunnerLoop({
        runners: [entry], concurrent: 1, buildsDir: resolve(o.buildsDir ?? defaultBuildsDir(io.env)), log,
        maxBuilds: o.maxBuilds, waitTimeoutS: o.waitTimeout, longPollSeconds: o.longPoll,
      });
      setExit(await runLoop(loop, log));
    });

  program
    .command('unregister')
    .description('delete a runner on the server and remove it from the config file')
    .option('-c, --config <file>', `config file (default: ${defaultConfigFile(io.env)})`)
    .option('-t, --token <token>', 'the runner token (default: the only runner in the config file)')
    .option('--description <text>', 'the runner with this description in the config file')
    .option('--url <url>', 'server URL (for a token that is not in the config file)')
    .option('--all', 'every runner in the config file')
    .action(async (o: { config?: string; token?: string; description?: string; url?: string; all?: boolean }) => {
      const file = configFile(o);
      let config = loadConfig(file);
      let targets: Array<{ url: string; token: string; description: string }>;
      if (o.all) targets = config.runners;
      else if (o.token) {
        const known = config.runners.find((r) => r.token === o.token);
        const url = o.url ? checkUrl(o.url) : known?.url;
        if (!url) throw new UsageError('this token is not in the config file', 'add --url <server URL>');
        targets = [{ url, token: o.token, description: known?.description ?? '' }];
      } else if (o.description !== undefined) {
        targets = config.runners.filter((r) => r.description === o.description);
        if (targets.length === 0) throw new CliError(`no runner "${o.description}" in ${file}`, 'see `gantry-runner list`');
      } else {
        if (config.runners.length !== 1) {
          throw new UsageError(config.runners.length === 0 ? `no runners in ${file}` : `${file} has ${config.runners.length} runners`, 'choose one with --token or --description, or use --all');
        }
        targets = config.runners;
      }
      let failed = 0;
      for (const t of targets) {
        const client = new CiClient(t.url);
        try {
          const status = await client.deleteRunner(t.token);
          if (status === 200 || status === 204) io.err(`Unregistered runner ${t.description || shortToken(t.token)} from ${t.url}.\n`);
          else if (status === 403) io.err(`Runner ${t.description || shortToken(t.token)} is not known to ${t.url} (403); removing it from the config.\n`);
          else {
            failed++;
            io.err(`gantry-runner: unregistering ${t.description || shortToken(t.token)} failed: HTTP ${status}\n`);
            continue;
          }
          config = removeRunner(config, t.token);
        } catch (e) {
          failed++;
          io.err(`gantry-runner: ${(e as Error).message}\n`);
        } finally {
          await client.close();
        }
      }
      saveConfig(file, config);
      if (failed > 0) setExit(EXIT.error);
    });

  program
    .command('list')
    .alias('ls')
    .description('list the runners in the config file')
    .option('-c, --config <file>', `config file (default: ${defaultConfigFile(io.env)})`)
    .option('--json', 'print JSON (tokens included)')
    .action((o: { config?: string; json?: boolean }) => {
      const file = configFile(o);
      const config = loadConfig(file);
      if (o.json) {
        io.out(`${JSON.stringify({ config_file: file, ...config }, null, 2)}\n`);
        return;
      }
      if (config.runners.length === 0) {
        io.err(`No runners in ${file}.\n`);
        return;
      }
      const rows = [['ID', 'DESCRIPTION', 'URL', 'TOKEN', 'TAGS', 'UNTAGGED', 'LOCKED'], ...config.runners.map((r) => [
        r.id === null ? '' : String(r.id), r.description, r.url, shortToken(r.token), r.tags.join(','), r.run_untagged ? 'yes' : 'no', r.locked ? 'yes' : 'no',
      ])];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
      io.out(rows.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n') + '\n');
      io.err(`${config.runners.length} runner(s) in ${file}; concurrent builds: ${config.concurrent}.\n`);
    });

  return program;
}

/** Run gantry-runner with argv and return its exit code. Never throws. */
export async function run(argv: string[], io: RunnerIO = processIO): Promise<number> {
  let code: number = EXIT.ok;
  try {
    await buildProgram(io, (c) => { code = c; }).parseAsync(argv);
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (e instanceof CliError) {
      if (e.message) io.err(`gantry-runner: ${e.message}\n`);
      if (e.hint) io.err(`hint: ${e.hint}\n`);
      return e.exitCode;
    }
    io.err(`gantry-runner: ${(e as Error)?.message ?? String(e)}\n`);
    if (io.env.GANTRY_DEBUG) io.err(`${(e as Error)?.stack ?? ''}\n`);
    return EXIT.error;
  }
}

/** Entry point used by bin/gantry-runner.js. */
export async function main(argv: string[]): Promise<void> {
  process.exitCode = await run(argv);
}
