/**
 * PUT .../merge: real two-parent merge commits, every error code, protected target branches, concurrent merges and a
 * target moving mid-merge, fork merge requests, issues closed by "Closes #n", source branch removal, the merge hook,
 * events and the post-push work, and the authorization matrix.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { insertIssue, insertMergeRequestBetween, sqlRows } from '../helpers/collaboration.js';
import { ACTORS, actorUser, commitTo, repositoryOf, type Actor } from '../helpers/repository.js';
import { protectBranch } from '../../daemon/services/repository/protected-branches.js';
import {
  acceptMergeRequest, MERGE_LOCK_OWNER, mergeLockTimes, mergeMergeRequest, mergeTestHooks, repairLockedMergeRequests,
} from '../../daemon/services/merge-requests/merge.js';
import { findMergeRequest } from '../../daemon/services/merge-requests/find.js';
import { refreshMergeRequest } from '../../daemon/services/merge-requests/refresh.js';
import { lookupProjectAsync } from '../../daemon/services/projects/projects.js';
import { openDataLayer } from '../../daemon/db/layer/open.js';
import { toUser } from '../../daemon/db/rows.js';
import { ApiError } from '../../daemon/errors.js';
import { DaemonState, type AppContext } from '../../daemon/context.js';
import { createMergeCommit } from '../../daemon/git/merge.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let cast: Cast;
let project: { id: number; path_with_namespace: string };
let n = 0;

const rows = (sql: string, ...args: unknown[]) => sqlRows(s.ctx, sql, args);
const row = async (sql: string, ...args: unknown[]) => (await sqlRows(s.ctx, sql, args))[0]!;
/** A statement through the data layer (either engine). */
const exec = (sql: string, ...args: unknown[]) => s.ctx.data.run(sql, args);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'mm');
  project = await makeProject(s, cast.owner, 'merging');
  await addCastMembers(s.ctx, cast, project.id);
  await commitTo(s.ctx, project.id, 'master', { 'README.md': 'hello\n', 'shared.txt': 'line 1\nline 2\nline 3\n' });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});
afterEach(() => {
  mergeTestHooks.beforePublish = null;
});

interface Mr {
  id: number;
  iid: number;
  branch: string;
  head: string;
}

/** A branch off master with one new file (or `files`), and an open merge request of it into `target`. */
async function newMr(projectId = project.id, o: { files?: Record<string, string>; title?: string; description?: string; author?: TestUser; target?: string; force?: boolean } = {}): Promise<Mr> {
  const branch = `feature-${++n}`;
  const head = await commitTo(s.ctx, projectId, branch, o.files ?? { [`${branch}.txt`]: `${branch}\n` }, { from: o.target ?? 'master', message: `add ${branch}` });
  const id = await insertMergeRequestBetween(s.ctx, {
    targetProjectId: projectId, sourceBranch: branch, targetBranch: o.target ?? 'master', title: o.title ?? `Add ${branch}`,
    description: o.description ?? null, authorId: (o.author ?? cast.developer).id, forceRemoveSourceBranch: o.force,
  });
  return { id, iid: (await row('SELECT iid FROM merge_requests WHERE id = ?', id)).iid, branch, head };
}

const merge = (mr: Pick<Mr, 'id'>, as: TestUser | null, body?: Record<string, unknown>, projectId = project.id) =>
  s.api('PUT', `/projects/${projectId}/merge_requests/${mr.id}/merge`, as, body);

/** Move master forward with an unrelated file, so merges are real merges of diverged histories. */
const advanceMaster = (projectId = project.id) => commitTo(s.ctx, projectId, 'master', { [`master-${++n}.txt`]: 'x\n' });

