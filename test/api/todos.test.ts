/** Todos: the 8.x TodoService rules (services), GET /todos with its filters and pagination, DELETE /todos/:id and DELETE /todos. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectRow, UserRow } from '../../daemon/db/schema.js';
import { toProject, toUser } from '../../daemon/db/rows.js';
import type { Queries } from '../../daemon/db/layer/types.js';
import {
  markTodo, markTodosDoneOnClose, todosForNewIssuable, todosForNote, todosForUpdatedIssuable, type IssuableInfo,
} from '../../daemon/services/collaboration/todos.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { insertIssue, insertTodo, sqlRows } from '../helpers/collaboration.js';
import { addCastMembers, addMemberAsync, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';

let s: TestServer;
let cast: Cast;
let priv: { id: number; path_with_namespace: string };
let pub: { id: number; path_with_namespace: string };

const userRow = async (u: TestUser): Promise<UserRow> => toUser((await s.ctx.data.get<Record<string, unknown>>(`SELECT * FROM users WHERE id = ?`, [u.id]))!);
const projectRow = async (id: number): Promise<ProjectRow> => toProject((await s.ctx.data.get<Record<string, unknown>>(`SELECT * FROM projects WHERE id = ?`, [id]))!);
const todosOf = async (u: TestUser) =>
  (await sqlRows(s.ctx, `SELECT * FROM todos WHERE user_id = ? ORDER BY id`, [u.id])) as { action: string; state: string; target_id: number; note_id: number | null; author_id: number }[];
const clearTodos = () => s.ctx.data.run(`DELETE FROM todos`);

/** An issue row and its IssuableInfo. */
async function issue(projectId: number, opts: Parameters<typeof insertIssue>[2] = {}): Promise<IssuableInfo & { iid: number }> {
  const { id, iid } = await insertIssue(s.ctx, projectId, opts);
  return { project: await projectRow(projectId), target: { type: 'Issue', id }, authorId: opts.authorId ?? null, assigneeId: opts.assigneeId ?? null, confidential: opts.confidential, iid };
}
const inTx = <T>(fn: (tx: Queries) => Promise<T>): Promise<T> => s.ctx.data.transaction(fn);

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'td');
  priv = await makeProject(s, cast.owner, 'todo-private', { visibility: 0 });
  pub = await makeProject(s, cast.owner, 'todo-public', { visibility: 20 });
  await addCastMembers(s.ctx, cast, priv.id);
});
afterAll(async () => {
  await s.close();
});

