/**
 * Every list of the API is paginated as GitLab 8.x's `paginate` did it: the routes come from the OpenAPI document
 * (every GET whose 200 answer is an array, so routes added later are walked too), each path parameter is filled with a
 * real fixture (a project with a repository, commits, pipelines and builds, an issue with notes and awards, a group, a
 * runner ...), and each answer carries X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page and Link;
 * per_page is capped at 100, and page 2 of per_page=1 starts with another item than page 1 whenever X-Total >= 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { drive, pipelinesOf, pushFiles } from '../helpers/ci.js';
import { insertTodo } from '../helpers/collaboration.js';
import { ci, projectRunnersToken } from '../helpers/runner-fixtures.js';
import { generateKeyPair } from '../helpers/ssh-keys.js';

let s: TestServer;
let other: TestUser;
const ids: Record<string, string> = {};
let routes: string[] = [];

/**
 * Routes that cannot have fixtures in this test, with the reason. Keep it short: a route missing here and without a
 * fixture fails the walk with a message naming the parameter.
 */
const SKIP: Record<string, string> = {
  // GitLab 8.13 answers these whole, without pagination (present ..., not present paginate(...)): a few dozen fixed
  // items, or the versions of one merge request
  '/api/v3/projects/{id}/merge_requests/{merge_request_id}/versions': 'whole, as 8.13 lib/api/merge_request_diffs.rb',
  '/api/v3/templates/licenses': 'whole, as 8.13 lib/api/templates.rb',
  '/api/v3/templates/gitignores': 'whole, as 8.13 lib/api/templates.rb',
  '/api/v3/templates/gitlab_ci_ymls': 'whole, as 8.13 lib/api/templates.rb',
  '/api/v3/licenses': 'whole, as 8.13 lib/api/templates.rb (deprecated path)',
  '/api/v3/gitignores': 'whole, as 8.13 lib/api/templates.rb (deprecated path)',
  '/api/v3/gitlab_ci_ymls': 'whole, as 8.13 lib/api/templates.rb (deprecated path)',
  '/api/v3/projects/{id}/boards': 'whole, as 8.13 lib/api/boards.rb (one board per project)',
  '/api/v3/projects/{id}/boards/{board_id}/lists': 'whole, as 8.13 lib/api/boards.rb (a board\'s label lists)',
};

const CI_YML = 'stages: [test]\nrspec:\n  stage: test\n  script: echo rspec\n  environment: production\nlint:\n  stage: test\n  script: echo lint\n';

async function ok(method: 'POST' | 'PUT', path: string, as: TestUser, payload: Record<string, unknown> = {}): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await s.api(method, path, as, payload);
  if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.body;
}