describe('PUT /projects/:id/merge_requests/:merge_request_id/merge', () => {
  it('writes a two-parent merge commit on the target branch and answers the merged merge request', async () => {
    const mr = await newMr(project.id, { description: 'Some details' });
    const before = await advanceMaster();
    // its diff version computed on the heads the merge is made on (the push data of the merge comes from it)
    await refreshMergeRequest(s.ctx, (await findMergeRequest(s.ctx.data, mr.id))!);
    const res = await merge(mr, cast.master);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: mr.id, iid: mr.iid, state: 'merged', merge_when_build_succeeds: false, source_branch: mr.branch, target_branch: 'master' });
    const repo = await repositoryOf(s.ctx, project.id);
    const head = (await repo.resolveBranch('master'))!;
    expect(res.body.merge_commit_sha).toBe(head);
    const commit = (await repo.readCommit(head))!;
    expect(commit.parents).toEqual([before, mr.head]);
    expect(commit.message).toBe(`Merge branch '${mr.branch}' into 'master'\n\nAdd ${mr.branch}\n\nSome details\n\nSee merge request !${mr.iid}\n`);
    expect(commit.author).toMatchObject({ name: cast.master.username, email: `${cast.master.username}@example.com` });
    expect(await repo.readFileAt(head, `${mr.branch}.txt`)).not.toBeNull();
    // `git log --merges` as a stock client sees it
    const merges = (await repo.git(['log', '--merges', '--format=%H', 'master'])).stdout.toString().trim().split('\n');
    expect(merges[0]).toBe(head);

    const stored = await row('SELECT * FROM merge_requests WHERE id = ?', mr.id);
    expect(stored).toMatchObject({ state: 'merged', merge_commit_sha: head, merge_user_id: cast.master.id, lock_state: null, locked_at: null });
    expect(stored.merged_at).toMatch(/^\d{4}-/);
    expect((await rows(`SELECT note FROM notes WHERE noteable_type = 'MergeRequest' AND noteable_id = ? AND system = TRUE`, mr.id)).map((r) => r.note)).toEqual(['Status changed to merged']);
    expect(await rows(`SELECT action, author_id FROM events WHERE target_type = 'MergeRequest' AND target_id = ?`, mr.id)).toEqual([{ action: 'merged', author_id: cast.master.id }]);
    // the post-push work of the target branch: a push event with the merge
    const push = (await rows(`SELECT data FROM events WHERE project_id = ? AND action = 'pushed' ORDER BY id DESC LIMIT 1`, project.id))[0]!;
    expect(JSON.parse(push.data)).toMatchObject({ ref: 'refs/heads/master', before, after: head, user_id: cast.master.id });
    // its commits come from the merge request's diff version (no walk): the same as git's walk of what the merge brought
    const walk = async (...args: string[]) => (await repo.git(['rev-list', ...args, head, '--not', before])).stdout.toString().trim();
    const data = JSON.parse(push.data) as { commits: { id: string; added: string[] }[]; total_commits_count: number };
    expect(data.commits.map((c) => c.id)).toEqual((await walk('--max-count=20')).split('\n').reverse());
    expect(data.total_commits_count).toBe(Number(await walk('--count')));
    expect(data.commits.find((c) => c.id !== head)?.added).toEqual([`${mr.branch}.txt`]);
    // the merge commit lists what it changed against its first parent (read while git merged: the merged tree against master)
    expect(data.commits.find((c) => c.id === head)).toMatchObject({ added: [`${mr.branch}.txt`], modified: [], removed: [] });
  });

  it('uses merge_commit_message and keeps the merge request presented with the spec fields', async () => {
    const mr = await newMr();
    const res = await merge(mr, cast.owner, { merge_commit_message: 'Custom merge message' });
    expect(res.status).toBe(200);
    const repo = await repositoryOf(s.ctx, project.id);
    expect((await repo.readCommit(res.body.merge_commit_sha))!.message).toBe('Custom merge message\n');
    for (const key of ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'target_branch', 'source_branch', 'upvotes', 'downvotes',
      'author', 'assignee', 'source_project_id', 'target_project_id', 'labels', 'work_in_progress', 'milestone', 'merge_when_build_succeeds', 'merge_status',
      'subscribed', 'user_notes_count', 'should_remove_source_branch', 'force_remove_source_branch']) expect(res.body).toHaveProperty(key);
  });

  it('answers 400 to a merge_commit_message with a NUL byte, changes nothing, and merges afterwards (was 500; found by the fuzzer)', async () => {
    const mr = await newMr();
    const repo = await repositoryOf(s.ctx, project.id);
    const before = await repo.resolveBranch('master');
    const res = await merge(mr, cast.owner, { merge_commit_message: 'bad\u0000message' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: '400 (Bad request) a commit or tag message may not contain a NUL byte' });
    expect(await repo.resolveBranch('master')).toBe(before);
    const again = await merge(mr, cast.owner, { merge_commit_message: 'good message' });
    expect(again.status).toBe(200);
    expect(again.body.state).toBe('merged');
  });

  it('accepts sha equal to the source head, and answers 409 with the head when it differs (nothing written)', async () => {
    const mr = await newMr();
    const master = await (await repositoryOf(s.ctx, project.id)).resolveBranch('master');
    const bad = await merge(mr, cast.master, { sha: 'a'.repeat(40) });
    expect(bad.status).toBe(409);
    expect(bad.body).toEqual({ message: `SHA does not match HEAD of source branch: ${mr.head}` });
    expect(await (await repositoryOf(s.ctx, project.id)).resolveBranch('master')).toBe(master);
    expect((await row('SELECT state FROM merge_requests WHERE id = ?', mr.id)).state).toBe('opened');
    const ok = await merge(mr, cast.master, { sha: mr.head });
    expect(ok.status).toBe(200);
    expect(ok.body.state).toBe('merged');
  });

  it('answers 406 for a merged or closed merge request', async () => {
    const mr = await newMr();
    expect((await merge(mr, cast.master)).status).toBe(200);
    const again = await merge(mr, cast.master);
    expect(again.status).toBe(406);
    expect(again.body).toEqual({ message: '406 Method Not Allowed' });
    const closed = await newMr();
    await exec(`UPDATE merge_requests SET state = 'closed' WHERE id = ?`, closed.id);
    expect((await merge(closed, cast.master)).status).toBe(406);
  });

  it('merges a reopened merge request', async () => {
    const mr = await newMr();
    await exec(`UPDATE merge_requests SET state = 'reopened' WHERE id = ?`, mr.id);
    expect((await merge(mr, cast.master)).body.state).toBe('merged');
  });

  it('answers 405 Branch cannot be merged on conflicts, and changes nothing', async () => {
    const mr = await newMr(project.id, { files: { 'shared.txt': 'line 1\nfeature\nline 3\n' } });
    await commitTo(s.ctx, project.id, 'master', { 'shared.txt': 'line 1\nmaster\nline 3\n' });
    const master = await (await repositoryOf(s.ctx, project.id)).resolveBranch('master');
    const res = await merge(mr, cast.master);
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ message: 'Branch cannot be merged' });
    expect(await (await repositoryOf(s.ctx, project.id)).resolveBranch('master')).toBe(master);
    expect(await row('SELECT state, merge_commit_sha FROM merge_requests WHERE id = ?', mr.id)).toEqual({ state: 'opened', merge_commit_sha: null });
  });

  it('answers 405 between unrelated histories, for a work in progress and when a branch is gone', async () => {
    const repo = await repositoryOf(s.ctx, project.id);
    await commitTo(s.ctx, project.id, 'orphan', { 'other.txt': 'unrelated\n' });
    const orphan = await insertMergeRequestBetween(s.ctx, { targetProjectId: project.id, sourceBranch: 'orphan', authorId: cast.developer.id });
    expect(await merge({ id: orphan }, cast.master)).toMatchObject({ status: 405, body: { message: 'Branch cannot be merged' } });

    const wip = await newMr(project.id, { title: 'WIP: not yet' });
    expect(await merge(wip, cast.master)).toMatchObject({ status: 405, body: { message: '405 Method Not Allowed' } });

    const gone = await newMr();
    await repo.deleteBranch(gone.branch);
    expect(await merge(gone, cast.master)).toMatchObject({ status: 405, body: { message: '405 Method Not Allowed' } });
  });

  it('answers 404 for an absent merge request, another project\'s, a text id, and on a project the caller cannot see', async () => {
    expect((await merge({ id: 999999 }, cast.master)).status).toBe(404);
    const other = await makeProject(s, cast.owner, 'other-merging');
    await commitTo(s.ctx, other.id, 'master', { 'a.txt': 'a\n' });
    const foreign = await newMr(other.id);
    expect((await merge(foreign, cast.master)).status).toBe(404);
    expect((await s.api('PUT', `/projects/${project.id}/merge_requests/abc/merge`, cast.master)).status).toBe(404);
    expect((await merge(foreign, cast.nonMember, undefined, other.id)).status).toBe(404);
  });

  it('answers 401 to callers who may not merge (anonymous, guests, reporters) and changes nothing', async () => {
    const mr = await newMr();
    for (const who of [null, cast.guest, cast.reporter]) {
      const res = await merge(mr, who);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    }
    expect((await row('SELECT state FROM merge_requests WHERE id = ?', mr.id)).state).toBe('opened');
  });

  it('serves the deprecated singular route as an alias', async () => {
    const mr = await newMr();
    const res = await s.api('PUT', `/projects/${project.id}/merge_request/${mr.id}/merge`, cast.master);
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('merged');
  });
});

