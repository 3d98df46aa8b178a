/**
 * Issue boards (GitLab 8.13 lib/api/boards.rb): a board from the project's start with backlog and done lists (not
 * shown), label lists created at the end, moved with the lists between shifting, deleted with the gap closed;
 * read_board for whoever reads the project, admin_list for reporters and up; every error answer changes nothing.
 */
import { DaemonState } from '../../daemon/context.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { openPostgres } from '../../daemon/db/layer/open.js';
import { createBoardList, moveBoardList } from '../../daemon/services/collaboration/boards.js';
import { addCastMembers, makeCast, makeProject, type Cast } from '../helpers/fixtures.js';
import { insertLabel } from '../helpers/collaboration.js';

let s: TestServer;
let cast: Cast;
let pub: { id: number };
let priv: { id: number };

const listsOf = async (boardId: number) =>
  (await s.ctx.data.all<{ list_type: string; label_id: number | null; position: number | null }>(
    `SELECT list_type, label_id, position FROM board_lists WHERE board_id = ? ORDER BY list_type, position`, [boardId],
  ));
async function boardOf(p: { id: number }): Promise<number> {
  const r = await s.api('GET', `/projects/${p.id}/boards`, cast.owner);
  expect(r.status).toBe(200);
  return r.body[0].id as number;
}

beforeAll(async () => {
  s = await startTestServer();
  cast = await makeCast(s, 'brd');
  pub = await makeProject(s, cast.owner, 'board-public', { visibility: 20 });
  priv = await makeProject(s, cast.owner, 'board-private', { visibility: 0 });
  await addCastMembers(s.ctx, cast, pub.id);
  await addCastMembers(s.ctx, cast, priv.id);
});
afterAll(async () => {
  await s.close();
});