beforeAll(async () => {
  s = await startTestServer();
  other = await s.user('walker2');
  const group = await ok('POST', '/groups', s.root, { name: 'walkers', path: 'walkers' });
  await ok('POST', `/groups/${group.id}/members`, s.root, { user_id: other.id, access_level: 30 });
  const project = await ok('POST', '/projects', s.root, { name: 'walk', namespace_id: group.id });
  await ok('POST', '/projects', s.root, { name: 'walk-two', namespace_id: group.id });
  for (const name of ['mine-one', 'mine-two']) await ok('POST', '/projects', s.root, { name });
  const pid = project.id as number;
  await ok('POST', `/projects/${pid}/members`, s.root, { user_id: other.id, access_level: 30 });
  await ok('POST', `/projects/${pid}/star`, s.root);
  const second = (await s.api('GET', '/projects/walkers%2Fwalk-two', s.root)).body;
  await ok('POST', `/projects/${second.id}/star`, s.root);

  // two pushes: two pipelines of two builds each; the head commit changes two files and has a tag and a branch
  await pushFiles(s.ctx, pid, s.root.id, { '.gitlab-ci.yml': CI_YML, 'README.md': 'hello\n' }, { message: 'first' });
  const sha = await pushFiles(s.ctx, pid, s.root.id, { 'a.txt': 'a\n', 'b.txt': 'b\n' }, { message: 'second', tag: 'v1' });
  await pushFiles(s.ctx, pid, s.root.id, { 'c.txt': 'c\n' }, { branch: 'feature', from: 'master', message: 'feature' });
  // two deployments (the rspec build of each pipeline deploys to production) and two more environments
  for (const pipeline of await pipelinesOf(s.ctx, pid)) if (pipeline.ref === 'master') await drive(s.ctx, pipeline.id, 'rspec', 'run', 'success');
  for (const name of ['staging', 'review/walk']) await ok('POST', `/projects/${pid}/environments`, s.root, { name });
  for (const name of ['ci/one', 'ci/two']) await ok('POST', `/projects/${pid}/statuses/${sha}`, s.root, { state: 'success', name });
  for (const note of ['first comment', 'second comment']) await ok('POST', `/projects/${pid}/repository/commits/${sha}/comments`, s.root, { note });

  for (const title of ['bug', 'feature']) await ok('POST', `/projects/${pid}/labels`, s.root, { name: title, color: '#FF0000' });
  const milestone = await ok('POST', `/projects/${pid}/milestones`, s.root, { title: 'v1.0' });
  await ok('POST', `/projects/${pid}/milestones`, s.root, { title: 'v2.0' });
  const issue = await ok('POST', `/projects/${pid}/issues`, s.root, { title: 'first issue', milestone_id: milestone.id, labels: 'bug' });
  const issue2 = await ok('POST', `/projects/${pid}/issues`, s.root, { title: 'second issue', milestone_id: milestone.id });
  const note = await ok('POST', `/projects/${pid}/issues/${issue.id}/notes`, s.root, { body: 'a note' });
  await ok('POST', `/projects/${pid}/issues/${issue.id}/notes`, s.root, { body: 'another note' });
  for (const name of ['smile', 'tada']) {
    await ok('POST', `/projects/${pid}/issues/${issue.id}/award_emoji`, s.root, { name });
    await ok('POST', `/projects/${pid}/issues/${issue.id}/notes/${note.id}/award_emoji`, s.root, { name });
  }
  await insertTodo(s.ctx, { userId: s.root.id, projectId: pid, targetId: issue.id, authorId: other.id });
  await insertTodo(s.ctx, { userId: s.root.id, projectId: pid, targetId: issue2.id, authorId: other.id, action: 'mentioned' });

  for (const url of ['http://example.com/one', 'http://example.com/two']) await ok('POST', `/projects/${pid}/hooks`, s.root, { url });
  for (const url of ['http://example.com/sys-one', 'http://example.com/sys-two']) await ok('POST', '/hooks', s.root, { url, push_events: false });
  for (const key of ['ONE', 'TWO']) await ok('POST', `/projects/${pid}/variables`, s.root, { key, value: 'v' });
  for (let i = 0; i < 2; i++) await ok('POST', `/projects/${pid}/triggers`, s.root);
  // two access requests to the project and to the group (request_access_enabled is on by default, as in 8.13; a
  // non-member asks only where they see the project or group: internal)
  await ok('PUT', `/projects/${pid}`, s.root, { visibility_level: 10 });
  await ok('PUT', `/groups/${group.id}`, s.root, { visibility_level: 10 });
  for (const name of ['asker-one', 'asker-two']) {
    const asker = await s.user(name);
    await ok('POST', `/projects/${pid}/access_requests`, asker);
    await ok('POST', `/groups/${group.id}/access_requests`, asker);
  }
  await ok('PUT', `/projects/${pid}`, s.root, { snippets_enabled: true });
  const snippet = await ok('POST', `/projects/${pid}/snippets`, s.root, { title: 'walk snippet', file_name: 'a.rb', code: 'puts 1', visibility_level: 0 });
  await ok('POST', `/projects/${pid}/snippets`, s.root, { title: 'second snippet', file_name: 'b.rb', code: 'puts 2', visibility_level: 0 });
  const snippetNote = await ok('POST', `/projects/${pid}/snippets/${snippet.id}/notes`, s.root, { body: 'a snippet note' });
  await ok('POST', `/projects/${pid}/snippets/${snippet.id}/notes`, s.root, { body: 'another snippet note' });
  for (const name of ['smile', 'tada']) {
    await ok('POST', `/projects/${pid}/snippets/${snippet.id}/award_emoji`, s.root, { name });
    await ok('POST', `/projects/${pid}/snippets/${snippet.id}/notes/${snippetNote.id}/award_emoji`, s.root, { name });
  }
  let runner = 0;
  for (const description of ['first runner', 'second runner']) {
    const r = await ci(s, 'POST', '/runners/register', { token: await projectRunnersToken(s, pid), description });
    if (r.status !== 201) throw new Error(`fixture runner: ${r.status}`);
    runner = r.body.id;
  }
  for (const name of ['one', 'two']) await ok('POST', `/users/${s.root.id}/personal_access_tokens`, s.root, { name });
  for (const name of ['mine', 'also mine']) await ok('POST', '/user/personal_access_tokens', s.root, { name });
  for (const title of ['laptop', 'desktop']) await ok('POST', '/user/keys', s.root, { title, key: generateKeyPair('ed25519').publicKey });
  for (const title of ['deploy one', 'deploy two']) await ok('POST', `/projects/${pid}/deploy_keys`, s.root, { title, key: generateKeyPair('ed25519').publicKey });
  for (const name of ['walk app', 'another walk app']) await ok('POST', '/applications', s.root, { name, redirect_uri: 'https://client.test/cb' });

  Object.assign(ids, {
    project: String(pid), group: String(group.id), user: String(s.root.id), runner: String(runner), sha, issue_id: String(issue.id),
    note_id: String(note.id), milestone_id: String(milestone.id), query: 'walk', snippet_id: String(snippet.id), snippet_note_id: String(snippetNote.id),
  });

  const doc = await s.app.inject({ method: 'GET', url: '/api/v3/openapi.json' });
  type Op = { responses?: Record<string, { content?: Record<string, { schema?: { type?: string } }> }> };
  const paths = (doc.json() as { paths: Record<string, Record<string, Op>> }).paths;
  routes = Object.entries(paths)
    .filter(([, methods]) => methods.get?.responses?.['200']?.content?.['application/json']?.schema?.type === 'array')
    .map(([path]) => path);

  // merge requests: only when their routes are mounted (a merge request needs the feature branch pushed above)
  if (routes.some((r) => r.includes('{merge_request_id}'))) {
    const mr = await ok('POST', `/projects/${pid}/merge_requests`, s.root, { source_branch: 'feature', target_branch: 'master', title: 'walk mr', description: `Closes #${issue.iid} and #${issue2.iid}` });
    const mrNote = await ok('POST', `/projects/${pid}/merge_requests/${mr.id}/notes`, s.root, { body: 'an mr note' });
    await ok('POST', `/projects/${pid}/merge_requests/${mr.id}/notes`, s.root, { body: 'another mr note' });
    for (const name of ['smile', 'tada']) {
      await ok('POST', `/projects/${pid}/merge_requests/${mr.id}/award_emoji`, s.root, { name });
      await ok('POST', `/projects/${pid}/merge_requests/${mr.id}/notes/${mrNote.id}/award_emoji`, s.root, { name });
    }
    Object.assign(ids, { merge_request_id: String(mr.id), mr_note_id: String(mrNote.id) });
  }
}, 60_000);
afterAll(async () => s?.close());

