/**
 * Merge requests across two gantryd processes on one PostgreSQL database (issue 22, items 2 and 7): created through A,
 * noted, edited and merged through B and read through the other; two merges of one merge request at once, one through
 * each daemon, make one merge commit; a merge lock left by a daemon that stopped beating is repaired by another daemon
 * (one joining: its start-time sweep), while the lock of a live daemon is left alone: undone when its merge commit never
 * reached the target branch, finished (merged state, closed issues) when it did.
 * (The merge when the pipeline succeeds across daemons is in postgres-two-daemons-ci.test.ts, where runners run.)
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass); needs the build (npm test builds first).
 */
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, cleanEnv, eventually, startGantryd, type Daemon } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';

const PASSWORD = 'two-daemons-mr-root-password';
/** The lease of a merge lock (daemon/services/merge-requests/merge.ts mergeLockTimes.leaseMs). */
const LEASE_MS = 60_000;

describe.skipIf(!TEST_DATABASE_URL)('merge requests across two gantryd processes', () => {
  let pair: DaemonPair | undefined;
  let a: Daemon;
  let b: Daemon;
  let db: pg.Client;
  let root: string;
  let erin: { id: number; token: string };
  let project: { id: number; path: string };
  let dir: string;
  const why = (r: { status: number; body: unknown }) => `${r.status} ${JSON.stringify(r.body)}\nA: ${a.stderr().slice(-2000)}\nB: ${b.stderr().slice(-2000)}`;

  /** A branch made from master's first commit with one file of its own, pushed through A. */
  async function branch(name: string): Promise<string> {
    await gitOk(dir, ['checkout', '-q', '-B', name, 'base']);
    const sha = await commitFiles(dir, { [`${name}.txt`]: `${name}\n` }, `add ${name}`);
    await gitOk(dir, ['push', '-q', repoUrl(a.url, project.path, { username: 'root', password: PASSWORD }), `HEAD:${name}`]);
    return sha;
  }

  /** Open a merge request of `source` into master through `d`. */
  async function open(d: Daemon, source: string, title: string): Promise<{ id: number; iid: number }> {
    const r = await api(d.url, 'POST', `/projects/${project.id}/merge_requests`, root, { source_branch: source, target_branch: 'master', title });
    expect(r.status, why(r)).toBe(201);
    return r.body;
  }

  /** The merge commits on master (titled "Merge branch ..."), newest first, read through `d`. */
  const mergeCommits = async (d: Daemon) => ((await api(d.url, 'GET', `/projects/${project.id}/repository/commits?ref_name=master&per_page=100`, root)).body as Array<{ id: string; title: string }>)
    .filter((c) => c.title.startsWith('Merge branch'));

  beforeAll(async () => {
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD);
    ({ a, b } = pair);
    db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
    root = (await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
    const user = await api(a.url, 'POST', '/users', root, { username: 'erin', email: 'erin@example.com', name: 'Erin', password: 'erinpassword1' });
    erin = { id: user.body.id, token: (await api(b.url, 'POST', '/session', null, { login: 'erin', password: 'erinpassword1' })).body.private_token };
    const p = await api(a.url, 'POST', '/projects', root, { name: 'merging' });
    project = { id: p.body.id, path: p.body.path_with_namespace };
    expect((await api(b.url, 'POST', `/projects/${project.id}/members`, root, { user_id: erin.id, access_level: 30 })).status).toBe(201);
    dir = await workTree();
    await commitFiles(dir, { 'README.md': '# merging\n' }, 'first');
    await gitOk(dir, ['tag', 'base']);
    await gitOk(dir, ['push', '-q', repoUrl(a.url, project.path, { username: 'root', password: PASSWORD }), 'HEAD:master']);
  }, 90_000);

  afterAll(async () => {
    await db?.end();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (pair) expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  }, 60_000);

  it('created through A, listed, noted and edited through B, read through A; merged through B, closing its issue', async () => {
    const issue = await api(a.url, 'POST', `/projects/${project.id}/issues`, root, { title: 'Add the feature' });
    const sha = await branch('feature');
    for (let i = 0; i < 2; i++) expect((await api(b.url, 'GET', `/projects/${project.id}/merge_requests`, root)).body).toEqual([]);
    const r = await api(a.url, 'POST', `/projects/${project.id}/merge_requests`, erin.token, {
      source_branch: 'feature', target_branch: 'master', title: 'Feature', description: `Closes #${issue.body.iid}`,
    });
    expect(r.status, why(r)).toBe(201);
    const mr = r.body as { id: number; iid: number };
    expect((await api(b.url, 'GET', `/projects/${project.id}/merge_requests`, root)).body.map((m: { id: number }) => m.id)).toEqual([mr.id]);
    expect((await api(b.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}/commits`, root)).body.map((c: { id: string }) => c.id)).toEqual([sha]);
    expect((await api(b.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}/closes_issues`, root)).body.map((i: { id: number }) => i.id)).toEqual([issue.body.id]);

    const note = await api(b.url, 'POST', `/projects/${project.id}/merge_requests/${mr.id}/notes`, root, { body: 'Looks good to me' });
    expect(note.status, why(note)).toBe(201);
    expect((await api(a.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}/notes`, erin.token)).body.map((n: { body: string }) => n.body)).toContain('Looks good to me');
    const award = await api(b.url, 'POST', `/projects/${project.id}/merge_requests/${mr.id}/award_emoji`, root, { name: 'thumbsup' });
    expect(award.status, why(award)).toBe(201);
    const edit = await api(b.url, 'PUT', `/projects/${project.id}/merge_requests/${mr.id}`, root, { title: 'Feature, reviewed', assignee_id: erin.id });
    expect(edit.status, why(edit)).toBe(200);
    expect((await api(a.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}`, root)).body)
      .toMatchObject({ title: 'Feature, reviewed', assignee: { id: erin.id }, upvotes: 1, state: 'opened' });

    const merged = await api(b.url, 'PUT', `/projects/${project.id}/merge_requests/${mr.id}/merge`, root);
    expect(merged.status, why(merged)).toBe(200);
    expect(merged.body.state).toBe('merged');
    const read = await api(a.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}`, root);
    expect(read.body).toMatchObject({ state: 'merged', merge_commit_sha: expect.stringMatching(/^[0-9a-f]{40}$/) });
    const master = await api(a.url, 'GET', `/projects/${project.id}/repository/branches/master`, root);
    expect(master.body.commit.id).toBe(read.body.merge_commit_sha);
    expect(master.body.commit.parent_ids).toContain(sha);
    expect((await api(a.url, 'GET', `/projects/${project.id}/issues/${issue.body.id}`, root)).body.state).toBe('closed');
    // merged through B: A refuses a second merge as on one daemon
    expect((await api(a.url, 'PUT', `/projects/${project.id}/merge_requests/${mr.id}/merge`, root)).status).toBe(406);
  });

  it('two merges of one merge request at once, one through each daemon: one merges, the other is refused, one merge commit', async () => {
    for (let round = 0; round < 3; round++) {
      const source = `race-${round}`;
      const sha = await branch(source);
      const mr = await open(round % 2 ? a : b, source, `Race ${round}`);
      const before = (await mergeCommits(a)).length;
      const [x, y] = await Promise.all([
        api(a.url, 'PUT', `/projects/${project.id}/merge_requests/${mr.id}/merge`, root),
        api(b.url, 'PUT', `/projects/${project.id}/merge_requests/${mr.id}/merge`, root),
      ]);
      const statuses = [x.status, y.status].sort();
      expect(statuses, why(x.status === 200 ? y : x)).toEqual([200, 406]);
      const winner = x.status === 200 ? x : y;
      expect(winner.body.state).toBe('merged');
      const commits = await mergeCommits(b);
      expect(commits).toHaveLength(before + 1);
      expect(commits[0].id).toBe(winner.body.merge_commit_sha);
      expect(commits[0].title).toBe(`Merge branch '${source}' into 'master'`);
      expect((await api(a.url, 'GET', `/projects/${project.id}/repository/commits/${commits[0].id}`, root)).body.parent_ids[1]).toBe(sha);
      const lock = await db.query('SELECT state, lock_state, lock_owner, lock_heartbeat_at FROM merge_requests WHERE id = $1', [mr.id]);
      expect(lock.rows[0]).toEqual({ state: 'merged', lock_state: null, lock_owner: null, lock_heartbeat_at: null });
    }
  });

  it('a merge lock of a daemon that stopped beating is repaired by another daemon; a live daemon\'s lock is left alone', async () => {
    await branch('interrupted');
    const mr = await open(a, 'interrupted', 'Interrupted');
    // a daemon (not A or B) took the lock and is beating: as 8.x answers a merge request being merged, 406 on both
    await db.query(
      `UPDATE merge_requests SET lock_state = state, state = 'locked', locked_at = $1, lock_owner = 'daemon-c', lock_heartbeat_at = $1, merge_user_id = $2 WHERE id = $3`,
      [new Date().toISOString(), erin.id, mr.id],
    );
    for (const d of [a, b]) expect((await api(d.url, 'PUT', `/projects/${project.id}/merge_requests/${mr.id}/merge`, root)).status).toBe(406);
    expect((await api(b.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}`, root)).body.state).toBe('locked');

    // another daemon starts on the same database and data dir: its start-time sweep leaves the live lock alone
    const args = ['--port', '0', '--data-dir', pair!.dataDir, '--root-password', PASSWORD, '--database-url', pair!.databaseUrl, '--ssh-port', 'off'];
    let c = await startGantryd(args, cleanEnv(), 60_000);
    expect((await c.stop('SIGTERM')).code).toBe(0);
    expect((await db.query('SELECT state, lock_owner FROM merge_requests WHERE id = $1', [mr.id])).rows[0]).toEqual({ state: 'locked', lock_owner: 'daemon-c' });

    // daemon-c dies: its heartbeat ages past the lease. The next daemon's sweep takes the lock over and, the merge
    // commit never having reached master, puts the merge request back as it was, saying why.
    await db.query('UPDATE merge_requests SET lock_heartbeat_at = $1 WHERE id = $2', [new Date(Date.now() - LEASE_MS - 5_000).toISOString(), mr.id]);
    const mastersBefore = (await api(a.url, 'GET', `/projects/${project.id}/repository/branches/master`, root)).body.commit.id;
    c = await startGantryd(args, cleanEnv(), 60_000);
    try {
      // the sweep runs as the daemon starts, beside its first requests
      const repaired = await eventually('the sweep of the new daemon', async () => {
        const r = await db.query('SELECT state, lock_state, lock_owner, lock_heartbeat_at, merge_error FROM merge_requests WHERE id = $1', [mr.id]);
        return r.rows[0].state === 'locked' ? null : r;
      }, 15_000, () => c.stderr());
      expect(repaired.rows[0]).toMatchObject({ state: 'opened', lock_state: null, lock_owner: null, lock_heartbeat_at: null, merge_error: expect.stringMatching(/interrupted/) });
      expect((await api(b.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}`, root)).body.state).toBe('opened');
      expect((await api(a.url, 'GET', `/projects/${project.id}/repository/branches/master`, root)).body.commit.id).toBe(mastersBefore);
      // and it merges again, through A
      const merged = await api(a.url, 'PUT', `/projects/${project.id}/merge_requests/${mr.id}/merge`, root);
      expect(merged.status, why(merged)).toBe(200);
      expect(merged.body.state).toBe('merged');
    } finally {
      expect((await c.stop('SIGTERM')).code).toBe(0);
    }
  }, 90_000);
  it('a merge whose commit reached the target branch before its daemon died is finished by another daemon\'s sweep', async () => {
    const issue = await api(b.url, 'POST', `/projects/${project.id}/issues`, root, { title: 'Half done' });
    const sha = await branch('half-done');
    const r = await api(a.url, 'POST', `/projects/${project.id}/merge_requests`, root, {
      source_branch: 'half-done', target_branch: 'master', title: 'Half done', description: `Closes #${issue.body.iid}`,
    });
    expect(r.status, why(r)).toBe(201);
    const mr = r.body as { id: number };
    const me = (await api(a.url, 'GET', '/user', root)).body.id as number;
    // the dying daemon had taken the lock and written the merge commit; master moved to it; then it was killed (its
    // heartbeat is past the lease) before the merged state was written
    await db.query(
      `UPDATE merge_requests SET lock_state = state, state = 'locked', locked_at = $1, lock_owner = 'daemon-d', lock_heartbeat_at = $1, merge_user_id = $2 WHERE id = $3`,
      [new Date(Date.now() - LEASE_MS - 5_000).toISOString(), me, mr.id],
    );
    const url = repoUrl(a.url, project.path, { username: 'root', password: PASSWORD });
    await gitOk(dir, ['fetch', '-q', url, 'master']);
    await gitOk(dir, ['checkout', '-q', '-B', 'local-master', 'FETCH_HEAD']);
    await gitOk(dir, ['merge', '-q', '--no-ff', '-m', "Merge branch 'half-done' into 'master'", 'half-done']);
    const merge = await gitOk(dir, ['rev-parse', 'HEAD']);
    await gitOk(dir, ['push', '-q', url, 'HEAD:master']);
    await db.query('UPDATE merge_requests SET merge_commit_sha = $1 WHERE id = $2', [merge, mr.id]);
    expect((await api(b.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}`, root)).body.state).toBe('locked');

    const args = ['--port', '0', '--data-dir', pair!.dataDir, '--root-password', PASSWORD, '--database-url', pair!.databaseUrl, '--ssh-port', 'off'];
    const c = await startGantryd(args, cleanEnv(), 60_000);
    try {
      const done = await eventually('the sweep to finish the merge', async () => {
        const m = await api(b.url, 'GET', `/projects/${project.id}/merge_requests/${mr.id}`, root);
        return m.body.state === 'locked' ? null : m.body;
      }, 15_000, () => c.stderr());
      expect(done).toMatchObject({ state: 'merged', merge_commit_sha: merge });
      expect((await db.query('SELECT lock_owner, lock_heartbeat_at, merge_error FROM merge_requests WHERE id = $1', [mr.id])).rows[0])
        .toEqual({ lock_owner: null, lock_heartbeat_at: null, merge_error: null });
      // finished as the merge would have: its issue closed, its merge commit on master with the source head as parent
      expect((await api(a.url, 'GET', `/projects/${project.id}/issues/${issue.body.id}`, root)).body.state).toBe('closed');
      expect((await api(a.url, 'GET', `/projects/${project.id}/repository/commits/${merge}`, root)).body.parent_ids[1]).toBe(sha);
    } finally {
      expect((await c.stop('SIGTERM')).code).toBe(0);
    }
  }, 90_000);
});
