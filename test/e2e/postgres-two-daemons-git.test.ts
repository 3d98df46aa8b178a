/**
 * git through two gantryd processes on one PostgreSQL database and one data directory (issue 22: "a push through one
 * daemon cloned over SSH from the other"): both serve the one SSH host key of the data dir; a push over HTTP through
 * A is cloned over SSH from B and the other way round; a branch protected through A refuses a force push through B;
 * two pushes and two API file commits to one branch through both daemons at once: one wins, the other gets git's (or
 * 8.x's) answer, never a 500, and exactly the winner's push event is recorded.
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass); needs the build (npm test builds first).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitOk, repoUrl, tempDir } from '../helpers/git.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { generateKeyPair, type TestKeyPair } from '../helpers/ssh-keys.js';
import { api, type Daemon } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';

const PASSWORD = 'two-daemons-git-root-password';

describe.skipIf(!TEST_DATABASE_URL)('git through two gantryd processes on one PostgreSQL database', () => {
  let a: Daemon;
  let b: Daemon;
  const sshPort = new Map<Daemon, number>();
  let dataDir: string;
  let dbUrl: string;
  let pair: DaemonPair | undefined;
  let root: string;
  let alice: { id: number; username: string; token: string; key: TestKeyPair };
  let project: { id: number; path_with_namespace: string };
  const knownHosts = join(tempDir('gantry-two-git-kh-'), 'known_hosts');
  /** A failed step's answer with the tail of both daemons' logs. */
  const logs = () => `\nA: ${a.stderr().slice(-3000)}\nB: ${b.stderr().slice(-3000)}`;

  /** The SSH port from the ready line `gantryd ssh listening on 127.0.0.1:<port>`. */
  async function readSshPort(d: Daemon): Promise<number> {
    const line = /^gantryd ssh listening on 127\.0\.0\.1:(\d+)$/m;
    for (let i = 0; i < 200 && !line.test(d.stdout()); i++) await new Promise((r) => setTimeout(r, 25));
    const m = line.exec(d.stdout());
    if (!m) throw new Error(`no ssh ready line in: ${d.stdout()}`);
    return Number(m[1]);
  }
  const httpUrl = (d: Daemon, token = alice.token) => repoUrl(d.url, project.path_with_namespace, { username: alice.username, password: token });
  const sshUrl = (d: Daemon) => `ssh://git@127.0.0.1:${sshPort.get(d)}/${project.path_with_namespace}.git`;
  const sshEnv = () => ({
    GIT_SSH_COMMAND: `ssh -i ${alice.key.privatePath} -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=${knownHosts} -o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR`,
  });
  /** Clone into a new directory (SSH URLs with alice's key). */
  async function clone(url: string) {
    const dir = join(tempDir('gantry-two-git-'), 'w');
    const r = await git(tempDir(), ['clone', url, dir], { env: sshEnv() });
    return { ...r, dir };
  }

  beforeAll(async () => {
    // Both start at once on an empty data dir: each would make an SSH host key, one key must win for both.
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD, ['--ssh-port', '0'], 'gantry-two-git-');
    ({ a, b, dataDir, databaseUrl: dbUrl } = pair);
    for (const d of [a, b]) sshPort.set(d, await readSshPort(d));
    root = (await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
    const user = await api(a.url, 'POST', '/users', root, { username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alicepassword1', projects_limit: 10 });
    expect(user.status, JSON.stringify(user.body) + logs()).toBe(201);
    const session = await api(b.url, 'POST', '/session', null, { login: 'alice', password: 'alicepassword1' });
    alice = { id: user.body.id, username: 'alice', token: session.body.private_token, key: generateKeyPair('ed25519', { comment: 'alice@laptop' }) };
    const created = await api(a.url, 'POST', '/projects', alice.token, { name: 'shared' });
    expect(created.status, JSON.stringify(created.body) + logs()).toBe(201);
    project = created.body;
  }, 120_000);

  afterAll(async () => {
    if (pair) expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  });

  it('both serve SSH with the one host key of the shared data dir', () => {
    const scan = (port: number) => execFileSync('ssh-keyscan', ['-t', 'ed25519', '-p', String(port), '127.0.0.1'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n').find((l) => l.includes('ssh-ed25519'))!.split(' ').slice(1).join(' ');
    const [ka, kb] = [scan(sshPort.get(a)!), scan(sshPort.get(b)!)];
    expect(ka).toMatch(/^ssh-ed25519 AAAA/);
    expect(kb).toBe(ka);
    expect(readFileSync(join(dataDir, 'ssh_host_ed25519_key.pub'), 'utf8')).toContain(ka);
  });

  it('a push over HTTP through A is cloned over HTTP from B at once, with its push event and activity', async () => {
    const c = await clone(httpUrl(a));
    expect(c.code, c.stderr).toBe(0);
    const sha = await commitFiles(c.dir, { 'README.md': '# shared\n' }, 'first');
    const pushed = await git(c.dir, ['push', 'origin', 'master']);
    expect(pushed.code, pushed.stderr + logs()).toBe(0);
    const back = await clone(httpUrl(b));
    expect(back.code, back.stderr).toBe(0);
    expect(await gitOk(back.dir, ['rev-parse', 'HEAD'])).toBe(sha);
    const commit = await api(b.url, 'GET', `/projects/${project.id}/repository/commits/master`, alice.token);
    expect([commit.status, commit.body.id]).toEqual([200, sha]);
    const p = await api(b.url, 'GET', `/projects/${project.id}`, alice.token);
    expect(Date.parse(p.body.last_activity_at)).toBeGreaterThan(Date.parse(p.body.created_at));
    expect(await countPushEvents()).toBe(1);
  });

  it('a push over HTTP through A is cloned over SSH from B, and a push over SSH through B is cloned over HTTP from A', async () => {
    const key = await api(b.url, 'POST', '/user/keys', alice.token, { title: 'laptop', key: alice.key.publicKey });
    expect(key.status, JSON.stringify(key.body) + logs()).toBe(201);
    const work = await clone(httpUrl(a));
    expect(work.code, work.stderr).toBe(0);
    const viaHttp = await commitFiles(work.dir, { 'a.txt': 'through A\n' }, 'through A over HTTP');
    expect((await git(work.dir, ['push', 'origin', 'master'])).code).toBe(0);
    const overSsh = await clone(sshUrl(b));
    expect(overSsh.code, overSsh.stderr + logs()).toBe(0);
    expect(await gitOk(overSsh.dir, ['rev-parse', 'HEAD'])).toBe(viaHttp);

    const viaSsh = await commitFiles(overSsh.dir, { 'b.txt': 'through B\n' }, 'through B over SSH');
    const pushed = await git(overSsh.dir, ['push', 'origin', 'master'], { env: sshEnv() });
    expect(pushed.code, pushed.stderr + logs()).toBe(0);
    const overHttp = await clone(httpUrl(a));
    expect(overHttp.code, overHttp.stderr).toBe(0);
    expect(await gitOk(overHttp.dir, ['rev-parse', 'HEAD'])).toBe(viaSsh);
    const branch = await api(a.url, 'GET', `/projects/${project.id}/repository/branches/master`, alice.token);
    expect(branch.body.commit.id).toBe(viaSsh);
  });

  it('a branch protected through A refuses a force push and a deletion through B (HTTP); unprotected through B, the force push goes through A', async () => {
    const work = await clone(httpUrl(a));
    expect(work.code, work.stderr).toBe(0);
    await gitOk(work.dir, ['checkout', '-q', '-b', 'release']);
    const first = await commitFiles(work.dir, { 'r.txt': 'one\n' }, 'release one');
    expect((await git(work.dir, ['push', 'origin', 'release'])).code).toBe(0);
    const protect = await api(a.url, 'PUT', `/projects/${project.id}/repository/branches/release/protect`, alice.token);
    expect([protect.status, protect.body.protected], JSON.stringify(protect.body) + logs()).toEqual([200, true]);
    expect((await api(b.url, 'GET', `/projects/${project.id}/repository/branches/release`, alice.token)).body.protected).toBe(true);

    // A rewritten history, pushed with --force through B: refused by B's pre-receive hook, the branch stays.
    await gitOk(work.dir, ['commit', '-q', '--amend', '-m', 'release one, rewritten']);
    await gitOk(work.dir, ['remote', 'set-url', 'origin', httpUrl(b)]);
    const forced = await git(work.dir, ['push', '--force', 'origin', 'release']);
    expect(forced.code).not.toBe(0);
    expect(forced.stderr).toContain('You are not allowed to force push code to a protected branch on this project.');
    expect((await api(a.url, 'GET', `/projects/${project.id}/repository/branches/release`, alice.token)).body.commit.id).toBe(first);
    // Deleting it through B is refused as well.
    const deleted = await git(work.dir, ['push', 'origin', ':release']);
    expect(deleted.stderr).toContain('You are not allowed to delete protected branches from this project.');

    // Unprotected through B, the same force push goes through A.
    expect((await api(b.url, 'PUT', `/projects/${project.id}/repository/branches/release/unprotect`, alice.token)).body.protected).toBe(false);
    await gitOk(work.dir, ['remote', 'set-url', 'origin', httpUrl(a)]);
    const again = await git(work.dir, ['push', '--force', 'origin', 'release']);
    expect(again.code, again.stderr + logs()).toBe(0);
  });

  it('a branch protected through A refuses a force push over SSH through B', async () => {
    const protect = await api(a.url, 'PUT', `/projects/${project.id}/repository/branches/master/protect`, alice.token);
    expect(protect.status, JSON.stringify(protect.body) + logs()).toBe(200);
    const work = await clone(sshUrl(b));
    expect(work.code, work.stderr + logs()).toBe(0);
    const head = await gitOk(work.dir, ['rev-parse', 'HEAD']);
    await gitOk(work.dir, ['commit', '-q', '--amend', '-m', 'rewritten over SSH']);
    const forced = await git(work.dir, ['push', '--force', 'origin', 'master'], { env: sshEnv() });
    expect(forced.code).not.toBe(0);
    expect(forced.stderr).toContain('You are not allowed to force push code to a protected branch on this project.');
    expect((await api(a.url, 'GET', `/projects/${project.id}/repository/branches/master`, alice.token)).body.commit.id).toBe(head);
    expect((await api(a.url, 'PUT', `/projects/${project.id}/repository/branches/master/unprotect`, alice.token)).status).toBe(200);
  });

  it('two pushes to one branch through A and B at once: one lands, the other is refused by git; one push event', async () => {
    const base = await clone(httpUrl(a));
    expect(base.code, base.stderr).toBe(0);
    const before = await countPushEvents();
    const works = await Promise.all([a, b].map(async (d, i) => {
      const w = await clone(httpUrl(d));
      expect(w.code, w.stderr).toBe(0);
      const sha = await commitFiles(w.dir, { [`race-${i}.txt`]: `${i}\n` }, `race ${i}`);
      return { dir: w.dir, sha };
    }));
    const results = await Promise.all(works.map((w) => git(w.dir, ['push', 'origin', 'master'])));
    const won = results.map((r) => r.code === 0);
    expect(won.filter(Boolean), results.map((r) => r.stderr).join('\n---\n') + logs()).toHaveLength(1);
    const loser = results[won.indexOf(false)]!;
    // git's own answer for a compare-and-set lost to the other daemon's push (never an HTTP error)
    expect(loser.stderr).toMatch(/\[rejected\]|failed to lock|cannot lock ref|\[remote rejected\]/);
    expect(loser.stderr).not.toMatch(/\b500\b|RPC failed/);
    const winner = works[won.indexOf(true)]!;
    expect((await api(b.url, 'GET', `/projects/${project.id}/repository/branches/master`, alice.token)).body.commit.id).toBe(winner.sha);
    expect(await countPushEvents()).toBe(before + 1);
  });

  it('two API file commits to one branch through A and B at once: one 200, one 400, nothing lost or doubled', async () => {
    const path = `/projects/${project.id}/repository/files`;
    const head = (await api(a.url, 'GET', `/projects/${project.id}/repository/branches/master`, alice.token)).body.commit.id as string;
    const before = await countPushEvents();
    const rounds = 4;
    let landed = 0;
    for (let i = 0; i < rounds; i++) {
      const results = await Promise.all([a, b].map((d, j) => api(d.url, 'POST', path, alice.token, {
        file_path: `api-${i}-${j}.txt`, branch_name: 'master', content: `${i} ${j}\n`, commit_message: `api ${i} ${j}`,
      })));
      for (const r of results) {
        expect([201, 400], JSON.stringify(r.body) + logs()).toContain(r.status);
        if (r.status === 400) expect(r.body.message).toBe('Your changes could not be committed, because the branch has been updated since you started editing it');
      }
      landed += results.filter((r) => r.status === 201).length;
    }
    expect(landed).toBeGreaterThanOrEqual(rounds);
    // Every landed commit is on the branch, in one line of history, each with its push event.
    const log = await api(b.url, 'GET', `/projects/${project.id}/repository/commits?ref_name=master&per_page=100`, alice.token);
    const ids = (log.body as { id: string }[]).map((c) => c.id);
    expect(ids.indexOf(head)).toBe(landed);
    expect(await countPushEvents()).toBe(before + landed);
  });

  /** Push events of the project, counted through the data both daemons share (the commits API does not show them). */
  async function countPushEvents(): Promise<number> {
    const { Client } = (await import('pg')).default;
    const client = new Client({ connectionString: dbUrl });
    await client.connect();
    try {
      const r = await client.query(`SELECT COUNT(*)::int AS n FROM events WHERE project_id = $1 AND action = 'pushed'`, [project.id]);
      return r.rows[0].n as number;
    } finally {
      await client.end();
    }
  }
});