/** The value of a path parameter for a route, by name and by the route's prefix; undefined when there is no fixture. */
function valueOf(path: string, name: string): string | undefined {
  if (name === 'id') {
    if (path.startsWith('/api/v3/projects/{id}')) return ids.project;
    if (path.startsWith('/api/v3/groups/{id}')) return ids.group;
    if (path.startsWith('/api/v3/users/{id}')) return ids.user;
    if (path.startsWith('/api/v3/runners/{id}')) return ids.runner;
    return undefined;
  }
  if (name === 'note_id' && path.includes('{merge_request_id}')) return ids.mr_note_id;
  if (name === 'note_id' && path.includes('{snippet_id}')) return ids.snippet_note_id;
  return ids[name];
}

/** The route with every parameter filled, or the names of the parameters without a fixture. */
function fill(path: string): { url?: string; missing: string[] } {
  const missing: string[] = [];
  const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = valueOf(path, name);
    if (v === undefined) missing.push(name);
    return encodeURIComponent(v ?? '');
  });
  return missing.length ? { missing } : { url, missing };
}

const get = (url: string) => s.app.inject({ method: 'GET', url, headers: { 'private-token': s.root.token } });

describe('every list is paginated', () => {
  it('finds the list routes in the OpenAPI document', () => {
    expect(routes.length).toBeGreaterThan(40);
    for (const r of ['/api/v3/projects', '/api/v3/projects/{id}/events', '/api/v3/projects/{id}/builds', '/api/v3/todos', '/api/v3/users']) {
      expect(routes).toContain(r);
    }
  });

  it('answers every list with the pagination headers, per_page capped at 100, and a second page that moves on', async () => {
    const failures: string[] = [];
    let walked = 0;
    for (const route of routes) {
      if (SKIP[route]) continue;
      const { url, missing } = fill(route);
      if (!url) {
        failures.push(`${route}: no fixture for ${missing.join(', ')} (add one to the test, or a reasoned entry to SKIP)`);
        continue;
      }
      walked++;
      const first = await get(`${url}?per_page=1`);
      if (first.statusCode !== 200) {
        failures.push(`${route}: ${first.statusCode} ${first.body.slice(0, 160)}`);
        continue;
      }
      const h = first.headers;
      const total = Number(h['x-total']);
      const problems: string[] = [];
      for (const name of ['x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page', 'link']) {
        if (h[name] === undefined) problems.push(`no ${name}`);
      }
      if (!(total >= 1)) problems.push(`X-Total ${h['x-total']}: the fixture should give at least one item`);
      if (h['x-per-page'] !== '1' || h['x-page'] !== '1' || h['x-prev-page'] !== '') problems.push(`page headers ${h['x-per-page']}/${h['x-page']}/${h['x-prev-page']}`);
      if (h['x-total-pages'] !== String(total)) problems.push(`X-Total-Pages ${h['x-total-pages']} for ${total} items of 1`);
      if (h['x-next-page'] !== (total >= 2 ? '2' : '')) problems.push(`X-Next-Page ${h['x-next-page']}`);
      const link = String(h.link ?? '');
      if (!link.includes('rel="first"') || !link.includes('rel="last"') || (total >= 2 && !link.includes('rel="next"'))) problems.push(`Link ${link}`);
      const body = first.json() as unknown[];
      if (body.length !== Math.min(1, total)) problems.push(`${body.length} items on a page of 1`);
      if (total >= 2) {
        const second = await get(`${url}?per_page=1&page=2`);
        const item2 = (second.json() as unknown[])[0];
        if (second.statusCode !== 200 || second.headers['x-page'] !== '2' || second.headers['x-prev-page'] !== '1') problems.push(`page 2: ${second.statusCode}`);
        if (JSON.stringify(item2) === JSON.stringify(body[0])) problems.push('page 2 starts with the item of page 1');
      }
      const wide = await get(`${url}?per_page=500`);
      if (wide.headers['x-per-page'] !== '100') problems.push(`per_page=500 gives X-Per-Page ${wide.headers['x-per-page']}`);
      if (problems.length) failures.push(`${route}: ${problems.join('; ')}`);
    }
    expect(failures).toEqual([]);
    expect(walked).toBeGreaterThan(40);
  }, 60_000);

  it('answers a page past 2^53 on every list with 200 and no items (page=99999999999999999999 was 500; found by the fuzzer)', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      const { url } = fill(route);
      if (SKIP[route] || !url) continue;
      const r = await get(`${url}?per_page=5&page=99999999999999999999`);
      if (r.statusCode !== 200 || r.body !== '[]') failures.push(`${route}: ${r.statusCode} ${r.body.slice(0, 160)}`);
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('GET /users?username= is a paginated list of one', async () => {
    const r = await s.api('GET', `/users?username=${other.username}`, s.root);
    expect(r.status).toBe(200);
    expect(r.body.map((u: { id: number }) => u.id)).toEqual([other.id]);
    expect(r.headers['x-total']).toBe('1');
    expect(r.headers['x-total-pages']).toBe('1');
  });
});