describe('TodoService rules', () => {
  it('assigned: a todo for the assignee, none when self-assigned', async () => {
    await clearTodos();
    const actor = await userRow(cast.developer);
    const i = await issue(priv.id, { authorId: actor.id, assigneeId: cast.reporter.id });
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, actor, i, null));
    expect(await todosOf(cast.reporter)).toMatchObject([{ action: 'assigned', state: 'pending', target_id: i.target.id, author_id: actor.id }]);
    const self = await issue(priv.id, { authorId: actor.id, assigneeId: actor.id });
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, actor, self, null));
    expect(await todosOf(cast.developer)).toEqual([]);
  });

  it('mentioned: members who can read; not the actor, not unknown names, not emails, not code', async () => {
    await clearTodos();
    const actor = await userRow(cast.developer);
    const i = await issue(priv.id, { authorId: actor.id });
    const text = `@${cast.guest.username} @${cast.developer.username} @nobody ${cast.master.username}@example.com \`@${cast.reporter.username}\` @${cast.nonMember.username} @${cast.guest.username}`;
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, actor, i, text));
    expect(await todosOf(cast.guest)).toMatchObject([{ action: 'mentioned' }]);
    for (const u of [cast.developer, cast.master, cast.reporter, cast.nonMember]) expect(await todosOf(u)).toEqual([]);
  });

  it('mentioned on a public project: non-members can read, so they get one; external users cannot see an internal one', async () => {
    await clearTodos();
    const actor = await userRow(cast.owner);
    const i = await issue(pub.id, { authorId: actor.id });
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, actor, i, `cc @${cast.nonMember.username}`));
    expect(await todosOf(cast.nonMember)).toHaveLength(1);
    const internal = await makeProject(s, cast.owner, 'todo-internal', { visibility: 10 });
    const j = await issue(internal.id, { authorId: actor.id });
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, actor, j, `@${cast.external.username} @${cast.nonMember.username}`));
    expect(await todosOf(cast.external)).toEqual([]);
    expect(await todosOf(cast.nonMember)).toHaveLength(2);
  });

  it('confidential: a mentioned guest gets no todo, a reporter and the assignee do', async () => {
    await clearTodos();
    const actor = await userRow(cast.master);
    const i = await issue(priv.id, { authorId: actor.id, assigneeId: cast.guest.id, confidential: true });
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, actor, i, `@${cast.guest.username} @${cast.reporter.username}`));
    expect(await todosOf(cast.reporter)).toMatchObject([{ action: 'mentioned' }]);
    expect(await todosOf(cast.guest)).toMatchObject([{ action: 'assigned' }]); // one pending todo per user and target (8.x)
    const other = await userRow(cast.owner);
    const j = await issue(priv.id, { authorId: other.id, confidential: true });
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, other, j, `@${cast.guest.username}`));
    expect(await todosOf(cast.guest)).toHaveLength(1);
  });

  it('update: assigned on a new assignee only, mentioned only for names new to the text', async () => {
    await clearTodos();
    const actor = await userRow(cast.developer);
    const i = await issue(priv.id, { authorId: actor.id, assigneeId: cast.master.id });
    await inTx((tx) => todosForUpdatedIssuable(s.ctx, tx, actor, i, { oldAssigneeId: cast.master.id, oldText: `@${cast.guest.username}`, newText: `@${cast.guest.username} @${cast.reporter.username}` }));
    expect(await todosOf(cast.master)).toEqual([]);
    expect(await todosOf(cast.guest)).toEqual([]);
    expect(await todosOf(cast.reporter)).toMatchObject([{ action: 'mentioned' }]);
    const reassigned = { ...i, assigneeId: cast.guest.id };
    await inTx((tx) => todosForUpdatedIssuable(s.ctx, tx, actor, reassigned, { oldAssigneeId: cast.master.id, oldText: 'x', newText: 'x' }));
    expect(await todosOf(cast.guest)).toMatchObject([{ action: 'assigned' }]);
  });

  it('note: mentioned with the note id, and the note author\'s own pending todos on the target become done', async () => {
    await clearTodos();
    const dev = await userRow(cast.developer);
    const i = await issue(priv.id, { authorId: cast.owner.id, assigneeId: dev.id });
    const owner = await userRow(cast.owner);
    await inTx((tx) => todosForNewIssuable(s.ctx, tx, owner, i, null));
    expect(await todosOf(cast.developer)).toMatchObject([{ state: 'pending' }]);
    const at = new Date().toISOString();
    const noteId = (await s.ctx.data.get<{ id: number }>(`INSERT INTO notes (project_id, noteable_type, noteable_id, note, author_id, created_at, updated_at)
      VALUES (?, 'Issue', ?, 'hi', ?, ?, ?) RETURNING id`, [priv.id, i.target.id, dev.id, at, at]))!.id;
    await inTx((tx) => todosForNote(s.ctx, tx, dev, i, noteId, `thanks @${cast.guest.username}`));
    expect(await todosOf(cast.developer)).toMatchObject([{ state: 'done' }]);
    expect(await todosOf(cast.guest)).toMatchObject([{ action: 'mentioned', note_id: noteId }]);
  });

  it('close: only the closer\'s todos on the target become done', async () => {
    await clearTodos();
    const i = await issue(priv.id, { authorId: cast.owner.id });
    await insertTodo(s.ctx, { userId: cast.guest.id, projectId: priv.id, targetId: i.target.id });
    await insertTodo(s.ctx, { userId: cast.reporter.id, projectId: priv.id, targetId: i.target.id });
    const closer = await userRow(cast.guest);
    await inTx((tx) => markTodosDoneOnClose(tx, closer, i.target));
    expect(await todosOf(cast.guest)).toMatchObject([{ state: 'done' }]);
    expect(await todosOf(cast.reporter)).toMatchObject([{ state: 'pending' }]);
  });

  it('marked: created once; null while one is pending', async () => {
    await clearTodos();
    const i = await issue(priv.id, { authorId: cast.owner.id });
    const guest = await userRow(cast.guest);
    const first = await inTx((tx) => markTodo(tx, guest, i));
    expect(first).toMatchObject({ action: 'marked', state: 'pending', userId: cast.guest.id, authorId: cast.guest.id });
    expect(await inTx((tx) => markTodo(tx, guest, i))).toBeNull();
  });
});

