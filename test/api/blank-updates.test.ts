/**
 * Updates never erase a required field with a blank value (issue 23 item 9): a blank title, name, colour or path on a
 * PUT answers 400 `{"message":{"<field>":["can't be blank"]}}` and changes nothing, where the blank used to be dropped
 * as "not given" and the update answered 200. A blank optional field (a description) is still not given, and a blank
 * required field on a create still reads `"<field>" not given`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { commitTo } from '../helpers/repository.js';
import { addMemberAsync, makeProject } from '../helpers/fixtures.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';

let s: TestServer;
let alice: TestUser;
let project: { id: number; path_with_namespace: string };

const blank = (field: string) => ({ message: { [field]: ["can't be blank"] } });

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 100 });
  project = await makeProject(s, alice, 'blanks');
  await commitTo(s.ctx, project.id, 'master', { 'README.md': 'hello\n' }, { message: 'Initial' });
  await commitTo(s.ctx, project.id, 'feature', { 'a.txt': 'a\n' }, { from: 'master', message: 'Add a' });
});
afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

describe('issues', () => {
  it('PUT with title="" or only spaces is 400 can\'t be blank and keeps the title; a blank description is ignored', async () => {
    const created = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Keep me', description: 'text' });
    expect(created.status).toBe(201);
    const url = `/projects/${project.id}/issues/${created.body.id}`;
    for (const title of ['', '   ']) {
      const r = await s.api('PUT', url, alice, { title });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(blank('title'));
    }
    expect((await s.api('GET', url, alice)).body.title).toBe('Keep me');
    const ok = await s.api('PUT', url, alice, { title: 'Renamed', description: '' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ title: 'Renamed', description: 'text' });
  });

  it('POST with title="" still reads "title" not given', async () => {
    const r = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: '' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: '400 (Bad request) "title" not given' });
  });

  it('a caller who may not update the issue learns nothing from a blank title: 404 outside, 403 for a guest', async () => {
    const created = await s.api('POST', `/projects/${project.id}/issues`, alice, { title: 'Mine' });
    const url = `/projects/${project.id}/issues/${created.body.id}`;
    const outsider = await s.user('outsider');
    expect((await s.api('PUT', url, outsider, { title: '' })).status).toBe(404);
    const guest = await s.user('guestuser');
    await addMemberAsync(s.ctx, { type: 'Project', id: project.id }, guest.id, 10);
    expect((await s.api('PUT', url, guest, { title: '' })).status).toBe(403);
    expect((await s.api('GET', url, alice)).body.title).toBe('Mine');
  });
});

describe('merge requests', () => {
  it('PUT with a blank title or target branch is 400 and keeps them', async () => {
    const created = await s.api('POST', `/projects/${project.id}/merge_requests`, alice, { source_branch: 'feature', target_branch: 'master', title: 'Add a' });
    expect(created.status).toBe(201);
    const url = `/projects/${project.id}/merge_requests/${created.body.id}`;
    const r = await s.api('PUT', url, alice, { title: '' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(blank('title'));
    const t = await s.api('PUT', url, alice, { target_branch: '' });
    expect(t.status).toBe(400);
    expect(t.body).toEqual(blank('target_branch'));
    expect((await s.api('GET', url, alice)).body).toMatchObject({ title: 'Add a', target_branch: 'master' });
    expect((await s.api('PUT', url, alice, { title: 'Add a file', description: '' })).body.title).toBe('Add a file');
  });
});

describe('labels', () => {
  it('PUT with new_name="" or color="" is 400 and keeps the label', async () => {
    expect((await s.api('POST', `/projects/${project.id}/labels`, alice, { name: 'bug', color: '#ff0000' })).status).toBe(201);
    const url = `/projects/${project.id}/labels`;
    const n = await s.api('PUT', url, alice, { name: 'bug', new_name: '' });
    expect(n.status).toBe(400);
    expect(n.body.message.title).toContain("can't be blank");
    const c = await s.api('PUT', url, alice, { name: 'bug', color: '' });
    expect(c.status).toBe(400);
    expect(c.body.message.color).toContain("can't be blank");
    const list = await s.api('GET', url, alice);
    expect(list.body).toEqual([expect.objectContaining({ name: 'bug', color: '#ff0000' })]);
  });
});

describe('milestones', () => {
  it('PUT with title="" is 400 (8.x\'s milestone message) and keeps the title; POST with title="" is not given', async () => {
    const created = await s.api('POST', `/projects/${project.id}/milestones`, alice, { title: 'v1' });
    expect(created.status).toBe(201);
    const url = `/projects/${project.id}/milestones/${created.body.id}`;
    // 8.x's milestone errors: `Failed to update milestone` and the Ruby inspect of the errors hash.
    const r = await s.api('PUT', url, alice, { title: '' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Failed to update milestone {:title=>["can\'t be blank"]}' });
    expect((await s.api('GET', url, alice)).body.title).toBe('v1');
    const p = await s.api('POST', `/projects/${project.id}/milestones`, alice, { title: '' });
    expect(p.status).toBe(400);
    expect(p.body).toEqual({ message: '400 (Bad request) "title" not given' });
  });
});

describe('projects', () => {
  it('PUT with name="" or path="" is 400 and keeps them', async () => {
    const own = await makeProject(s, alice, 'renameme');
    const url = `/projects/${own.id}`;
    const n = await s.api('PUT', url, alice, { name: '' });
    expect(n.status).toBe(400);
    expect(n.body).toEqual(blank('name'));
    const p = await s.api('PUT', url, alice, { path: '' });
    expect(p.status).toBe(400);
    expect(p.body).toEqual(blank('path'));
    expect((await s.api('GET', url, alice)).body).toMatchObject({ name: 'renameme', path: 'renameme' });
    expect((await s.api('PUT', url, alice, { description: '' })).status).toBe(200);
  });
});

describe('groups', () => {
  it('PUT with name="" or path="" is 400 and keeps them', async () => {
    const g = await s.api('POST', '/groups', s.root, { name: 'Blank Group', path: 'blank-group' });
    expect(g.status).toBe(201);
    const url = `/groups/${g.body.id}`;
    const n = await s.api('PUT', url, s.root, { name: '' });
    expect(n.status).toBe(400);
    expect(n.body.message.name).toContain("can't be blank");
    const p = await s.api('PUT', url, s.root, { path: '' });
    expect(p.status).toBe(400);
    expect(p.body.message.path).toContain("can't be blank");
    expect((await s.api('GET', url, s.root)).body).toMatchObject({ name: 'Blank Group', path: 'blank-group' });
  });
});
