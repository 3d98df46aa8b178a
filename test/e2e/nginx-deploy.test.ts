/**
 * deploy/nginx.conf as operators copy it, in front of one gantryd on SQLite (both upstream entries naming it): the
 * paths that do not run on PostgreSQL yet, so that the PostgreSQL-only rolling-restart test cannot reach them: git
 * over HTTP (push and clone, bodies streamed), an upload larger than nginx's default body limit, and SSH through the
 * stream module. Skipped without nginx outside CI (.ci/run installs it).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupTmp, killAll, startGantryd, tmp, type Daemon } from './helpers.js';
import { dataDirArgs, dropDatabases } from './database.js';
import { freePort, NGINX, startNginx, type Nginx } from './nginx.js';
import { commitFiles, gitOk, repoUrl, tempDir, workTree } from '../helpers/git.js';

const PASSWORD = 'nginx-deploy-root-password';

describe.skipIf(!NGINX)('deploy/nginx.conf in front of gantryd', () => {
  let daemon: Daemon;
  let nginx: Nginx;
  let root: string;
  const ports = { http: 0, ssh: 0, nginxHttp: 0, nginxSsh: 0 };
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${nginx.url}/api/v3${path}`, {
      method, headers: { 'private-token': root, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: await r.json() as any };
  };

  beforeAll(async () => {
    for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
    const dataDir = tmp('gantry-nginx-deploy-');
    daemon = await startGantryd([
      '--port', String(ports.http), ...(await dataDirArgs(dataDir)), '--root-password', PASSWORD, '--ssh-port', String(ports.ssh),
      '--external-url', `http://127.0.0.1:${ports.nginxHttp}`, '--ssh-external-port', String(ports.nginxSsh),
    ], cleanEnv(), 30_000);
    const one = `127.0.0.1:${ports.http}`;
    const oneSsh = `127.0.0.1:${ports.ssh}`;
    nginx = await startNginx({ a: one, b: one, aSsh: oneSsh, bSsh: oneSsh, http: ports.nginxHttp, ssh: ports.nginxSsh });
    const session = await fetch(`${nginx.url}/api/v3/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'root', password: PASSWORD }),
    });
    expect(session.status).toBe(201);
    root = ((await session.json()) as { private_token: string }).private_token;
  }, 60_000);

  afterAll(async () => {
    nginx?.stop();
    if (daemon && daemon.proc.exitCode === null) expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    killAll();
    await dropDatabases();
    cleanupTmp();
  });

  it('pushes and clones over HTTP through nginx, with the URLs naming it', async () => {
    const project = await call('POST', '/projects', { name: 'through-nginx' });
    expect(project.status).toBe(201);
    expect(project.body.http_url_to_repo).toBe(`${nginx.url}/root/through-nginx.git`);
    expect(project.body.ssh_url_to_repo).toBe(`ssh://git@127.0.0.1:${ports.nginxSsh}/root/through-nginx.git`);
    const remote = repoUrl(nginx.url, 'root/through-nginx', { username: 'root', password: PASSWORD });
    const work = await workTree();
    // 2 MB of data that does not compress: the push's pack is larger than nginx's default body limit (1 MB).
    const blob = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < blob.length; i += 4) blob.writeUInt32LE((Math.imul(i, 2654435761) ^ (i >>> 7)) >>> 0, i);
    const sha = await commitFiles(work, { 'README.md': '# through nginx\n', 'data.bin': blob }, 'first');
    await gitOk(work, ['push', '-q', remote, 'HEAD:refs/heads/master']);
    const branches = await call('GET', `/projects/${project.body.id}/repository/branches`);
    expect(branches.body.map((b: { name: string; commit: { id: string } }) => [b.name, b.commit.id])).toEqual([['master', sha]]);
    const into = join(tempDir('gantry-nginx-clone-'), 'c');
    await gitOk(tempDir(), ['clone', '-q', remote, into]);
    expect(readFileSync(join(into, 'data.bin')).equals(blob)).toBe(true);
    // the push went through nginx (its access log), accepted whole
    expect(nginx.accessLog()).toMatch(/"POST \/root\/through-nginx\.git\/git-receive-pack HTTP\/1\.1" 200 /);
  }, 60_000);

  it('takes an upload larger than nginx\'s default body limit, and serves it back', async () => {
    const project = await call('POST', '/projects', { name: 'uploads-through-nginx' });
    expect(project.status).toBe(201);
    const data = Buffer.alloc(3 * 1024 * 1024, 7);
    const form = new FormData();
    form.append('file', new Blob([data]), 'big.bin');
    const r = await fetch(`${nginx.url}/api/v3/projects/${project.body.id}/uploads`, { method: 'POST', headers: { 'private-token': root }, body: form });
    const body = await r.json() as { url: string };
    expect(r.status, JSON.stringify(body)).toBe(201);
    const back = await fetch(`${nginx.url}/root/uploads-through-nginx${body.url}`, { headers: { 'private-token': root } });
    expect(back.status).toBe(200);
    expect(Buffer.from(await back.arrayBuffer()).equals(data)).toBe(true);
  }, 60_000);

  it('passes SSH through the stream module: the daemon\'s host key answers on nginx\'s SSH port', () => {
    const scan = (port: number) => spawnSync('ssh-keyscan', ['-t', 'ed25519', '-p', String(port), '127.0.0.1'], { encoding: 'utf8', timeout: 20_000 });
    const keys = (out: string) => out.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(' ').slice(1).join(' '));
    const direct = keys(scan(ports.ssh).stdout);
    expect(direct).toHaveLength(1);
    expect(direct[0]).toMatch(/^ssh-ed25519 /);
    expect(keys(scan(ports.nginxSsh).stdout)).toEqual(direct);
  }, 60_000);
});
