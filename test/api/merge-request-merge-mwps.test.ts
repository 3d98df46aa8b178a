/**
 * Merge when the build succeeds: set on PUT .../merge while the head pipeline runs, merged when the pipeline succeeds
 * (builds driven as a runner would), never on failure (build_failed todo for the author) or after a new push (flag
 * cleared with a note); only_allow_merge_if_build_succeeds; cancel with PUT or POST (200, 406, 405, 401).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { insertMergeRequestBetween, sqlRows } from '../helpers/collaboration.js';
import { drive, pipelinesOf, pushFiles } from '../helpers/ci.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';
import { repositoryOf } from '../helpers/repository.js';

let s: TestServer;
let cast: Cast;
let project: { id: number };
let n = 0;

const row = async (sql: string, ...args: unknown[]) => (await sqlRows(s.ctx, sql, args))[0]!;
const notes = async (mrId: number) =>
  (await sqlRows(s.ctx, `SELECT note FROM notes WHERE noteable_type = 'MergeRequest' AND noteable_id = ? AND system = TRUE ORDER BY id`, [mrId])).map((r) => r.note as string);

const CI = 'test:\n  script: make test\n';

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'mw');
  project = await makeProject(s, cast.owner, 'auto-merge');
  await addCastMembers(s.ctx, cast, project.id);
  await pushFiles(s.ctx, project.id, cast.owner.id, { '.gitlab-ci.yml': CI, 'README.md': 'hi\n' });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

interface Mr {
  id: number;
  branch: string;
  head: string;
  pipelineId: number;
}

/** A pushed feature branch (its pipeline pending) and an open merge request of it into master. */
async function newMr(projectId = project.id): Promise<Mr> {
  const branch = `feature-${++n}`;
  const head = await pushFiles(s.ctx, projectId, cast.developer.id, { [`${branch}.txt`]: 'x\n' }, { branch, from: 'master', message: `add ${branch}` });
  const id = await insertMergeRequestBetween(s.ctx, { targetProjectId: projectId, sourceBranch: branch, authorId: cast.developer.id, title: `Add ${branch}` });
  const pipeline = (await pipelinesOf(s.ctx, projectId)).filter((p) => p.ref === branch).at(-1)!;
  expect(pipeline.status).toBe('pending');
  return { id, branch, head, pipelineId: pipeline.id };
}

const merge = (mr: Pick<Mr, 'id'>, as: TestUser | null, body?: Record<string, unknown>, projectId = project.id) =>
  s.api('PUT', `/projects/${projectId}/merge_requests/${mr.id}/merge`, as, body);
const cancel = (mr: Pick<Mr, 'id'>, as: TestUser | null, method: 'PUT' | 'POST' = 'PUT', segment = 'merge_requests') =>
  s.api(method, `/projects/${project.id}/${segment}/${mr.id}/cancel_merge_when_build_succeeds`, as);