describe('GET /todos', () => {
  let a: IssuableInfo & { iid: number };
  let b: IssuableInfo & { iid: number };
  let reader: TestUser;
  beforeAll(async () => {
    await clearTodos();
    reader = await s.user('tdreader');
    await addMemberAsync(s.ctx, { type: 'Project', id: priv.id }, reader.id, 20);
    a = await issue(priv.id, { title: 'First issue', authorId: cast.owner.id });
    b = await issue(pub.id, { title: 'Second issue', authorId: cast.owner.id });
    await insertTodo(s.ctx, { userId: reader.id, projectId: priv.id, targetId: a.target.id, authorId: cast.owner.id, action: 'assigned' });
    await insertTodo(s.ctx, { userId: reader.id, projectId: pub.id, targetId: b.target.id, authorId: cast.master.id, action: 'mentioned' });
    await insertTodo(s.ctx, { userId: reader.id, projectId: pub.id, targetId: b.target.id, authorId: reader.id, action: 'marked', state: 'done' });
    await insertTodo(s.ctx, { userId: cast.guest.id, projectId: priv.id, targetId: a.target.id, authorId: cast.owner.id });
  });

  it('401 for anonymous callers', async () => {
    expect((await s.api('GET', '/todos', null)).status).toBe(401);
    expect((await s.api('DELETE', '/todos', null)).status).toBe(401);
    expect((await s.api('DELETE', '/todos/1', null)).status).toBe(401);
  });

  it('the caller\'s pending todos, newest first, in the Todo shape', async () => {
    const r = await s.api('GET', '/todos', reader);
    expect(r.status).toBe(200);
    expect(r.body.map((t: { action_name: string }) => t.action_name)).toEqual(['mentioned', 'assigned']);
    const t = r.body[1];
    expect(Object.keys(t).sort()).toEqual(['action_name', 'author', 'body', 'created_at', 'id', 'project', 'state', 'target', 'target_type', 'target_url'].sort());
    expect(t).toMatchObject({
      action_name: 'assigned', target_type: 'Issue', state: 'pending', body: 'First issue',
      target_url: `http://gantry.test/${priv.path_with_namespace}/issues/${a.iid}`,
      author: { id: cast.owner.id, username: cast.owner.username },
      project: { id: priv.id, path_with_namespace: priv.path_with_namespace, name: 'todo-private' },
      target: { id: a.target.id, iid: a.iid, title: 'First issue', state: 'opened', upvotes: 0, downvotes: 0, labels: [] },
    });
    expect(typeof t.id).toBe('number');
    expect(typeof t.created_at).toBe('string');
    expect(r.headers['x-total']).toBe('2');
  });

  it('filters: action, author_id, project_id, state, type; unknown values are 400', async () => {
    const get = async (q: string) => (await s.api('GET', `/todos?${q}`, reader)).body.map((t: { action_name: string }) => t.action_name);
    expect(await get('action=assigned')).toEqual(['assigned']);
    expect(await get(`author_id=${cast.master.id}`)).toEqual(['mentioned']);
    expect(await get('author_id=999999')).toEqual([]);
    expect(await get(`project_id=${pub.id}`)).toEqual(['mentioned']);
    expect(await get(`project_id=${pub.id}&state=done`)).toEqual(['marked']);
    expect(await get('type=Issue')).toEqual(['mentioned', 'assigned']);
    expect(await get('type=MergeRequest')).toEqual([]);
    for (const q of ['action=nope', 'state=open', 'type=Commit']) {
      const r = await s.api('GET', `/todos?${q}`, reader);
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/does not have a valid value/);
    }
    expect((await s.api('GET', '/todos?author_id=x', reader)).status).toBe(400);
  });

  it('project_id of a project the caller cannot read lists nothing', async () => {
    const hidden = await makeProject(s, cast.owner, 'todo-hidden', { visibility: 0 });
    const h = await issue(hidden.id, { authorId: cast.owner.id });
    await insertTodo(s.ctx, { userId: reader.id, projectId: hidden.id, targetId: h.target.id });
    expect((await s.api('GET', `/todos?project_id=${hidden.id}`, reader)).body).toEqual([]);
    await s.ctx.data.run(`DELETE FROM todos WHERE project_id = ?`, [hidden.id]);
  });

  it('paginates with the headers', async () => {
    const pager = await s.user('tdpager');
    for (let n = 0; n < 5; n++) await insertTodo(s.ctx, { userId: pager.id, projectId: pub.id, targetId: b.target.id, authorId: cast.owner.id });
    const r = await s.api('GET', '/todos?per_page=2&page=2', pager);
    expect(r.body).toHaveLength(2);
    expect(r.headers).toMatchObject({ 'x-total': '5', 'x-total-pages': '3', 'x-page': '2', 'x-per-page': '2', 'x-next-page': '3', 'x-prev-page': '1' });
    expect(String(r.headers.link)).toContain('rel="next"');
  });

  it('todos of a deleted issue are out of sight', async () => {
    const gone = await issue(pub.id, { authorId: cast.owner.id });
    const u = await s.user('tdgone');
    const id = await insertTodo(s.ctx, { userId: u.id, projectId: pub.id, targetId: gone.target.id });
    await s.ctx.data.run(`UPDATE issues SET deleted_at = ? WHERE id = ?`, [new Date().toISOString(), gone.target.id]);
    expect((await s.api('GET', '/todos', u)).body).toEqual([]);
    expect((await s.api('DELETE', `/todos/${id}`, u)).status).toBe(404);
    expect(await todosOf(u)).toMatchObject([{ state: 'pending' }]);
  });
});