describe('protected target branches', () => {
  it('refuses a developer where only masters may push, allows a master, and a developer with developers_can_merge', async () => {
    const p = await makeProject(s, cast.owner, 'protected-merge');
    await addCastMembers(s.ctx, cast, p.id);
    await commitTo(s.ctx, p.id, 'master', { 'a.txt': 'a\n' });
    await commitTo(s.ctx, p.id, 'stable', { 'b.txt': 'b\n' }, { from: 'master' });
    await protectBranch(s.ctx, p.id, 'stable');
    const mr = await newMr(p.id, { target: 'stable' });
    expect((await merge(mr, cast.developer, undefined, p.id)).status).toBe(401);
    expect((await merge(mr, cast.master, undefined, p.id)).status).toBe(200);

    await protectBranch(s.ctx, p.id, 'stable', { developersCanMerge: true });
    const mr2 = await newMr(p.id, { target: 'stable' });
    expect((await merge(mr2, cast.developer, undefined, p.id)).status).toBe(200);
  });

  it('honours default_branch_protection: a developer merges into the default branch only when developers may push', async () => {
    const p = await makeProject(s, cast.owner, 'default-protected');
    await addCastMembers(s.ctx, cast, p.id);
    await commitTo(s.ctx, p.id, 'master', { 'a.txt': 'a\n' });
    const put = async (v: number) => expect((await s.api('PUT', '/application/settings', s.root, { default_branch_protection: v })).status).toBe(200);
    try {
      await put(2);
      const mr = await newMr(p.id);
      expect((await merge(mr, cast.developer, undefined, p.id)).status).toBe(401);
      await put(1);
      expect((await merge(mr, cast.developer, undefined, p.id)).status).toBe(200);
    } finally {
      await put(2);
    }
  });
});

