/**
 * nginx for the e2e tests, configured with deploy/nginx.conf as operators copy it (only its ${GANTRY_...}
 * placeholders filled in, as envsubst does) and run in the foreground, never as a service.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT, tmp } from './helpers.js';

/** The nginx program, or undefined when it is not installed (.ci/run installs it; in CI its absence is an error). */
export const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((p) => existsSync(p))
  ?? (spawnSync('nginx', ['-v']).status === 0 ? 'nginx' : undefined);
if (!NGINX && process.env.CI) throw new Error('nginx is not installed: apt-get install -y nginx libnginx-mod-stream (.ci/run does)');

/** fail_timeout of deploy/nginx.conf: how long nginx keeps a daemon out of the rotation after a failure. */
export const FAIL_TIMEOUT_MS = 3000;

/** A TCP port nothing listens on now (nginx and a restarted daemon need ports known in advance). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** deploy/nginx.conf with its placeholders filled in, as `envsubst '<the list>'` does (nginx's own $variables stay). */
export function renderNginxConf(values: Record<string, string>): string {
  const text = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
  for (const m of text.matchAll(/\$\{(GANTRY_[A-Z_]+)\}/g)) {
    if (!(m[1] in values)) throw new Error(`deploy/nginx.conf names ${m[1]}, which the test does not fill in`);
  }
  return text.replace(/\$\{(GANTRY_[A-Z_]+)\}|\$(GANTRY_[A-Z_]+)/g, (all, braced?: string, bare?: string) => values[(braced ?? bare)!] ?? all);
}

/** A running nginx: its URL, SSH port, directory (logs) and a stop. */
export interface Nginx {
  url: string;
  sshPort: number;
  dir: string;
  /** nginx's error log and output so far, for failure messages. */
  log(): string;
  accessLog(): string;
  stop(): void;
}

/**
 * Start nginx in front of daemons A and B (`host:port` of their HTTP and SSH servers), listening on `http` and `ssh`
 * (free ports by default); resolves once it answers.
 */
export async function startNginx(upstreams: { a: string; b: string; aSsh: string; bSsh: string; http?: number; ssh?: number }): Promise<Nginx> {
  const http = upstreams.http ?? (await freePort());
  const ssh = upstreams.ssh ?? (await freePort());
  const dir = tmp('gantry-nginx-');
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, renderNginxConf({
    GANTRY_A: upstreams.a, GANTRY_B: upstreams.b, GANTRY_A_SSH: upstreams.aSsh, GANTRY_B_SSH: upstreams.bSsh,
    GANTRY_HTTP_LISTEN: `127.0.0.1:${http}`, GANTRY_SSH_LISTEN: `127.0.0.1:${ssh}`, GANTRY_NGINX_DIR: dir,
  }));
  // -e: nginx's own start-up errors to stderr (the config's error_log takes over once it is read).
  const proc: ChildProcess = spawn(NGINX!, ['-c', conf, '-e', 'stderr', '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '');
  const nginx: Nginx = {
    url: `http://127.0.0.1:${http}`,
    sshPort: ssh,
    dir,
    log: () => `nginx error.log:\n${read('error.log').slice(-4000)}\nnginx output: ${out.slice(-1000)}`,
    accessLog: () => read('access.log'),
    stop: () => { proc.kill('SIGTERM'); },
  };
  const deadline = Date.now() + 15_000;
  // Up once it listens; what it answers (a daemon's health, or 502 while none is up) does not matter here.
  while ((await fetch(`${nginx.url}/-/health`).then((r) => r.status, () => 0)) === 0) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`nginx did not start: ${nginx.log()}`);
    }
    await sleep(100);
  }
  return nginx;
}