describe('DELETE /todos/:id and DELETE /todos', () => {
  it('marks one done and answers the Todo; 404 for another user\'s or an absent one; 400 for a non-integer id', async () => {
    const u = await s.user('tddone');
    const other = await s.user('tdother');
    const i = await issue(pub.id, { title: 'Done one', authorId: cast.owner.id });
    const id = await insertTodo(s.ctx, { userId: u.id, projectId: pub.id, targetId: i.target.id, authorId: cast.owner.id });
    const theirs = await s.api('DELETE', `/todos/${id}`, other);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ message: '404 Todo Not Found' });
    expect(await todosOf(u)).toMatchObject([{ state: 'pending' }]);
    const r = await s.api('DELETE', `/todos/${id}`, u);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, state: 'done', body: 'Done one', target: { id: i.target.id } });
    expect((await s.api('DELETE', '/todos/999999', u)).status).toBe(404);
    expect((await s.api('DELETE', '/todos/abc', u)).status).toBe(400);
    expect((await s.api('GET', '/todos', u)).body).toEqual([]);
  });

  it('marks every pending todo done and answers the count; only the caller\'s', async () => {
    const u = await s.user('tdall');
    const other = await s.user('tdall2');
    const i = await issue(pub.id, { authorId: cast.owner.id });
    for (let n = 0; n < 3; n++) await insertTodo(s.ctx, { userId: u.id, projectId: pub.id, targetId: i.target.id });
    await insertTodo(s.ctx, { userId: u.id, projectId: pub.id, targetId: i.target.id, state: 'done' });
    await insertTodo(s.ctx, { userId: other.id, projectId: pub.id, targetId: i.target.id });
    const r = await s.api('DELETE', '/todos', u);
    expect(r.status).toBe(200);
    expect(r.body).toBe(3);
    expect(r.text).toBe('3');
    expect((await s.api('DELETE', '/todos', u)).body).toBe(0);
    expect(await todosOf(other)).toMatchObject([{ state: 'pending' }]);
  });
});