describe('authorization matrix', () => {
  const expected = (a: Actor, vis: number): number => {
    if (a === 'anonymous') return 401;
    const member = !['nonMember', 'external'].includes(a);
    const sees = member || (a === 'external' ? vis === 20 : vis >= 10);
    if (!sees) return 404;
    // master is the default branch, protected by default_branch_protection 2: developers may not push there
    return ['master', 'owner', 'admin'].includes(a) ? 200 : 401;
  };
  for (const vis of [0, 10, 20]) {
    it(`visibility ${vis}`, async () => {
      const p = await makeProject(s, cast.owner, `matrix-${vis}`, { visibility: vis });
      await addCastMembers(s.ctx, cast, p.id);
      await commitTo(s.ctx, p.id, 'master', { 'a.txt': 'a\n' });
      for (const a of ACTORS) {
        const mr = await newMr(p.id);
        const res = await merge(mr, actorUser(cast, a), undefined, p.id);
        expect({ a, status: res.status }).toEqual({ a, status: expected(a, vis) });
        expect((await row('SELECT state FROM merge_requests WHERE id = ?', mr.id)).state).toBe(res.status === 200 ? 'merged' : 'opened');
      }
    });
  }
});

describe('concurrency', () => {
  it('merges two merge requests into one target at the same time without losing either', async () => {
    const a = await newMr();
    const b = await newMr();
    const [ra, rb] = await Promise.all([merge(a, cast.master), merge(b, cast.owner)]);
    const ok = [ra, rb].filter((r) => r.status === 200);
    for (const r of [ra, rb]) expect([200, 409]).toContain(r.status);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    const repo = await repositoryOf(s.ctx, project.id);
    const head = (await repo.resolveBranch('master'))!;
    for (const [mr, res] of [[a, ra], [b, rb]] as const) {
      if (res.status === 200) expect(await repo.isAncestor(mr.head, head)).toBe(true);
      else expect((await row('SELECT state FROM merge_requests WHERE id = ?', mr.id)).state).toBe('opened');
    }
    if (ok.length === 2) {
      // linear: one merge commit is the first parent of the other
      const [c1, c2] = [(await repo.readCommit(ra.body.merge_commit_sha))!, (await repo.readCommit(rb.body.merge_commit_sha))!];
      expect(c1.parents[0] === c2.sha || c2.parents[0] === c1.sha).toBe(true);
    }
  });

  it('merges one merge request once when two callers merge it at the same time', async () => {
    const mr = await newMr();
    const results = await Promise.all([merge(mr, cast.master), merge(mr, cast.owner)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 406]);
    const repo = await repositoryOf(s.ctx, project.id);
    const merges = (await repo.git(['log', '--merges', '--format=%P', 'master'])).stdout.toString().split('\n').filter((l) => l.endsWith(mr.head));
    expect(merges).toHaveLength(1);
  });

  it('recomputes the merge when the target moves between the check and the ref update', async () => {
    const mr = await newMr();
    let moved = '';
    mergeTestHooks.beforePublish = async (attempt) => {
      if (attempt === 0) moved = await advanceMaster();
    };
    const res = await merge(mr, cast.master);
    expect(res.status).toBe(200);
    const commit = (await (await repositoryOf(s.ctx, project.id)).readCommit(res.body.merge_commit_sha))!;
    expect(commit.parents).toEqual([moved, mr.head]);
  });

  it('refuses cleanly when the target keeps moving: 409, the merge request back to opened, no merge on the branch', async () => {
    const mr = await newMr();
    await exec(`UPDATE merge_requests SET state = 'reopened' WHERE id = ?`, mr.id);
    let last = '';
    mergeTestHooks.beforePublish = async () => {
      last = await advanceMaster();
    };
    const res = await merge(mr, cast.master);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/Target branch changed/);
    const repo = await repositoryOf(s.ctx, project.id);
    expect(await repo.resolveBranch('master')).toBe(last);
    expect(await repo.isAncestor(mr.head, last)).toBe(false);
    expect(await row('SELECT state, lock_state, merge_commit_sha FROM merge_requests WHERE id = ?', mr.id)).toEqual({ state: 'reopened', lock_state: null, merge_commit_sha: null });
  });
});

