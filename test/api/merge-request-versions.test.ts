/**
 * Merge request diff versions (8.13 lib/api/merge_request_diffs.rb): the list (MergeRequestDiff, newest first, one per
 * head the merge request has had) and one version (MergeRequestDiffFull: its commits and file diffs), with 8.13's
 * 404s and 400, and who may read them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { pushFiles } from '../helpers/ci.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';
import { commitTo } from '../helpers/repository.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let alice: TestUser;
let guest: TestUser;
let outsider: TestUser;
let project: { id: number };
let mrId: number;
let first: string;
let second: string;
let base: string;

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 100 });
  guest = await s.user('guest');
  outsider = await s.user('outsider');
  project = await makeProject(s, alice, 'versions', { visibility: 0 });
  await addMemberAsync(s.ctx, { type: 'Project', id: project.id }, guest.id, 10);
  base = await commitTo(s.ctx, project.id, 'master', { 'README.md': 'hello\n' }, { message: 'Initial' });
  first = await commitTo(s.ctx, project.id, 'topic', { 'a.txt': 'a\n' }, { from: 'master', message: 'Add a' });
  const mr = await s.api('POST', `/projects/${project.id}/merge_requests`, alice, { source_branch: 'topic', target_branch: 'master', title: 'Topic' });
  expect(mr.status).toBe(201);
  mrId = mr.body.id;
  second = await pushFiles(s.ctx, project.id, alice.id, { 'b.txt': 'b\n' }, { branch: 'topic', message: 'Add b' });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

const url = (suffix = '') => `/projects/${project.id}/merge_requests/${mrId}/versions${suffix}`;

describe('GET /projects/:id/merge_requests/:merge_request_id/versions', () => {
  it('lists one version per head, newest first, as MergeRequestDiff', async () => {
    const r = await s.api('GET', url(), guest);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(2);
    expect(Object.keys(r.body[0]).sort()).toEqual(
      ['base_commit_sha', 'created_at', 'head_commit_sha', 'id', 'merge_request_id', 'real_size', 'start_commit_sha', 'state']);
    expect(r.body[0]).toMatchObject({ head_commit_sha: second, base_commit_sha: base, start_commit_sha: base, merge_request_id: mrId, state: 'collected', real_size: '2' });
    expect(r.body[1]).toMatchObject({ head_commit_sha: first, base_commit_sha: base, state: 'collected', real_size: '1' });
    expect(r.body[0].created_at).toMatch(TIME);
    expect(r.body[0].id).toBeGreaterThan(r.body[1].id);
  });

  it('is 404 for an unknown merge request, 404 to outsiders of a private project, 401 anonymous', async () => {
    const unknown = await s.api('GET', `/projects/${project.id}/merge_requests/999999/versions`, alice);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Not found' });
    expect((await s.api('GET', url(), outsider)).status).toBe(404);
    expect((await s.api('GET', url(), null)).status).toBe(401);
    expect((await s.api('GET', url(), s.root)).status).toBe(200);
  });
});

describe('GET /projects/:id/merge_requests/:merge_request_id/versions/:version_id', () => {
  it('shows a version with its commits (newest first) and its file diffs', async () => {
    const list = (await s.api('GET', url(), alice)).body as Array<{ id: number; head_commit_sha: string }>;
    const newest = await s.api('GET', url(`/${list[0]!.id}`), guest);
    expect(newest.status).toBe(200);
    expect(newest.body).toMatchObject({ id: list[0]!.id, head_commit_sha: second, merge_request_id: mrId, state: 'collected' });
    expect(newest.body.commits.map((c: { id: string }) => c.id)).toEqual([second, first]);
    expect(newest.body.commits[0]).toMatchObject({ short_id: second.slice(0, 8), title: 'Add b', message: expect.stringMatching(/^Add b\n?$/), author_name: expect.any(String) });
    expect(newest.body.diffs.map((d: { new_path: string }) => d.new_path)).toEqual(['a.txt', 'b.txt']);
    expect(newest.body.diffs[1]).toMatchObject({ old_path: 'b.txt', new_file: true, deleted_file: false, renamed_file: false, diff: expect.stringContaining('+b') });

    const older = await s.api('GET', url(`/${list[1]!.id}`), alice);
    expect(older.body.commits.map((c: { id: string }) => c.id)).toEqual([first]);
    expect(older.body.diffs.map((d: { new_path: string }) => d.new_path)).toEqual(['a.txt']);
  });

  it('is 404 for a version of another merge request or none, 400 for a version id that is not a number', async () => {
    await commitTo(s.ctx, project.id, 'other', { 'o.txt': 'o\n' }, { from: 'master', message: 'Add o' });
    const other = await s.api('POST', `/projects/${project.id}/merge_requests`, alice, { source_branch: 'other', target_branch: 'master', title: 'Other' });
    expect(other.status).toBe(201);
    const otherVersion = (await s.api('GET', `/projects/${project.id}/merge_requests/${other.body.id}/versions`, alice)).body[0].id;
    expect((await s.api('GET', `/projects/${project.id}/merge_requests/${other.body.id}/versions/${otherVersion}`, alice)).status).toBe(200);
    expect((await s.api('GET', url(`/${otherVersion}`), alice)).status).toBe(404);
    for (const id of ['999999', '0', '99999999999999999999']) {
      const r = await s.api('GET', url(`/${id}`), alice);
      expect(r.status).toBe(404);
    }
    expect((await s.api('GET', url('/999999'), alice)).body).toEqual({ message: '404 Not found' });
    const bad = await s.api('GET', url('/abc'), alice);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: '400 (Bad request) "version_id" is invalid' });
    expect((await s.api('GET', url('/1'), outsider)).status).toBe(404);
  });
});