describe('todos through the issue and note routes', () => {
  const issues = (p: { id: number }) => `/projects/${p.id}/issues`;
  const pending = async (u: TestUser) => (await s.api('GET', '/todos', u)).body as { action_name: string; target: { id: number }; body: string; target_url: string; author: { id: number } }[];

  it('assigned on create and on reassignment; mentioned in the description; none for the actor', async () => {
    await clearTodos();
    const r = await s.api('POST', issues(priv), cast.master, {
      title: 'Route todo', description: `@${cast.guest.username} and @${cast.master.username}, see \`@${cast.reporter.username}\``, assignee_id: cast.developer.id,
    });
    expect(r.status).toBe(201);
    expect((await pending(cast.developer)).map((t) => t.action_name)).toEqual(['assigned']);
    expect(await pending(cast.guest)).toMatchObject([{ action_name: 'mentioned', target: { id: r.body.id }, body: 'Route todo', author: { id: cast.master.id } }]);
    expect(await pending(cast.master)).toEqual([]);
    expect(await pending(cast.reporter)).toEqual([]);
    await s.api('PUT', `${issues(priv)}/${r.body.id}`, cast.master, { assignee_id: cast.reporter.id });
    expect((await pending(cast.reporter)).map((t) => t.action_name)).toEqual(['assigned']);
  });

  it('mentioned in a note, with the note text as body and #note_<id> in the URL', async () => {
    await clearTodos();
    const i = (await s.api('POST', issues(priv), cast.owner, { title: 'Noted' })).body;
    const n = await s.api('POST', `${issues(priv)}/${i.id}/notes`, cast.developer, { body: `ping @${cast.guest.username}` });
    expect(n.status).toBe(201);
    const [todo] = await pending(cast.guest);
    expect(todo).toMatchObject({ action_name: 'mentioned', body: `ping @${cast.guest.username}` });
    expect(todo!.target_url).toBe(`http://gantry.test/${priv.path_with_namespace}/issues/${i.iid}#note_${n.body.id}`);
  });

  it('marked by POST .../todo (201, then 304) and done when that user closes the issue', async () => {
    await clearTodos();
    const i = (await s.api('POST', issues(priv), cast.owner, { title: 'Mark me' })).body;
    const marked = await s.api('POST', `${issues(priv)}/${i.id}/todo`, cast.reporter);
    expect(marked.status).toBe(201);
    expect(marked.body).toMatchObject({ action_name: 'marked', state: 'pending', target: { id: i.id } });
    expect((await s.api('POST', `${issues(priv)}/${i.id}/todo`, cast.reporter)).status).toBe(304);
    await s.api('POST', `${issues(priv)}/${i.id}/todo`, cast.developer);
    expect((await s.api('PUT', `${issues(priv)}/${i.id}`, cast.reporter, { state_event: 'close' })).status).toBe(200);
    expect(await pending(cast.reporter)).toEqual([]);
    expect(await pending(cast.developer)).toHaveLength(1); // only the closer's todos are done
  });

  it('no todo for a mention in a confidential issue the user cannot read, nor on a private project for a non-member', async () => {
    await clearTodos();
    const r = await s.api('POST', issues(priv), cast.reporter, {
      title: 'Secret', confidential: true, description: `@${cast.guest.username} @${cast.developer.username} @${cast.nonMember.username}`,
    });
    expect(r.status).toBe(201);
    expect(await pending(cast.guest)).toEqual([]);
    expect(await pending(cast.nonMember)).toEqual([]);
    expect((await pending(cast.developer)).map((t) => t.action_name)).toEqual(['mentioned']);
    const n = await s.api('POST', `${issues(priv)}/${r.body.id}/notes`, cast.reporter, { body: `@${cast.guest.username} again` });
    expect(n.status).toBe(201);
    expect(await pending(cast.guest)).toEqual([]);
  });
});

describe('todos about what the user may no longer read (found by the authorization matrix, test/authz)', () => {
  it('are left out of GET /todos and X-Total, and DELETE /todos/:id answers 404, until the user may read them again', async () => {
    await clearTodos();
    const secret = (await insertIssue(s.ctx, pub.id, { title: 'Made confidential later', confidential: true })).id;
    const privateIssue = (await insertIssue(s.ctx, priv.id, { title: 'Of a project left since' })).id;
    const open = (await insertIssue(s.ctx, pub.id, { title: 'Still readable' })).id;
    const made: number[] = [];
    for (const [i, id] of [secret, privateIssue, open].entries()) {
      made.push(await insertTodo(s.ctx, { userId: cast.nonMember.id, projectId: i === 1 ? priv.id : pub.id, targetId: id }));
    }
    const [a, b, c] = made;
    const r = await s.api('GET', '/todos', cast.nonMember);
    expect(r.status).toBe(200);
    expect(r.body.map((t: { id: number }) => t.id)).toEqual([c]);
    expect(r.headers['x-total']).toBe('1');
    expect(r.text).not.toContain('Made confidential later');
    for (const id of [a, b]) expect((await s.api('DELETE', `/todos/${id}`, cast.nonMember)).status).toBe(404);
    // back on the project: the todo is there again
    await addMemberAsync(s.ctx, { type: 'Project', id: priv.id }, cast.nonMember.id, 10);
    expect((await s.api('GET', '/todos', cast.nonMember)).body.map((t: { id: number }) => t.id)).toEqual([c, b]);
    await s.ctx.data.run(`DELETE FROM members WHERE source_type = 'Project' AND source_id = ? AND user_id = ?`, [priv.id, cast.nonMember.id]);
  });
});