describe('after the merge', () => {
  it('closes the issues named by "Closes #n" with a system note, when merging into the default branch', async () => {
    const one = await insertIssue(s.ctx, project.id, { title: 'bug one' });
    const two = await insertIssue(s.ctx, project.id, { title: 'bug two' });
    const untouched = await insertIssue(s.ctx, project.id, { title: 'bug three' });
    const mr = await newMr(project.id, { description: `Closes #${one.iid} and fixes #${two.iid}` });
    expect((await merge(mr, cast.master)).status).toBe(200);
    for (const issue of [one, two]) {
      expect((await row('SELECT state FROM issues WHERE id = ?', issue.id)).state).toBe('closed');
      expect((await rows(`SELECT note FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? AND system = TRUE`, issue.id)).map((r) => r.note))
        .toContain(`Status changed to closed by !${mr.iid}`);
    }
    expect((await row('SELECT state FROM issues WHERE id = ?', untouched.id)).state).toBe('opened');
  });

  it('closes the issues its commit messages name, whatever the case of the closing word, and none when no message names one', async () => {
    const one = await insertIssue(s.ctx, project.id, { title: 'named upper case' });
    const two = await insertIssue(s.ctx, project.id, { title: 'named in a later commit' });
    const branch = `closing-${++n}`;
    await commitTo(s.ctx, project.id, branch, { [`${branch}-1.txt`]: '1\n' }, { from: 'master', message: `Work\n\nFIXES #${one.iid}` });
    await commitTo(s.ctx, project.id, branch, { [`${branch}-2.txt`]: '2\n' }, { message: `More work, Resolving: #${two.iid}` });
    const id = await insertMergeRequestBetween(s.ctx, { targetProjectId: project.id, sourceBranch: branch, authorId: cast.developer.id, title: 'No closing words here' });
    // its diff version (the stored commits the closing words are read from)
    await refreshMergeRequest(s.ctx, (await findMergeRequest(s.ctx.data, id))!);
    expect((await merge({ id }, cast.master)).status).toBe(200);
    const iid = (await row('SELECT iid FROM merge_requests WHERE id = ?', id)).iid;
    for (const issue of [one, two]) {
      expect((await row('SELECT state FROM issues WHERE id = ?', issue.id)).state).toBe('closed');
      expect((await rows(`SELECT note FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ? AND system = TRUE`, issue.id)).map((r) => r.note))
        .toEqual([`Status changed to closed by !${iid}`]);
    }
    // commits, title and description without a closing word: the open issue stays open
    const open = await insertIssue(s.ctx, project.id, { title: 'not named' });
    const plain = await newMr(project.id, { description: `Mentions #${open.iid} without closing it` });
    await refreshMergeRequest(s.ctx, (await findMergeRequest(s.ctx.data, plain.id))!);
    expect((await merge(plain, cast.master)).status).toBe(200);
    expect((await row('SELECT state FROM issues WHERE id = ?', open.id)).state).toBe('opened');
  });

  it('writes the push of the target branch with the merge, once: one push event and one push hook delivery for the merge commit', async () => {
    const hook = await s.api('POST', `/projects/${project.id}/hooks`, cast.master, { url: 'http://hooks.example.test/once', merge_requests_events: true, push_events: true });
    expect(hook.status).toBe(201);
    const mr = await newMr();
    const res = await merge(mr, cast.master);
    expect(res.status).toBe(200);
    const sha = res.body.merge_commit_sha as string;
    const pushes = (await rows(`SELECT data FROM events WHERE project_id = ? AND action = 'pushed'`, project.id)).map((r) => JSON.parse(r.data));
    expect(pushes.filter((d) => d.after === sha)).toHaveLength(1);
    const deliveries = await rows(`SELECT event, payload FROM hook_deliveries WHERE hook_id = ? ORDER BY id`, hook.body.id);
    expect(deliveries.filter((d) => d.event === 'push' && JSON.parse(d.payload).after === sha)).toHaveLength(1);
    expect(deliveries.filter((d) => d.event === 'merge_request')).toHaveLength(1);
    expect((await rows(`SELECT action FROM events WHERE target_type = 'MergeRequest' AND target_id = ?`, mr.id)).map((r) => r.action)).toEqual(['merged']);
  });

  it('a merge refused before it locks (the automatic merge meeting a conflict) records why and leaves the merge request open', async () => {
    const mr = await newMr(project.id, { files: { 'shared.txt': 'line 1\nfrom the branch\nline 3\n' } });
    await commitTo(s.ctx, project.id, 'master', { 'shared.txt': 'line 1\nfrom master\nline 3\n' });
    const target = (await lookupProjectAsync(s.ctx, project.id))!;
    const master = toUser((await s.ctx.data.get<Record<string, unknown>>('SELECT * FROM users WHERE id = ?', [cast.master.id]))!);
    const refused = await mergeMergeRequest(s.ctx, master, target, (await findMergeRequest(s.ctx.data, mr.id))!, {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).statusCode).toBe(405);
    expect(await row('SELECT state, lock_state, lock_owner, merge_commit_sha, merge_error FROM merge_requests WHERE id = ?', mr.id))
      .toEqual({ state: 'opened', lock_state: null, lock_owner: null, merge_commit_sha: null, merge_error: 'Branch cannot be merged' });
    expect(await rows(`SELECT action FROM events WHERE target_type = 'MergeRequest' AND target_id = ?`, mr.id)).toEqual([]);
  });

  it('removes the source branch when asked, but never a protected one', async () => {
    const repo = await repositoryOf(s.ctx, project.id);
    const mr = await newMr();
    const res = await merge(mr, cast.master, { should_remove_source_branch: true });
    expect(res.status).toBe(200);
    expect(res.body.should_remove_source_branch).toBe(true);
    expect(await repo.resolveBranch(mr.branch)).toBeNull();

    const kept = await newMr();
    await protectBranch(s.ctx, project.id, kept.branch);
    expect((await merge(kept, cast.master, { should_remove_source_branch: true })).status).toBe(200);
    expect(await repo.resolveBranch(kept.branch)).toBe(kept.head);

    const plain = await newMr();
    expect((await merge(plain, cast.master)).status).toBe(200);
    expect(await repo.resolveBranch(plain.branch)).toBe(plain.head);

    const forced = await newMr(project.id, { force: true });
    expect((await merge(forced, cast.master)).status).toBe(200);
    expect(await repo.resolveBranch(forced.branch)).toBeNull();
  });

  it('queues the merge request hook (action merge) and marks the merger\'s todos done', async () => {
    const hook = await s.api('POST', `/projects/${project.id}/hooks`, cast.master, { url: 'http://hooks.example.test/mr', merge_requests_events: true, push_events: true });
    expect(hook.status).toBe(201);
    const mr = await newMr();
    await exec(`INSERT INTO todos (user_id, project_id, author_id, target_type, target_id, action, state, created_at, updated_at)
      VALUES (?, ?, ?, 'MergeRequest', ?, 'assigned', 'pending', ?, ?)`, cast.master.id, project.id, cast.developer.id, mr.id, new Date().toISOString(), new Date().toISOString());
    expect((await merge(mr, cast.master)).status).toBe(200);
    const deliveries = await rows(`SELECT event, payload FROM hook_deliveries WHERE hook_id = ? ORDER BY id`, hook.body.id);
    const mrHook = deliveries.filter((d) => d.event === 'merge_request').map((d) => JSON.parse(d.payload));
    expect(mrHook).toHaveLength(1);
    expect(mrHook[0]).toMatchObject({ object_kind: 'merge_request', user: { username: cast.master.username }, object_attributes: { action: 'merge', state: 'merged', iid: mr.iid } });
    expect(deliveries.some((d) => d.event === 'push')).toBe(true);
    expect((await row(`SELECT state FROM todos WHERE target_type = 'MergeRequest' AND target_id = ? AND user_id = ?`, mr.id, cast.master.id)).state).toBe('done');
  });
});

