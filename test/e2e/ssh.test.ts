/**
 * git over SSH end to end: the built gantryd with its SSH server on a free port, keys added through the API, and the
 * stock OpenSSH client and git (GIT_SSH_COMMAND="ssh -i KEY -p PORT ..."): clone, push, branch protection, deploy
 * keys, refused keys and commands, the welcome line, enabled_git_access_protocol, garbage connections, and the host
 * key across a restart. Needs `npm run build`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SSH_PORT, resolveConfig } from '../../daemon/config.js';
import { startDaemon } from '../../daemon/main.js';
import { DEFAULT_SSH_LIMITS, MAX_UNAUTHENTICATED_PER_ADDRESS } from '../../daemon/ssh/server.js';
import { commitFiles, git, gitOk, repoUrl, tempDir } from '../helpers/git.js';
import { startReceiver, waitUntil } from '../helpers/hook-receiver.js';
import { generateKeyPair, type TestKeyPair } from '../helpers/ssh-keys.js';
import { api, cleanEnv, cleanupTmp, killAll, startGantryd, tmp, type Daemon } from './helpers.js';
import { databaseUrlOf, dataDirArgs, dropDatabases } from './database.js';

const PASSWORD = 'ssh-e2e-root-password';

let daemon: Daemon;
let dataDir: string;
let sshPort: number;
let rootToken: string;
const knownHosts = join(tempDir('gantry-ssh-kh-'), 'known_hosts');

interface User { id: number; username: string; token: string; key: TestKeyPair }
let alice: User;
let bob: User;
let project: { id: number; path_with_namespace: string; ssh_url_to_repo: string; http_url_to_repo: string };
let other: { id: number; path_with_namespace: string; ssh_url_to_repo: string };
let deployKey: TestKeyPair;
let unknownKey: TestKeyPair;

/** Start gantryd with SSH on a free port (on `dir`); returns the daemon and its SSH port. */
async function start(dir: string): Promise<{ d: Daemon; port: number }> {
  const d = await startGantryd(['--port', '0', '--ssh-port', '0', ...(await dataDirArgs(dir))], cleanEnv({ GANTRY_ROOT_PASSWORD: PASSWORD }), 60_000);
  return { d, port: await sshReadyPort(d) };
}

/** The SSH port of the line `gantryd ssh listening on <host>:<port>`, which comes right after the HTTP ready line. */
async function sshReadyPort(d: Daemon, host = '127.0.0.1'): Promise<number> {
  const line = new RegExp(`^gantryd ssh listening on ${host.replace(/\./g, '\\.')}:(\\d+)$`, 'm');
  for (let i = 0; i < 100 && !line.test(d.stdout()); i++) await new Promise((r) => setTimeout(r, 20));
  const m = line.exec(d.stdout());
  if (!m) throw new Error(`no ssh ready line in: ${d.stdout()}`);
  return Number(m[1]);
}

/** The ssh command line for a key (as GIT_SSH_COMMAND or split for spawn). */
const sshArgs = (key: TestKeyPair, port = sshPort) => [
  '-i', key.privatePath, '-p', String(port), '-o', 'StrictHostKeyChecking=accept-new', '-o', `UserKnownHostsFile=${knownHosts}`,
  '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR',
];
const sshEnv = (key: TestKeyPair) => ({ GIT_SSH_COMMAND: `ssh ${sshArgs(key).join(' ')}` });

