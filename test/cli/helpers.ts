/** CLI test helpers: a real daemon in this process (from source) and the CLI's run() with a captured IO. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { startDaemon } from '../../daemon/main.js';
import { resolveConfig } from '../../daemon/config.js';
import { run } from '../../cli/main.js';
import type { IO } from '../../cli/io.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';

export const ROOT_PASSWORD = 'cli-root-password';

/** What one CLI run produced. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json(): any;
}

/** A captured IO; stdin gives `input` (not a TTY). */
export function fakeIO(env: NodeJS.ProcessEnv, input = ''): IO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(text: string) { io.stdout += text; },
    err(text: string) { io.stderr += text; },
    env,
    stdin: Readable.from([input]) as unknown as NodeJS.ReadStream,
    stdinIsTTY: false,
    stdoutIsTTY: false,
    stderrIsTTY: false,
  };
  return io;
}

/** A daemon on a temporary data dir and a CLI bound to its own config dir. */
export interface CliFixture {
  url: string;
  dataDir: string;
  configDir: string;
  /** Run `gantry <args>` with GANTRY_CONFIG_DIR set (plus extra env). */
  cli(args: string[], opts?: { env?: Record<string, string>; input?: string; cwd?: string }): Promise<CliResult>;
  close(): Promise<void>;
}

/** Start a daemon (real HTTP on a free port; SSH on a free port with `ssh`, else off) and return a CLI runner; call login yourself. */
export async function startCliFixture(opts: { ssh?: boolean } = {}): Promise<CliFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gantry-cli-data-'));
  const configDir = mkdtempSync(join(tmpdir(), 'gantry-cli-cfg-'));
  // With GANTRY_TEST_DATABASE_URL (the PostgreSQL pass), the daemon runs on a fresh database of that server.
  const pg = TEST_DATABASE_URL ? await createTestDatabase(TEST_DATABASE_URL, { migrated: true }) : null;
  const daemon = await startDaemon(resolveConfig({
    dataDir, port: '0', rootPassword: ROOT_PASSWORD, logLevel: 'silent', sshPort: opts.ssh ? '0' : 'off', ...(pg ? { databaseUrl: pg.url } : {}),
  }, {}), { logger: false });
  const cli: CliFixture['cli'] = async (args, opts = {}) => {
    const io = fakeIO({ GANTRY_CONFIG_DIR: configDir, ...opts.env }, opts.input);
    if (opts.cwd) io.cwd = opts.cwd;
    const code = await run(['node', 'gantry', ...args], io);
    return { code, stdout: io.stdout, stderr: io.stderr, json: () => JSON.parse(io.stdout) };
  };
  return {
    url: daemon.url, dataDir, configDir, cli,
    async close() {
      await daemon.close();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(configDir, { recursive: true, force: true });
    },
  };
}

/** The token `gantry login` stored in the fixture's config (the default profile's). */
export function loginToken(f: Pick<CliFixture, 'configDir'>): string {
  return JSON.parse(readFileSync(join(f.configDir, 'config.json'), 'utf8')).profiles.default.token;
}

/** A caller of the fixture daemon's API with `token`: `/ci/...` paths as they are, every other under /api/v3. */
export function apiCaller(f: Pick<CliFixture, 'url'>, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${f.url}${path.startsWith('/ci/') ? '' : '/api/v3'}${path}`, {
      method, headers: { 'private-token': token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
}