describe('fork merge requests', () => {
  it('fetches the fork\'s commits into the target and merges them there', async () => {
    const forked = await s.api('POST', `/projects/fork/${project.id}`, cast.developer);
    expect(forked.status).toBe(201);
    const fork = forked.body as { id: number };
    await advanceMaster();
    const head = await commitTo(s.ctx, fork.id, 'from-fork', { 'fork.txt': 'from the fork\n' }, { from: 'master' });
    const id = await insertMergeRequestBetween(s.ctx, { targetProjectId: project.id, sourceProjectId: fork.id, sourceBranch: 'from-fork', authorId: cast.developer.id });
    // the merger may not push to the fork: asked to remove the source branch, it stays
    const res = await merge({ id }, cast.master, { should_remove_source_branch: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: 'merged', source_project_id: fork.id, target_project_id: project.id });
    const repo = await repositoryOf(s.ctx, project.id);
    const commit = (await repo.readCommit((await repo.resolveBranch('master'))!))!;
    expect(commit.parents[1]).toBe(head);
    expect(await repo.readFileAt(commit.sha, 'fork.txt')).not.toBeNull();
    expect(await (await repositoryOf(s.ctx, fork.id)).resolveBranch('from-fork')).toBe(head);

    // forced by the author, who owns the fork: removed there as the author
    const forcedHead = await commitTo(s.ctx, fork.id, 'forced', { 'forced.txt': 'forced\n' }, { from: 'master' });
    const forced = await insertMergeRequestBetween(s.ctx, { targetProjectId: project.id, sourceProjectId: fork.id, sourceBranch: 'forced', authorId: cast.developer.id, forceRemoveSourceBranch: true });
    expect((await merge({ id: forced }, cast.master)).status).toBe(200);
    expect(await repo.isAncestor(forcedHead, (await repo.resolveBranch('master'))!)).toBe(true);
    expect(await (await repositoryOf(s.ctx, fork.id)).resolveBranch('forced')).toBeNull();
  });
});