/** Run ssh itself; never throws. */
function ssh(key: TestKeyPair, args: string[], opts: { tty?: boolean; input?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn('ssh', [...sshArgs(key), ...(opts.tty ? ['-tt'] : ['-T']), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(opts.input ?? '');
  });
}

/** Clone a project over SSH with a key into a new directory. */
async function clone(key: TestKeyPair, url: string) {
  const dir = tempDir('gantry-ssh-clone-');
  const r = await git(dir, ['clone', url, 'c'], { env: sshEnv(key) });
  return { ...r, dir: join(dir, 'c') };
}

async function createUser(username: string): Promise<User> {
  const created = await api(daemon.url, 'POST', '/users', rootToken, { username, email: `${username}@example.com`, name: username, password: 'password123' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const session = await api(daemon.url, 'POST', '/session', null, { login: username, password: 'password123' });
  const key = generateKeyPair('ed25519', { comment: `${username}@laptop` });
  const added = await api(daemon.url, 'POST', '/user/keys', session.body.private_token, { title: `${username}'s laptop`, key: key.publicKey });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  return { id: created.body.id, username, token: session.body.private_token, key };
}

const setProtocol = async (value: string | null) =>
  expect((await api(daemon.url, 'PUT', '/application/settings', rootToken, { enabled_git_access_protocol: value })).status).toBe(200);

beforeAll(async () => {
  dataDir = tmp('gantry-ssh-data-');
  ({ d: daemon, port: sshPort } = await start(dataDir));
  rootToken = (await api(daemon.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
  alice = await createUser('alice');
  bob = await createUser('bob');
  project = (await api(daemon.url, 'POST', '/projects', alice.token, { name: 'app' })).body;
  other = (await api(daemon.url, 'POST', '/projects', alice.token, { name: 'other' })).body;
  expect((await api(daemon.url, 'POST', `/projects/${project.id}/members`, alice.token, { user_id: bob.id, access_level: 30 })).status).toBe(201);
  deployKey = generateKeyPair('ed25519', { comment: 'ci@deploy' });
  const dk = await api(daemon.url, 'POST', `/projects/${project.id}/deploy_keys`, alice.token, { title: 'CI', key: deployKey.publicKey });
  expect(dk.status, JSON.stringify(dk.body)).toBe(201);
  unknownKey = generateKeyPair('ed25519', { comment: 'stranger@nowhere' });
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  killAll();
  await dropDatabases();
  cleanupTmp();
});

describe('git over SSH', () => {
  it('prints its ready lines (the URL first, then SSH), advertises ssh:// URLs on its port, and keeps the host key private', () => {
    // a script taking the first `listening on (\S+)` gets the URL (CONTRACT.md); the SSH line follows it at once
    const lines = daemon.stdout().split('\n').filter((l) => /listening on/.test(l));
    expect(lines).toEqual([`gantryd listening on ${daemon.url}`, `gantryd ssh listening on 127.0.0.1:${sshPort}`]);
    expect(/listening on (\S+)/.exec(daemon.stdout())![1]).toBe(daemon.url);
    expect(project.ssh_url_to_repo).toBe(`ssh://git@127.0.0.1:${sshPort}/alice/app.git`);
    expect(statSync(join(dataDir, 'ssh_host_ed25519_key')).mode & 0o777).toBe(0o600);
  });

  it('clones, pushes (events and a pipeline follow) and clones again with a user key', async () => {
    const empty = await clone(alice.key, project.ssh_url_to_repo);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stderr).toContain('You appear to have cloned an empty repository');
    const sha = await commitFiles(empty.dir, { 'README.md': '# app\n', '.gitlab-ci.yml': 'test:\n  script: echo ok\n' }, 'first over ssh');
    const push = await git(empty.dir, ['push', 'origin', 'HEAD:master'], { env: sshEnv(alice.key) });
    expect(push.code, push.stderr).toBe(0);
    expect(push.stderr).toContain('* [new branch]      HEAD -> master');
    // The push is processed before the channel closes: its event and pipeline are there when git returns.
    const events = await api(daemon.url, 'GET', `/projects/${project.id}/events`, alice.token);
    const pushed = events.body.find((e: { action_name: string; data?: { after?: string } }) => e.action_name === 'pushed new' && e.data?.after === sha);
    expect(pushed, JSON.stringify(events.body)).toMatchObject({ author_username: 'alice', data: { ref: 'refs/heads/master', user_username: 'alice' } });
    const pipelines = await api(daemon.url, 'GET', `/projects/${project.id}/pipelines`, alice.token);
    expect(pipelines.body.map((p: { sha: string; ref: string }) => [p.sha, p.ref])).toContainEqual([sha, 'master']);

    const again = await clone(alice.key, project.ssh_url_to_repo);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(again.dir, 'README.md'), 'utf8')).toBe('# app\n');
    expect(await gitOk(again.dir, ['rev-parse', 'HEAD'])).toBe(sha);
    // the short scp form and a path without .git name the same project
    const scp = await git(tempDir(), ['clone', `git@127.0.0.1:alice/app`, 'c'], { env: sshEnv(alice.key) });
    expect(scp.code, scp.stderr).toBe(0);
  });

  it('sends the project\'s push hook for a push over SSH, with the pushed sha and ref', async () => {
    const recv = await startReceiver();
    try {
      const hook = await api(daemon.url, 'POST', `/projects/${project.id}/hooks`, alice.token, { url: `${recv.url}/ssh-push`, token: 'ssh-secret' });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const c = await clone(alice.key, project.ssh_url_to_repo);
      expect(c.code, c.stderr).toBe(0);
      const before = await gitOk(c.dir, ['rev-parse', 'HEAD']);
      const sha = await commitFiles(c.dir, { 'hooked.txt': 'over ssh\n' }, 'a hooked push over ssh');
      const push = await git(c.dir, ['push', 'origin', 'HEAD:master'], { env: sshEnv(alice.key) });
      expect(push.code, push.stderr).toBe(0);
      await waitUntil(() => recv.to('/ssh-push').length > 0, 'the push hook of the SSH push');
      const [delivery] = recv.to('/ssh-push');
      expect(delivery.headers['x-gitlab-event']).toBe('Push Hook');
      expect(delivery.headers['x-gitlab-token']).toBe('ssh-secret');
      expect(delivery.json()).toMatchObject({
        object_kind: 'push', ref: 'refs/heads/master', before, after: sha, checkout_sha: sha, user_name: 'alice', total_commits_count: 1,
        project: { path_with_namespace: 'alice/app' },
      });
      expect(delivery.json().commits.map((x: { id: string }) => x.id)).toEqual([sha]);
      expect((await api(daemon.url, 'DELETE', `/projects/${project.id}/hooks/${hook.body.id}`, alice.token)).status).toBe(200);
    } finally {
      await recv.stop();
    }
  });

  it('refuses a push to a protected branch with git\'s usual text, and takes the developer\'s push to another branch', async () => {
    const c = await clone(bob.key, project.ssh_url_to_repo);
    expect(c.code, c.stderr).toBe(0);
    await commitFiles(c.dir, { 'bob.txt': 'bob\n' }, 'bob was here');
    const refused = await git(c.dir, ['push', 'origin', 'HEAD:master'], { env: sshEnv(bob.key) });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('remote: You are not allowed to push code to protected branches on this project.');
    expect(refused.stderr).toContain('! [remote rejected] HEAD -> master (pre-receive hook declined)');
    const feature = await git(c.dir, ['push', 'origin', 'HEAD:bob-feature'], { env: sshEnv(bob.key) });
    expect(feature.code, feature.stderr).toBe(0);
    const branch = await api(daemon.url, 'GET', `/projects/${project.id}/repository/branches/bob-feature`, alice.token);
    expect(branch.status).toBe(200);
    expect(branch.body.commit.message.trim()).toBe('bob was here');
  });

  it('lets a deploy key clone the projects it is enabled on, and nothing else', async () => {
    const c = await clone(deployKey, project.ssh_url_to_repo);
    expect(c.code, c.stderr).toBe(0);
    await commitFiles(c.dir, { 'deploy.txt': 'no\n' }, 'from a deploy key');
    const push = await git(c.dir, ['push', 'origin', 'HEAD:deploy'], { env: sshEnv(deployKey) });
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain('Gantry: You are not allowed to upload code for this project.');
    const elsewhere = await clone(deployKey, other.ssh_url_to_repo);
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain('Gantry: The project you were looking for could not be found.');
    expect((await ssh(deployKey, ['git@127.0.0.1'])).stdout).toBe('Welcome to Gantry, deploy key "CI"!\n');
  });

  it('gives a project the user may not see the not-found answer, as over HTTP', async () => {
    const c = await clone(bob.key, other.ssh_url_to_repo);
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain('Gantry: The project you were looking for could not be found.');
    expect(c.stderr).toContain('fatal: Could not read from remote repository.');
  });

  it('refuses unknown keys, other user names and blocked users at authentication', async () => {
    const unknown = await clone(unknownKey, project.ssh_url_to_repo);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('git@127.0.0.1: Permission denied (publickey).');
    const otherName = await ssh(alice.key, [`alice@127.0.0.1`]);
    expect(otherName.code).toBe(255);
    expect(otherName.stderr).toContain('Permission denied (publickey)');

    expect((await api(daemon.url, 'PUT', `/users/${bob.id}/block`, rootToken)).status).toBe(200);
    try {
      const blocked = await clone(bob.key, project.ssh_url_to_repo);
      expect(blocked.code).not.toBe(0);
      expect(blocked.stderr).toContain('Permission denied (publickey)');
    } finally {
      expect((await api(daemon.url, 'PUT', `/users/${bob.id}/unblock`, rootToken)).status).toBe(200);
    }
    expect((await clone(bob.key, project.ssh_url_to_repo)).code).toBe(0);
  });

  it('authenticates RSA (rsa-sha2-512 and rsa-sha2-256 signatures) and ECDSA keys as well as ed25519', async () => {
    for (const [type, bits] of [['rsa', 2048], ['ecdsa', 256], ['ecdsa', 521]] as const) {
      const key = generateKeyPair(type, { bits });
      expect((await api(daemon.url, 'POST', '/user/keys', bob.token, { title: `${type}-${bits}`, key: key.publicKey })).status).toBe(201);
      const r = await ssh(key, ['git@127.0.0.1']);
      expect(r, `${type} ${bits}`).toMatchObject({ code: 0, stdout: 'Welcome to Gantry, @bob!\n' });
      if (type === 'rsa') {
        const sha256 = await ssh(key, ['-o', 'PubkeyAcceptedAlgorithms=rsa-sha2-256', 'git@127.0.0.1']);
        expect(sha256).toMatchObject({ code: 0, stdout: 'Welcome to Gantry, @bob!\n' });
      }
    }
  });

  it('applies a key removed after login at the connection\'s next command', async () => {
    // one connection kept open by an OpenSSH control master; each later ssh runs a new command over it
    const carol = await createUser('carol');
    const carolProject = (await api(daemon.url, 'POST', '/projects', carol.token, { name: 'mine' })).body;
    const control = join(tempDir('gantry-ssh-ctl-'), 'ctl');
    const master = spawn('ssh', [...sshArgs(carol.key), '-o', 'ControlMaster=yes', '-o', `ControlPath=${control}`, '-N', 'git@127.0.0.1'], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 200 && !existsSync(control); i++) await new Promise((r) => setTimeout(r, 25));
      // `0000`: the client wants nothing after the advertisement, so upload-pack ends cleanly
      const viaMaster = (command: string) => ssh(carol.key, ['-o', `ControlPath=${control}`, 'git@127.0.0.1', command], { input: '0000' });
      const before = await viaMaster(`git-upload-pack '${carolProject.path_with_namespace}.git'`);
      expect(before.code, before.stderr).toBe(0);
      const keys = await api(daemon.url, 'GET', '/user/keys', carol.token);
      expect((await api(daemon.url, 'DELETE', `/user/keys/${keys.body[0].id}`, carol.token)).status).toBe(200);
      const after = await viaMaster(`git-upload-pack '${carolProject.path_with_namespace}.git'`);
      expect(after.code).toBe(1);
      expect(after.stderr).toContain('Gantry: this key is no longer registered or its account is blocked');
    } finally {
      master.kill();
    }
  });

  it('greets a bare ssh and refuses commands, subsystems and forwarding with a clear message', async () => {
    const bare = await ssh(alice.key, ['git@127.0.0.1']);
    expect(bare).toMatchObject({ code: 0, stdout: 'Welcome to Gantry, @alice!\n' });
    const tty = await ssh(alice.key, ['git@127.0.0.1'], { tty: true });
    expect(tty.code).toBe(0);
    expect(tty.stdout).toContain('Welcome to Gantry, @alice!\r\n');
    expect(tty.stderr).not.toContain('PTY allocation request failed');

    const cmd = await ssh(alice.key, ['git@127.0.0.1', 'cat /etc/passwd']);
    expect(cmd.code).toBe(1);
    expect(cmd.stdout).toBe('');
    expect(cmd.stderr).toContain('Gantry: "cat" is not a command Gantry runs. Gantry only serves git over SSH');
    const traversal = await ssh(alice.key, ['git@127.0.0.1', "git-upload-pack '../../repositories/1.git'"]);
    expect(traversal.code).toBe(1);
    expect(traversal.stderr).toContain('is not a repository path');
    const sftp = await ssh(alice.key, ['-s', 'git@127.0.0.1', 'sftp']);
    expect(sftp.code).not.toBe(0);
    expect(sftp.stderr).toContain('Gantry: the sftp subsystem is not available.');
    const forward = await ssh(alice.key, ['-o', 'ExitOnForwardFailure=yes', '-R', '0:127.0.0.1:9', 'git@127.0.0.1']);
    expect(forward.code).toBe(255);
    expect(forward.stderr).toMatch(/remote port forwarding failed/);
  });

  it('refuses local port forwarding (direct-tcpip: ssh -W and ssh -L), also to its own HTTP port', async () => {
    const httpPort = new URL(daemon.url).port;
    const args = sshArgs(alice.key).map((a) => (a === 'LogLevel=ERROR' ? 'LogLevel=INFO' : a)); // INFO shows the refused channel
    const stdio = spawnSync('ssh', [...args, '-W', `127.0.0.1:${httpPort}`, 'git@127.0.0.1'], { encoding: 'utf8', input: 'GET /-/health HTTP/1.0\r\n\r\n' });
    expect(stdio.status).toBe(255);
    expect(stdio.stdout).toBe('');
    expect(stdio.stderr).toMatch(/open failed: administratively prohibited/);
    expect(stdio.stderr).toContain('stdio forwarding failed');

    const localPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(port));
      });
    });
    let stderr = '';
    const tunnel = spawn('ssh', [...args, '-N', '-L', `${localPort}:127.0.0.1:${httpPort}`, 'git@127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    tunnel.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    try {
      // once ssh listens locally, a connection through the tunnel is closed without an answer
      let answer: string | null = null;
      for (let i = 0; i < 200 && answer === null; i++) {
        answer = await new Promise<string | null>((resolve) => {
          // null: ssh does not listen yet; else what came back before the tunnel closed the connection
          const s = connect(localPort, '127.0.0.1');
          let connected = false;
          let got = '';
          s.on('error', () => undefined);
          s.on('connect', () => {
            connected = true;
            s.write('GET /-/health HTTP/1.0\r\n\r\n');
          });
          s.on('data', (d: Buffer) => { got += d.toString(); });
          s.on('close', () => resolve(connected ? got : null));
        });
        if (answer === null) await new Promise((r) => setTimeout(r, 25));
      }
      expect(answer).toBe('');
      for (let i = 0; i < 100 && !/open failed/.test(stderr); i++) await new Promise((r) => setTimeout(r, 20));
      expect(stderr).toMatch(/open failed: administratively prohibited/);
    } finally {
      tunnel.kill();
    }
  });

  it('follows enabled_git_access_protocol: http refuses SSH, ssh refuses HTTP while SSH works', async () => {
    try {
      await setProtocol('http');
      const refused = await clone(alice.key, project.ssh_url_to_repo);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('Gantry: Git access over SSH is not allowed; use HTTP');

      await setProtocol('ssh');
      const http = await git(tempDir(), ['clone', repoUrl(daemon.url, project.path_with_namespace, { username: 'alice', password: 'password123' }), 'c']);
      expect(http.code).not.toBe(0);
      expect(http.stderr).toContain('Git access over HTTP is not allowed; use SSH');
      const viaSsh = await clone(alice.key, project.ssh_url_to_repo);
      expect(viaSsh.code, viaSsh.stderr).toBe(0);
    } finally {
      await setProtocol(null);
    }
  });

  it('survives garbage, abrupt disconnects and a crowd of idle connections: HTTP and SSH keep working', async () => {
    const open = (): Promise<Socket> => new Promise((resolve, reject) => {
      const s = connect(sshPort, '127.0.0.1', () => resolve(s));
      s.on('error', reject);
    });
    const junk = await open();
    junk.on('error', () => undefined);
    junk.write(Buffer.from('GET / HTTP/1.1\r\n\r\n\0\xff\xfe garbage'.repeat(100), 'binary'));
    const header = await open();
    header.on('error', () => undefined);
    header.write('SSH-2.0-Evil\r\n');
    header.write(Buffer.alloc(70_000, 0xff));
    const abrupt = await open();
    abrupt.resetAndDestroy();
    const crowd: Socket[] = [];
    for (let i = 0; i < 100; i++) {
      const s = await open().catch(() => null);
      if (s) {
        s.on('error', () => undefined);
        crowd.push(s);
      }
    }
    expect((await fetch(`${daemon.url}/-/health`)).status).toBe(200);
    for (const s of [...crowd, junk, header]) s.destroy();
    const c = await clone(alice.key, project.ssh_url_to_repo);
    expect(c.code, c.stderr).toBe(0);
    expect((await fetch(`${daemon.url}/-/health`)).status).toBe(200);
    expect(daemon.proc.exitCode).toBeNull();
  });

  it('closes silent connections from one address past its cap at once, and SSH stays open to other addresses meanwhile', async () => {
    const { maxUnauthenticated, maxUnauthenticatedPerAddress: perAddress, authTimeoutMs } = DEFAULT_SSH_LIMITS;
    expect(perAddress).toBe(MAX_UNAUTHENTICATED_PER_ADDRESS);
    expect(perAddress).toBeLessThan(maxUnauthenticated);
    expect(authTimeoutMs).toBe(60_000);
    // more silent connections from 127.0.0.1 than the global cap: without the per-address cap they would take every
    // slot, and the clone from 127.0.0.2 below would be cut before its key exchange
    const silent: { socket: Socket; closed: Promise<void>; isClosed: () => boolean }[] = [];
    for (let i = 0; i < maxUnauthenticated + 2; i++) {
      silent.push(await new Promise((resolve) => {
        let done = false;
        const socket = connect(sshPort, '127.0.0.1');
        const closed = new Promise<void>((r) => socket.once('close', () => { done = true; r(); }));
        socket.on('error', () => undefined);
        socket.resume();
        socket.once('connect', () => resolve({ socket, closed, isClosed: () => done }));
        socket.once('close', () => resolve({ socket, closed, isClosed: () => done }));
      }));
    }
    try {
      // the excess is closed at once (the survivors only after authTimeoutMs, 60 s)
      const started = Date.now();
      while (silent.filter((c) => !c.isClosed()).length > perAddress && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 20));
      expect(silent.filter((c) => !c.isClosed())).toHaveLength(perAddress);
      expect(Date.now() - started).toBeLessThan(5_000);
      // another address gets in while the survivors are still open
      const dir = tempDir('gantry-ssh-other-address-');
      const other = await git(dir, ['clone', project.ssh_url_to_repo, 'c'], {
        env: { GIT_SSH_COMMAND: `ssh ${sshArgs(alice.key).join(' ')} -o BindAddress=127.0.0.2` },
      });
      expect(other.code, other.stderr).toBe(0);
      expect(silent.filter((c) => !c.isClosed())).toHaveLength(perAddress);
      // and 127.0.0.1 itself is refused at once until one of its silent connections goes
      const refused = await new Promise<boolean>((resolve) => {
        const s = connect(sshPort, '127.0.0.1');
        s.on('error', () => undefined);
        s.resume();
        const t = setTimeout(() => { s.destroy(); resolve(false); }, 3_000);
        s.once('close', () => { clearTimeout(t); resolve(true); });
      });
      expect(refused).toBe(true);
    } finally {
      for (const c of silent) c.socket.destroy();
      await Promise.all(silent.map((c) => c.closed));
    }
    const again = await clone(alice.key, project.ssh_url_to_repo);
    expect(again.code, again.stderr).toBe(0);
  });

  it('keeps its host key across a restart', async () => {
    const scan = (port: number) => execFileSync('ssh-keyscan', ['-t', 'ed25519', '-p', String(port), '127.0.0.1'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n').find((l) => l.includes('ssh-ed25519'))!.split(' ').slice(1).join(' ');
    const before = scan(sshPort);
    expect(before).toMatch(/^ssh-ed25519 AAAA/);
    expect(readFileSync(join(dataDir, 'ssh_host_ed25519_key.pub'), 'utf8')).toContain(before);
    await daemon.stop();
    ({ d: daemon, port: sshPort } = await start(dataDir));
    expect(scan(sshPort)).toBe(before);
    // a client that trusted the key before connects without a question (the known_hosts entry is per port: copy it)
    const entry = readFileSync(knownHosts, 'utf8').split('\n').find((l) => l.includes('ssh-ed25519'))!.replace(/^\S+/, `[127.0.0.1]:${sshPort}`);
    writeFileSync(knownHosts, `${entry}\n`);
    const strict = await git(tempDir(), ['clone', project.ssh_url_to_repo.replace(/:\d+\//, `:${sshPort}/`), 'c'], {
      env: { GIT_SSH_COMMAND: `ssh ${sshArgs(alice.key).join(' ').replace('StrictHostKeyChecking=accept-new', 'StrictHostKeyChecking=yes')}` },
    });
    expect(strict.code, strict.stderr).toBe(0);
    expect(existsSync(join(dataDir, 'ssh_host_ed25519_key'))).toBe(true);
  });
});

describe('SSH port settings', () => {
  it('ends the start when a given SSH port is taken, and only warns when the default 2222 is', async () => {
    // the port is held by the running daemon
    const given = await startGantryd(['--port', '0', '--ssh-port', String(sshPort), ...(await dataDirArgs(tmp()))], cleanEnv({ GANTRY_ROOT_PASSWORD: PASSWORD })).then(
      (d) => d.stop().then(() => 'started'),
      (e: Error) => e.message,
    );
    expect(given).toContain(`gantryd: SSH port ${sshPort} on 127.0.0.1 is already in use`);
    expect(given).toContain('--ssh-port');

    // The default port: held here (or by whoever holds it already), the daemon warns and serves HTTP without SSH.
    const holder = createServer();
    await new Promise<void>((resolve) => {
      holder.once('error', () => resolve());
      holder.listen(DEFAULT_SSH_PORT, '127.0.0.1', () => resolve());
    });
    try {
      const d = await startGantryd(['--port', '0', ...(await dataDirArgs(tmp()))], cleanEnv({ GANTRY_ROOT_PASSWORD: PASSWORD, GANTRY_SSH_PORT: '' }));
      try {
        expect(d.stdout()).not.toContain('ssh listening');
        // the warning is a log line on stderr, which may arrive just after the ready line on stdout
        for (let i = 0; i < 100 && !d.stderr().includes('running without SSH'); i++) await new Promise((r) => setTimeout(r, 50));
        expect(d.stderr()).toContain(`SSH port ${DEFAULT_SSH_PORT} on 127.0.0.1 is already in use (another gantryd?); running without SSH`);
        expect((await fetch(`${d.url}/-/health`)).status).toBe(200);
      } finally {
        await d.stop();
      }
    } finally {
      holder.close();
    }
  });

  it('runs without SSH when the port is off', async () => {
    const d = await startGantryd(['--port', '0', '--ssh-port', 'off', ...(await dataDirArgs(tmp()))], cleanEnv({ GANTRY_ROOT_PASSWORD: PASSWORD }));
    try {
      expect(d.stdout()).not.toContain('ssh listening');
      const token = (await api(d.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
      const p = await api(d.url, 'POST', '/projects', token, { name: 'nossh' });
      expect(p.body.ssh_url_to_repo).toBe('git@127.0.0.1:root/nossh.git');
    } finally {
      await d.stop();
    }
  });

  it('listens on --ssh-host only, says so in its ready line and advertises it', async () => {
    const d = await startGantryd(['--port', '0', '--ssh-port', '0', '--ssh-host', '127.0.0.2', ...(await dataDirArgs(tmp()))], cleanEnv({ GANTRY_ROOT_PASSWORD: PASSWORD }));
    try {
      const port = await sshReadyPort(d, '127.0.0.2');
      expect(d.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const token = (await api(d.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
      expect((await api(d.url, 'POST', '/projects', token, { name: 'bound' })).body.ssh_url_to_repo).toBe(`ssh://git@127.0.0.2:${port}/root/bound.git`);
      const key = generateKeyPair('ed25519');
      expect((await api(d.url, 'POST', '/user/keys', token, { title: 'k', key: key.publicKey })).status).toBe(201);
      const welcome = spawnSync('ssh', [...sshArgs(key, port), '-T', 'git@127.0.0.2'], { encoding: 'utf8', input: '' });
      expect(welcome.stdout).toBe('Welcome to Gantry, @root!\n');
      // nothing listens on the port at 127.0.0.1
      const elsewhere = await new Promise<string>((resolve) => {
        const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve('connected'); });
        s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      });
      expect(elsewhere).toBe('ECONNREFUSED');
    } finally {
      await d.stop();
    }
  });

  it('advertises --ssh-external-host/port in ssh_url_to_repo', async () => {
    const d = await startGantryd(
      ['--port', '0', '--ssh-port', '0', '--ssh-external-host', 'git.example.com', '--ssh-external-port', '22', ...(await dataDirArgs(tmp()))],
      cleanEnv({ GANTRY_ROOT_PASSWORD: PASSWORD }),
    );
    try {
      const token = (await api(d.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
      const p = await api(d.url, 'POST', '/projects', token, { name: 'fwd' });
      expect(p.body.ssh_url_to_repo).toBe('git@git.example.com:root/fwd.git');
    } finally {
      await d.stop();
    }
  });
});

describe('SSH connection limits (a daemon in this process with short timeouts)', () => {
  it('closes a connection that does not authenticate in time, an idle authenticated one, and refuses connections over the cap', async () => {
    const dir = tmp('gantry-ssh-limits-');
    const config = resolveConfig({ dataDir: dir, port: '0', sshPort: '0', rootPassword: PASSWORD, logLevel: 'silent', databaseUrl: await databaseUrlOf(dir) }, {});
    const d = await startDaemon(config, {
      logger: false,
      // (timeouts long enough for ssh's own key exchange and authentication on a loaded 2-core machine)
      sshLimits: { ...DEFAULT_SSH_LIMITS, authTimeoutMs: 2000, idleTimeoutMs: 1500, maxUnauthenticated: 3 },
    });
    try {
      const port = d.ssh!.port;
      const closed = (s: Socket) => new Promise<void>((resolve) => s.once('close', () => resolve()));
      const open = () => new Promise<Socket>((resolve) => {
        const s = connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => undefined);
        s.resume(); // read what the server sends, so its close is seen
      });
      // three silent connections fill the unauthenticated slots: a fourth is closed at once, and the three after 2 s
      const silent = [await open(), await open(), await open()];
      const fourth = await open();
      await closed(fourth);
      await Promise.all(silent.map(closed));

      const token = (await api(d.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
      const key = generateKeyPair('ed25519');
      expect((await api(d.url, 'POST', '/user/keys', token, { title: 'k', key: key.publicKey })).status).toBe(201);
      // `ssh -N` authenticates and then sends nothing: the idle timeout ends it, and ssh exits
      const idle = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const p = spawn('ssh', ['-v', ...sshArgs(key, port), '-N', 'git@127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
        p.on('close', (code) => resolve({ code, stderr }));
      });
      expect(idle.stderr).toContain('Authenticated to 127.0.0.1');
      expect(idle.code).toBe(255);
    } finally {
      await d.close();
    }
  });

  it('lets running git commands finish when it closes, and cuts idle connections at once', async () => {
    const dir = tmp('gantry-ssh-drain-');
    const config = resolveConfig({ dataDir: dir, port: '0', sshPort: '0', rootPassword: PASSWORD, logLevel: 'silent', databaseUrl: await databaseUrlOf(dir) }, {});
    const d = await startDaemon(config, { logger: false });
    try {
      const port = d.ssh!.port;
      const token = (await api(d.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
      const key = generateKeyPair('ed25519');
      expect((await api(d.url, 'POST', '/user/keys', token, { title: 'k', key: key.publicKey })).status).toBe(201);
      expect((await api(d.url, 'POST', '/projects', token, { name: 'drain' })).status).toBe(201);
      const run = (args: string[]) => {
        const p = spawn('ssh', [...sshArgs(key, port), '-T', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        p.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
        const exited = new Promise<number | null>((resolve) => p.on('close', (code) => resolve(code)));
        return { p, exited, stdout: () => stdout };
      };
      const idle = run(['-N', 'git@127.0.0.1']);
      // upload-pack advertises and then waits for the client: a git command in the middle of its work
      const git = run(['git@127.0.0.1', "git-upload-pack 'root/drain.git'"]);
      for (let i = 0; i < 200 && !git.stdout().includes('0000'); i++) await new Promise((r) => setTimeout(r, 25));
      expect(git.stdout()).toMatch(/0000$/);
      const closing = d.ssh!.close();
      expect(await idle.exited).toBe(255);
      git.p.stdin.end('0000'); // the client is done: upload-pack exits 0 and the connection closes after it
      expect(await git.exited).toBe(0);
      await closing;
    } finally {
      await d.close();
    }
  });
});