describe('GET /projects/:id/boards', () => {
  it('answers the board a new project has, with backlog and done lists kept but not shown', async () => {
    const r = await s.api('GET', `/projects/${priv.id}/boards`, cast.guest);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([{ id: expect.any(Number), lists: [] }]);
    expect(await listsOf(r.body[0].id)).toEqual([
      { list_type: 'backlog', label_id: null, position: null }, { list_type: 'done', label_id: null, position: null },
    ]);
  });

  it('gives a project without a board (none should be) one on first read, with its backlog and done lists', async () => {
    const p = await makeProject(s, cast.owner, 'board-lazy', { visibility: 0 });
    await s.ctx.data.run(`DELETE FROM boards WHERE project_id = ?`, [p.id]);
    const both = await Promise.all([s.api('GET', `/projects/${p.id}/boards`, cast.owner), s.api('GET', `/projects/${p.id}/boards`, cast.owner)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both[0]!.body[0].id).toBe(both[1]!.body[0].id);
    expect((await listsOf(both[0]!.body[0].id)).map((l) => l.list_type)).toEqual(['backlog', 'done']);
  });

  it('follows read_board: 401 anonymous, 404 for who cannot see the project, 200 for the rest', async () => {
    expect((await s.api('GET', `/projects/${pub.id}/boards`, null)).status).toBe(401);
    expect((await s.api('GET', `/projects/${priv.id}/boards`, null)).status).toBe(401);
    for (const u of [cast.nonMember, cast.external]) expect((await s.api('GET', `/projects/${priv.id}/boards`, u)).status).toBe(404);
    for (const u of [cast.nonMember, cast.guest, cast.reporter, cast.developer, cast.master, cast.owner, cast.admin]) {
      expect((await s.api('GET', `/projects/${pub.id}/boards`, u)).status).toBe(200);
    }
    expect((await s.api('GET', `/projects/999999/boards`, cast.admin)).status).toBe(404);
  });
});

describe('/projects/:id/boards/:board_id/lists', () => {
  it('creates label lists at the end (201 List), shows, moves and deletes them', async () => {
    const p = await makeProject(s, cast.owner, 'board-flow', { visibility: 0 });
    await addCastMembers(s.ctx, cast, p.id);
    const board = await boardOf(p);
    const base = `/projects/${p.id}/boards/${board}/lists`;
    const ids: number[] = [];
    for (const title of ['todo', 'doing', 'review']) {
      const label = await insertLabel(s.ctx, p.id, title, { color: '#FF0000', description: `${title} things` });
      const r = await s.api('POST', base, cast.reporter, { label_id: label });
      expect(r.status).toBe(201);
      expect(r.body).toEqual({ id: expect.any(Number), label: { name: title, color: '#FF0000', description: `${title} things` }, position: ids.length });
      ids.push(r.body.id);
    }
    const list = await s.api('GET', base, cast.guest);
    expect(list.body.map((l: { id: number; position: number }) => [l.id, l.position])).toEqual([[ids[0], 0], [ids[1], 1], [ids[2], 2]]);
    const board2 = await s.api('GET', `/projects/${p.id}/boards`, cast.guest);
    expect(board2.body[0].lists).toEqual(list.body);
    const one = await s.api('GET', `${base}/${ids[1]}`, cast.guest);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: ids[1], label: { name: 'doing' }, position: 1 });

    // move the first to the end: the others shift down
    const moved = await s.api('PUT', `${base}/${ids[0]}`, cast.developer, { position: 2 });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: ids[0], position: 2 });
    expect((await s.api('GET', base, cast.guest)).body.map((l: { id: number }) => l.id)).toEqual([ids[1], ids[2], ids[0]]);
    // and back to the start: the others shift up
    expect((await s.api('PUT', `${base}/${ids[0]}`, cast.master, { position: 0 })).body.position).toBe(0);
    expect((await s.api('GET', base, cast.guest)).body.map((l: { id: number; position: number }) => [l.id, l.position])).toEqual([[ids[0], 0], [ids[1], 1], [ids[2], 2]]);

    // delete the middle one: answered as it was, the last one moves up
    const del = await s.api('DELETE', `${base}/${ids[1]}`, cast.reporter);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: ids[1], label: { name: 'doing' }, position: 1 });
    expect((await s.api('GET', base, cast.guest)).body.map((l: { id: number; position: number }) => [l.id, l.position])).toEqual([[ids[0], 0], [ids[2], 1]]);
    expect((await s.api('GET', `${base}/${ids[1]}`, cast.guest)).status).toBe(404);
    // a new list goes after the last
    const label = await insertLabel(s.ctx, p.id, 'done-ish');
    expect((await s.api('POST', base, cast.owner, { label_id: label })).body.position).toBe(2);
    // a deleted label takes its list with it
    expect((await s.api('DELETE', `/projects/${p.id}/labels?name=done-ish`, cast.owner)).status).toBe(200);
    expect((await s.api('GET', base, cast.guest)).body.map((l: { label: { name: string } }) => l.label.name)).toEqual(['todo', 'review']);
  });

  it('answers every error as 8.13 does and changes nothing', async () => {
    const p = await makeProject(s, cast.owner, 'board-errors', { visibility: 20 });
    await addCastMembers(s.ctx, cast, p.id);
    const board = await boardOf(p);
    const base = `/projects/${p.id}/boards/${board}/lists`;
    const label = await insertLabel(s.ctx, p.id, 'bug');
    const other = await makeProject(s, cast.owner, 'board-other', { visibility: 20 });
    const foreign = await insertLabel(s.ctx, other.id, 'foreign');
    const created = await s.api('POST', base, cast.reporter, { label_id: label });
    expect(created.status).toBe(201);
    const listId = created.body.id as number;
    const before = await listsOf(board);

    // the label is checked first (400), then the permission (403)
    for (const id of [foreign, 999999, 2147483648]) {
      const r = await s.api('POST', base, cast.guest, { label_id: id });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: { error: 'Label not found!' } });
    }
    expect((await s.api('POST', base, cast.guest, { label_id: label })).status).toBe(403);
    expect((await s.api('POST', base, cast.nonMember, { label_id: label })).status).toBe(403);
    expect((await s.api('POST', base, cast.reporter, {})).status).toBe(400);
    expect((await s.api('POST', base, cast.reporter, { label_id: 'x' })).status).toBe(400);
    const dup = await s.api('POST', base, cast.reporter, { label_id: label });
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({ message: { label_id: ['has already been taken'] } });
    // another board id: 404 Board
    const wrong = await s.api('GET', `/projects/${p.id}/boards/${board + 1000}/lists`, cast.reporter);
    expect(wrong.status).toBe(404);
    expect(wrong.body).toEqual({ message: '404 Board Not Found' });
    expect((await s.api('GET', `/projects/${p.id}/boards/2147483648/lists`, cast.reporter)).status).toBe(404);
    // lists: unknown, another board's, backlog/done (not shown nor moved nor deleted)
    const backlog = await s.ctx.data.get<{ id: number }>(`SELECT id FROM board_lists WHERE board_id = ? AND list_type = 'backlog'`, [board]);
    for (const id of [999999, backlog!.id]) {
      expect((await s.api('GET', `${base}/${id}`, cast.reporter)).status).toBe(404);
      expect((await s.api('PUT', `${base}/${id}`, cast.reporter, { position: 0 })).status).toBe(404);
      expect((await s.api('DELETE', `${base}/${id}`, cast.reporter)).status).toBe(404);
    }
    // moving: found first (404 above), then the permission, then the position (400 List could not be moved!)
    expect((await s.api('PUT', `${base}/${listId}`, cast.guest, { position: 0 })).status).toBe(403);
    for (const position of [0, 1, -1]) {
      const r = await s.api('PUT', `${base}/${listId}`, cast.reporter, { position });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ message: { error: 'List could not be moved!' } });
    }
    expect((await s.api('PUT', `${base}/${listId}`, cast.reporter, {})).status).toBe(400);
    // deleting: the permission first
    expect((await s.api('DELETE', `${base}/${listId}`, cast.guest)).status).toBe(403);
    expect((await s.api('DELETE', `${base}/999999`, cast.guest)).status).toBe(403);
    expect((await s.api('DELETE', `${base}/${listId}`, null)).status).toBe(401);
    expect(await listsOf(board)).toEqual(before);
  });

  it('lets reporters and up and admins write, and guests and non-members only read', async () => {
    const p = await makeProject(s, cast.owner, 'board-authz', { visibility: 20 });
    await addCastMembers(s.ctx, cast, p.id);
    const board = await boardOf(p);
    const base = `/projects/${p.id}/boards/${board}/lists`;
    for (const [i, u] of [cast.reporter, cast.developer, cast.master, cast.owner, cast.admin].entries()) {
      const label = await insertLabel(s.ctx, p.id, `l${i}`);
      const r = await s.api('POST', base, u, { label_id: label });
      expect(r.status).toBe(201);
      expect((await s.api('PUT', `${base}/${r.body.id}`, u, { position: 0 })).status).toBe(i === 0 ? 400 : 200);
      expect((await s.api('GET', `${base}/${r.body.id}`, cast.nonMember)).status).toBe(200);
    }
    const last = (await s.api('GET', base, cast.guest)).body as { id: number }[];
    expect(last).toHaveLength(5);
    for (const u of [cast.nonMember, cast.external, cast.guest]) {
      expect((await s.api('DELETE', `${base}/${last[0]!.id}`, u)).status).toBe(403);
    }
    expect((await s.api('DELETE', `${base}/${last[0]!.id}`, cast.admin)).status).toBe(200);
    // a private project hides its board from non-members (404)
    const privBoard = await boardOf(priv);
    expect((await s.api('GET', `/projects/${priv.id}/boards/${privBoard}/lists`, cast.nonMember)).status).toBe(404);
  });

  it('keeps positions 0..n-1 when lists are created and moved at once', async () => {
    const p = await makeProject(s, cast.owner, 'board-race', { visibility: 0 });
    const board = await boardOf(p);
    const base = `/projects/${p.id}/boards/${board}/lists`;
    const labels = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((t) => insertLabel(s.ctx, p.id, t)));
    const made = await Promise.all(labels.map((label_id) => s.api('POST', base, cast.owner, { label_id })));
    expect(made.every((r) => r.status === 201)).toBe(true);
    await Promise.all(made.slice(0, 3).map((r, i) => s.api('PUT', `${base}/${r.body.id}`, cast.owner, { position: 5 - i })));
    const positions = (await s.api('GET', base, cast.owner)).body.map((l: { position: number }) => l.position);
    expect(positions).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe.skipIf(!onPostgres)('two daemons on one PostgreSQL database', () => {
  it('lists created and moved through both keep positions 0..n-1 and one list per label', async () => {
    const second = await openPostgres(s.ctx.config.databaseUrl!);
    try {
      const ctx2 = { ...s.ctx, data: second.data, state: new DaemonState() };
      const p = await makeProject(s, cast.owner, 'board-two-daemons', { visibility: 0 });
      const board = await boardOf(p);
      const labels = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((t) => insertLabel(s.ctx, p.id, t)));
      // every label asked for on both daemons at once: one list each, the other answer 400 taken
      const made = await Promise.allSettled(labels.flatMap((l) => [createBoardList(s.ctx, p.id, board, l), createBoardList(ctx2, p.id, board, l)]));
      const rejected = made.filter((m): m is PromiseRejectedResult => m.status === 'rejected');
      expect(rejected).toHaveLength(labels.length);
      for (const r of rejected) expect((r.reason as { statusCode?: number }).statusCode).toBe(400);
      const ids = (await listsOf(board)).filter((l) => l.list_type === 'label');
      expect(ids.map((l) => l.position)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      const lists = await s.ctx.data.all<{ id: number }>(`SELECT id FROM board_lists WHERE board_id = ? AND list_type = 'label' ORDER BY position`, [board]);
      // (a move may find its list at its target already, shifted there by another: 400, and nothing moves)
      const moves = await Promise.allSettled(lists.slice(0, 4).map((l, i) => moveBoardList(i % 2 ? ctx2 : s.ctx, board, l.id, 7 - i)));
      for (const m of moves) if (m.status === 'rejected') expect((m.reason as { statusCode?: number }).statusCode).toBe(400);
      expect((await listsOf(board)).filter((l) => l.list_type === 'label').map((l) => l.position)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    } finally {
      await second.close();
    }
  });
});