describe('restart repair', () => {
  it('finishes a merge whose commit reached the target branch and undoes one that did not', async () => {
    const repo = await repositoryOf(s.ctx, project.id);
    const done = await newMr();
    const before = (await repo.resolveBranch('master'))!;
    const { sha } = await createMergeCommit(repo.path, { targetBranch: 'master', targetSha: before, sourceSha: done.head, message: 'interrupted merge', author: { name: 'x', email: 'x@example.com' } });
    // locks taken before migration 0034: no owner and no heartbeat, so their owner counts as dead
    const lockRow = (user: number, commit: string | null, id: number) => exec(
      `UPDATE merge_requests SET lock_state = state, state = 'locked', locked_at = ?, merge_user_id = ?, merge_commit_sha = ? WHERE id = ?`,
      new Date().toISOString(), user, commit, id);
    await lockRow(cast.master.id, sha, done.id);
    const undone = await newMr();
    await lockRow(cast.master.id, null, undone.id);
    await exec(`UPDATE merge_requests SET lock_state = 'reopened' WHERE id = ?`, undone.id);

    expect(await repairLockedMergeRequests(s.ctx)).toEqual({ finished: 1, undone: 1 });
    expect(await row('SELECT state, merge_commit_sha, lock_state FROM merge_requests WHERE id = ?', done.id)).toEqual({ state: 'merged', merge_commit_sha: sha, lock_state: null });
    expect((await rows(`SELECT action FROM events WHERE target_type = 'MergeRequest' AND target_id = ?`, done.id)).map((r) => r.action)).toEqual(['merged']);
    // the target branch's push is written with the repaired merge, once
    const pushed = (await rows(`SELECT data FROM events WHERE project_id = ? AND action = 'pushed'`, project.id)).map((r) => JSON.parse(r.data));
    expect(pushed.filter((d) => d.after === sha)).toEqual([expect.objectContaining({ ref: 'refs/heads/master', before, after: sha, user_id: cast.master.id })]);
    expect(await repairLockedMergeRequests(s.ctx)).toEqual({ finished: 0, undone: 0 });
    expect(await row('SELECT state, merge_error FROM merge_requests WHERE id = ?', undone.id)).toMatchObject({ state: 'reopened', merge_error: expect.stringMatching(/interrupted/) });
  });
});

describe('merge locks across daemons', () => {
  /** Lock a merge request as the daemon `owner` would, its last heartbeat `ageMs` ago. */
  const lockAs = (id: number, owner: string, ageMs: number) => exec(
    `UPDATE merge_requests SET lock_state = state, state = 'locked', locked_at = ?, lock_owner = ?, lock_heartbeat_at = ?, merge_user_id = ? WHERE id = ?`,
    new Date().toISOString(), owner, new Date(Date.now() - ageMs).toISOString(), cast.master.id, id);

  it('a merge lock names this daemon and its heartbeat while the merge runs, and both are cleared after', async () => {
    const mr = await newMr();
    let seen: Record<string, unknown> | undefined;
    mergeTestHooks.beforePublish = async () => {
      seen = await row('SELECT state, lock_owner, lock_heartbeat_at FROM merge_requests WHERE id = ?', mr.id);
    };
    expect((await merge(mr, cast.master)).status).toBe(200);
    expect(seen).toMatchObject({ state: 'locked', lock_owner: MERGE_LOCK_OWNER });
    expect(Date.now() - Date.parse(String(seen!.lock_heartbeat_at))).toBeLessThan(mergeLockTimes.leaseMs);
    expect(await row('SELECT state, lock_owner, lock_heartbeat_at FROM merge_requests WHERE id = ?', mr.id))
      .toEqual({ state: 'merged', lock_owner: null, lock_heartbeat_at: null });
  });

  it('the repair leaves a lock with a fresh heartbeat of another daemon alone and repairs one whose owner stopped beating', async () => {
    const live = await newMr();
    const dead = await newMr();
    await lockAs(live.id, 'another-live-daemon', 1_000);
    await lockAs(dead.id, 'a-dead-daemon', mergeLockTimes.leaseMs + 5_000);
    expect(await repairLockedMergeRequests(s.ctx)).toEqual({ finished: 0, undone: 1 });
    expect(await row('SELECT state, lock_owner FROM merge_requests WHERE id = ?', live.id)).toEqual({ state: 'locked', lock_owner: 'another-live-daemon' });
    expect(await row('SELECT state, lock_owner, lock_state, merge_error FROM merge_requests WHERE id = ?', dead.id))
      .toMatchObject({ state: 'opened', lock_owner: null, lock_state: null, merge_error: expect.stringMatching(/interrupted/) });
    // a merge refused while the live daemon holds the lock: 406, as 8.x answers a locked merge request
    expect((await merge(live, cast.master)).status).toBe(406);
    // the live daemon stops beating: the next sweep takes the lock over and repairs it
    await exec(`UPDATE merge_requests SET lock_heartbeat_at = ? WHERE id = ?`, new Date(Date.now() - mergeLockTimes.leaseMs - 1_000).toISOString(), live.id);
    expect(await repairLockedMergeRequests(s.ctx)).toEqual({ finished: 0, undone: 1 });
    expect((await row('SELECT state FROM merge_requests WHERE id = ?', live.id)).state).toBe('opened');
    expect((await merge(live, cast.master)).status).toBe(200);
  });

  it('two merges of one merge request at once through two daemons\' connections: one merges, the other is refused, one merge commit', async () => {
    const other = await openDataLayer(s.ctx.config);
    const ctx2: AppContext = { ...s.ctx, data: other.data, state: new DaemonState() };
    try {
      const mr = await newMr();
      const repo = await repositoryOf(s.ctx, project.id);
      const before = (await repo.resolveBranch('master'))!;
      const target = (await lookupProjectAsync(s.ctx, project.id))!;
      const master = toUser((await s.ctx.data.get<Record<string, unknown>>('SELECT * FROM users WHERE id = ?', [cast.master.id]))!);
      const row1 = (await findMergeRequest(s.ctx.data, mr.id))!;
      const row2 = (await findMergeRequest(ctx2.data, mr.id))!;
      const results = await Promise.allSettled([
        acceptMergeRequest(s.ctx, master, target, row1, {}),
        acceptMergeRequest(ctx2, master, target, row2, {}),
      ]);
      const ok = results.filter((r) => r.status === 'fulfilled');
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(ok).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toBeInstanceOf(ApiError);
      expect([405, 406]).toContain((refused[0] as ApiError).statusCode);
      // master moved by exactly one merge commit of the merge request's head
      const head = (await repo.resolveBranch('master'))!;
      const commit = (await repo.readCommit(head))!;
      expect(commit.parents).toEqual([before, mr.head]);
      expect(await row('SELECT state, merge_commit_sha FROM merge_requests WHERE id = ?', mr.id)).toEqual({ state: 'merged', merge_commit_sha: head });
      expect((await rows(`SELECT action FROM events WHERE target_type = 'MergeRequest' AND target_id = ?`, mr.id)).map((r) => r.action)).toEqual(['merged']);
    } finally {
      await other.close();
    }
  });
});