describe('merge when the build succeeds', () => {
  it('sets the flag while the head pipeline runs, then merges when the pipeline succeeds', async () => {
    const mr = await newMr();
    const res = await merge(mr, cast.master, { merge_when_build_succeeds: true, merge_commit_message: 'Auto merge', should_remove_source_branch: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: mr.id, state: 'opened', merge_when_build_succeeds: true, should_remove_source_branch: true });
    expect(await row('SELECT merge_user_id, merge_params FROM merge_requests WHERE id = ?', mr.id)).toEqual({
      merge_user_id: cast.master.id, merge_params: JSON.stringify({ commit_message: 'Auto merge', should_remove_source_branch: true }),
    });
    expect(await notes(mr.id)).toEqual([`enabled an automatic merge when the build for ${mr.head} succeeds`]);
    // setting it again updates the params (all of them, as 8.x's merge!) without a second note
    expect((await merge(mr, cast.master, { merge_when_build_succeeds: true, merge_commit_message: 'Auto merge 2', should_remove_source_branch: true })).status).toBe(200);
    expect(await notes(mr.id)).toHaveLength(1);

    await drive(s.ctx, mr.pipelineId, 'test', 'run', 'success');
    const merged = await row('SELECT state, merge_commit_sha, merge_user_id, merge_when_build_succeeds FROM merge_requests WHERE id = ?', mr.id);
    expect(merged).toMatchObject({ state: 'merged', merge_user_id: cast.master.id, merge_when_build_succeeds: 0 });
    const repo = await repositoryOf(s.ctx, project.id);
    const commit = (await repo.readCommit(merged.merge_commit_sha))!;
    expect(commit.parents[1]).toBe(mr.head);
    expect(commit.message).toBe('Auto merge 2\n');
    expect(await repo.resolveBranch('master')).toBe(commit.sha);
    expect(await repo.resolveBranch(mr.branch)).toBeNull();
    // the merge ran the post-push work: a pipeline on master at the merge commit
    expect((await pipelinesOf(s.ctx, project.id)).some((p) => p.ref === 'master' && p.sha === commit.sha)).toBe(true);
  });

  it('does not merge when the pipeline fails, and gives the author a build_failed todo', async () => {
    const mr = await newMr();
    expect((await merge(mr, cast.master, { merge_when_build_succeeds: true })).status).toBe(200);
    await drive(s.ctx, mr.pipelineId, 'test', 'run', 'drop');
    expect(await row('SELECT state, merge_when_build_succeeds FROM merge_requests WHERE id = ?', mr.id)).toEqual({ state: 'opened', merge_when_build_succeeds: 1 });
    const todos = await s.api('GET', '/todos?action=build_failed', cast.developer);
    expect(todos.status).toBe(200);
    expect(todos.body.filter((t: { target_type: string; target: { id: number } }) => t.target_type === 'MergeRequest' && t.target.id === mr.id)).toHaveLength(1);
    expect(todos.body[0]).toMatchObject({ action_name: 'build_failed', state: 'pending' });
  });

  it('clears the flag with a system note when a new commit arrives on the source branch, and then never merges', async () => {
    const mr = await newMr();
    expect((await merge(mr, cast.master, { merge_when_build_succeeds: true })).status).toBe(200);
    await pushFiles(s.ctx, project.id, cast.developer.id, { 'more.txt': 'more\n' }, { branch: mr.branch });
    expect(await row('SELECT merge_when_build_succeeds, merge_user_id, merge_params FROM merge_requests WHERE id = ?', mr.id))
      .toEqual({ merge_when_build_succeeds: 0, merge_user_id: null, merge_params: null });
    expect(await notes(mr.id)).toContain('aborted the automatic merge because source branch was updated');
    await drive(s.ctx, mr.pipelineId, 'test', 'run', 'success');
    expect((await row('SELECT state FROM merge_requests WHERE id = ?', mr.id)).state).toBe('opened');
  });

  it('merges at once when the head pipeline is finished, and answers 405 when only_allow_merge_if_build_succeeds waits for it', async () => {
    const p = await makeProject(s, cast.owner, 'strict', { extra: { only_allow_merge_if_build_succeeds: true } });
    await addCastMembers(s.ctx, cast, p.id);
    await pushFiles(s.ctx, p.id, cast.owner.id, { '.gitlab-ci.yml': CI });
    const running = await newMr(p.id);
    expect(await merge(running, cast.master, undefined, p.id)).toMatchObject({ status: 405, body: { message: '405 Method Not Allowed' } });
    await drive(s.ctx, running.pipelineId, 'test', 'run', 'drop');
    expect((await merge(running, cast.master, undefined, p.id)).status).toBe(405);
    // a finished head pipeline: merge_when_build_succeeds merges now (8.x); success lets it through
    const green = await newMr(p.id);
    await drive(s.ctx, green.pipelineId, 'test', 'run', 'success');
    const res = await merge(green, cast.master, { merge_when_build_succeeds: true }, p.id);
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('merged');
  });

  it('answers 401 to who may not merge', async () => {
    const mr = await newMr();
    expect((await merge(mr, cast.reporter, { merge_when_build_succeeds: true })).status).toBe(401);
    expect((await row('SELECT merge_when_build_succeeds FROM merge_requests WHERE id = ?', mr.id)).merge_when_build_succeeds).toBe(0);
  });
});

describe('cancel_merge_when_build_succeeds', () => {
  it('cancels with PUT (200, a note), then answers 406 when not set', async () => {
    const mr = await newMr();
    expect((await merge(mr, cast.master, { merge_when_build_succeeds: true })).status).toBe(200);
    const res = await cancel(mr, cast.master);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: mr.id, state: 'opened', merge_when_build_succeeds: false });
    expect((await notes(mr.id)).at(-1)).toBe('canceled the automatic merge');
    const again = await cancel(mr, cast.master);
    expect(again.status).toBe(406);
    expect(again.body).toEqual({ message: "Can't cancel the automatic merge" });
    await drive(s.ctx, mr.pipelineId, 'test', 'run', 'success');
    expect((await row('SELECT state FROM merge_requests WHERE id = ?', mr.id)).state).toBe('opened');
  });

  it('accepts POST and the singular route, lets the author cancel, and answers 401 to others', async () => {
    const mr = await newMr();
    expect((await merge(mr, cast.master, { merge_when_build_succeeds: true })).status).toBe(200);
    expect((await cancel(mr, cast.reporter, 'POST')).status).toBe(401);
    expect((await cancel(mr, null, 'POST')).status).toBe(401);
    const res = await cancel(mr, cast.developer, 'POST', 'merge_request');
    expect(res.status).toBe(200);
    expect(res.body.merge_when_build_succeeds).toBe(false);
  });

  it('answers 405 on a merged or closed merge request, 404 for an absent one', async () => {
    const mr = await newMr();
    expect((await merge(mr, cast.master)).status).toBe(200);
    expect(await cancel(mr, cast.master)).toMatchObject({ status: 405, body: { message: '405 Method Not Allowed' } });
    const closed = await newMr();
    await s.ctx.data.run(`UPDATE merge_requests SET state = 'closed' WHERE id = ?`, [closed.id]);
    expect((await cancel(closed, cast.master, 'POST')).status).toBe(405);
    expect((await cancel({ id: 999999 }, cast.master)).status).toBe(404);
  });
});