describe('PUT /projects/:id/merge_requests/:merge_request_id with state_event=merge', () => {
  const update = (mr: Pick<Mr, 'id'>, as: TestUser | null, body: Record<string, unknown>) =>
    s.api('PUT', `/projects/${project.id}/merge_requests/${mr.id}`, as, body);

  it('merges as PUT .../merge does, with the other fields applied first (the commit message names the new title)', async () => {
    const mr = await newMr();
    const before = await advanceMaster();
    const res = await update(mr, cast.master, { state_event: 'merge', title: 'Renamed while merging' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: 'merged', title: 'Renamed while merging' });
    const repo = await repositoryOf(s.ctx, project.id);
    const commit = (await repo.readCommit(res.body.merge_commit_sha))!;
    expect(commit.parents).toEqual([before, mr.head]);
    expect(commit.message).toContain('\n\nRenamed while merging\n\n');
  });

  it('a refused merge changes nothing: 403/401 without rights, 405 on conflicts, 406 when closed, 400 for a bad field', async () => {
    const mr = await newMr();
    const title = (await row('SELECT title FROM merge_requests WHERE id = ?', mr.id)).title;
    // a reporter may not update; a developer may update but not merge into the protected default branch
    expect((await update(mr, cast.reporter, { state_event: 'merge', title: 'x' })).status).toBe(403);
    expect((await update(mr, cast.developer, { state_event: 'merge', title: 'x' })).status).toBe(401);
    const tooLong = await update(mr, cast.master, { state_event: 'merge', title: 'y'.repeat(300) });
    expect(tooLong.status).toBe(400);
    const retarget = await update(mr, cast.master, { state_event: 'merge', target_branch: mr.branch });
    expect(retarget.status).toBe(400);
    expect(await row('SELECT state, title FROM merge_requests WHERE id = ?', mr.id)).toEqual({ state: 'opened', title });

    const left = await newMr(project.id, { files: { 'shared.txt': 'left\n' } });
    await commitTo(s.ctx, project.id, 'master', { 'shared.txt': `right ${++n}\n` });
    const conflicting = await update(left, cast.master, { state_event: 'merge', title: 'Should not stick' });
    expect(conflicting.status).toBe(405);
    expect(conflicting.body).toEqual({ message: 'Branch cannot be merged' });
    expect((await row('SELECT state, title FROM merge_requests WHERE id = ?', left.id)).title).not.toBe('Should not stick');

    await exec(`UPDATE merge_requests SET state = 'closed' WHERE id = ?`, mr.id);
    expect((await update(mr, cast.master, { state_event: 'merge' })).status).toBe(406);
  });
});

describe('merge_commit_message limits', () => {
  it('a 1 MB merge commit message is refused with 400 and nothing is merged', async () => {
    const mr = await newMr();
    const master = await (await repositoryOf(s.ctx, project.id)).resolveBranch('master');
    const res = await merge(mr, cast.master, { merge_commit_message: 'm'.repeat(1_000_001) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: '400 (Bad request) "merge_commit_message" is invalid' });
    expect(await (await repositoryOf(s.ctx, project.id)).resolveBranch('master')).toBe(master);
    expect((await row('SELECT state FROM merge_requests WHERE id = ?', mr.id)).state).toBe('opened');
  });
});
