/**
 * The policy table of the authorization matrix: every route (method + path as the OpenAPI document or the router
 * names it) -> the ability it needs (abilities.ts, from the GitLab 8.x reference and decisions.md, never from the
 * code), and what a permitted call sends and answers. A route without a row fails the matrix; several rows of one
 * route are variants (another subject: a confidential issue, a protected branch, a fork).
 *
 * Path parameters are filled from the cell's world by name (`defaultParam`), a row's `params`, or `fresh`, which makes
 * a new object before each cell for routes that destroy or consume their subject.
 */
import type { Ability } from './abilities.js';
import { MULTIPART, receivePackRequest, uploadPackRequest } from './requests.js';
import { asRoot, fresh, freshBuild, freshGroup, freshProject, sshPublicKey, uniq, type Caller, type ProjectWorld, type Visibility, type World } from './world.js';

/** One cell: a route called by one caller on the subjects of one visibility. */
export interface Cell {
  w: World;
  vis: Visibility;
  caller: Caller;
  p: ProjectWorld;
  groupId: number;
  /** The caller's user id (0 for anonymous). */
  userId: number;
  /** A unique name part for this cell. */
  u: string;
  /** What the row's `fresh` made. */
  f: Record<string, string | number>;
}

/** One row of the table. */
export interface Row {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;
  ability: Ability;
  /** Variant name (when a route has several rows). */
  variant?: string;
  /** Success statuses of a permitted call (default: GET/PUT/DELETE 200, POST 201, PATCH 202). */
  ok?: number[];
  body?: (c: Cell) => unknown;
  query?: (c: Cell) => Record<string, string>;
  params?: (c: Cell) => Record<string, string | number>;
  /** Makes the subject a permitted call consumes (refused calls use the world's objects, or `standIn`). */
  fresh?: (c: Cell) => Promise<Record<string, string | number>>;
  /** What a refused call names instead of `fresh`'s objects, where the defaults do not fit. */
  standIn?: (c: Cell) => Record<string, string | number>;
  /** Callers the subject itself lets in (its author, assignee or awarder: 4.2's item-level rules). */
  also?: Caller[];
  /** The subject is the confidential issue (4.2: only reporters and up, its author and assignee read it). */
  confidential?: boolean;
  /** The answer is about a subject the caller just made their own (a new project, a fork): its secrets are theirs. */
  ownSubject?: boolean;
  /** The answer for a subject that is not there (default 404), e.g. an idempotent DELETE. */
  absent?: number;
  /** A POST that only reads (git-upload-pack): its cells may run together, as GETs do. */
  readOnly?: boolean;
  /** Only these visibilities (rows that repeat another route's handler, e.g. archive formats). */
  visibilities?: Visibility[];
  /** Raw request body and content type (multipart, git protocol). */
  raw?: (c: Cell) => { payload: Buffer | string; contentType: string };
  /** Why the row is what it is, where not plain from the reference. */
  why?: string;
}

const V3 = '/api/v3';
const P = `${V3}/projects/{id}`;

/** A fresh user's pending access request to a project or group; returns the user's id. */
async function freshAccessRequest(c: Cell, type: 'Project' | 'Namespace', id: number): Promise<number> {
  const userId = await fresh.user(c.w);
  await c.w.s.ctx.data.run(`INSERT INTO access_requests (source_type, source_id, user_id, requested_at) VALUES (?, ?, ?, ?)`, [type, id, userId, new Date().toISOString()]);
  return userId;
}
/** A fresh label of the cell's project; returns its id. */
async function freshLabelId(c: Cell): Promise<number> {
  return (await asRoot(c.w, 'POST', `/projects/${c.p.id}/labels`, { name: uniq(c.w, 'board'), color: '#00FF00' })).id as number;
}
/** A fresh label list at the end of the cell's project's board; returns its id. */
async function freshBoardList(c: Cell): Promise<number> {
  return (await asRoot(c.w, 'POST', `/projects/${c.p.id}/boards/${c.p.boardId}/lists`, { label_id: await freshLabelId(c) })).id as number;
}

/** Rows of the issue and merge request notes and award emoji routes (the same rules under both). */
function noteableRows(kind: 'issues' | 'merge_requests', idParam: string): Row[] {
  const base = `${P}/${kind}/{${idParam}}`;
  const read: Ability = kind === 'issues' ? 'read_issue' : 'read_merge_request';
  const awardPath = (c: Cell, note: boolean) => `/projects/${c.p.id}/${kind}/${kind === 'issues' ? c.p.issueId : c.p.mergeRequestId}${note ? `/notes/${kind === 'issues' ? c.p.issueNoteId : c.p.mrNoteId}` : ''}`;
  return [
    { method: 'GET', path: `${base}/notes`, ability: 'read_note' },
    { method: 'POST', path: `${base}/notes`, ability: 'create_note', body: (c) => ({ body: `note ${c.u}` }) },
    { method: 'GET', path: `${base}/notes/{note_id}`, ability: 'read_note' },
    { method: 'PUT', path: `${base}/notes/{note_id}`, ability: 'admin_note', body: (c) => ({ body: `edited ${c.u}` }) },
    { method: 'DELETE', path: `${base}/notes/{note_id}`, ability: 'admin_note', fresh: async (c) => ({ note_id: await fresh.note(c.w, c.p, kind) }) },
    { method: 'GET', path: `${base}/award_emoji`, ability: read },
    { method: 'POST', path: `${base}/award_emoji`, ability: read, body: (c) => ({ name: AWARD_OF[c.caller] }), ok: [201], why: '2.11: anyone who can read the target may award' },
    { method: 'GET', path: `${base}/award_emoji/{award_id}`, ability: read },
    { method: 'DELETE', path: `${base}/award_emoji/{award_id}`, ability: 'destroy_award', fresh: async (c) => ({ award_id: await fresh.award(c.w, awardPath(c, false)) }) },
    { method: 'GET', path: `${base}/notes/{note_id}/award_emoji`, ability: 'read_note' },
    { method: 'POST', path: `${base}/notes/{note_id}/award_emoji`, ability: 'read_note', body: (c) => ({ name: AWARD_OF[c.caller] }) },
    { method: 'GET', path: `${base}/notes/{note_id}/award_emoji/{award_id}`, ability: 'read_note' },
    { method: 'DELETE', path: `${base}/notes/{note_id}/award_emoji/{award_id}`, ability: 'destroy_award', fresh: async (c) => ({ award_id: await fresh.award(c.w, awardPath(c, true)) }) },
  ];
}

/** Rows of the project snippet routes (8.13 project_snippets.rb), their notes and award emoji (notes.rb, award_emoji.rb). */
function snippetRows(): Row[] {
  const one = `${P}/snippets/{snippet_id}`;
  const ids = (c: Cell) => ({ snippet_id: c.p.snippetId, note_id: c.p.snippetNoteId });
  const awardIds = (note: boolean) => (c: Cell) => ({ ...ids(c), award_id: note ? c.p.snippetNoteAwardId : c.p.snippetAwardId });
  const awardPath = (c: Cell, note: boolean) => `/projects/${c.p.id}/snippets/${c.p.snippetId}${note ? `/notes/${c.p.snippetNoteId}` : ''}`;
  const awards = (note: boolean): Row[] => {
    const base = `${one}${note ? '/notes/{note_id}' : ''}/award_emoji`;
    return [
      { method: 'GET', path: base, ability: 'read_project_snippet', params: ids },
      { method: 'POST', path: base, ability: 'read_project_snippet', params: ids, body: (c) => ({ name: AWARD_OF[c.caller] }), ok: [201], why: 'anyone who reads the snippet may award' },
      { method: 'GET', path: `${base}/{award_id}`, ability: 'read_project_snippet', params: awardIds(note) },
      {
        method: 'DELETE', path: `${base}/{award_id}`, ability: 'destroy_snippet_award', params: awardIds(note),
        fresh: async (c) => ({ award_id: await fresh.award(c.w, awardPath(c, note)) }),
      },
    ];
  };
  return [
    { method: 'GET', path: `${P}/snippets`, ability: 'read_project_snippet' },
    {
      method: 'POST', path: `${P}/snippets`, ability: 'create_project_snippet',
      body: (c) => ({ title: `snippet ${c.u}`, file_name: 'a.rb', code: 'puts 1', visibility_level: 0 }),
    },
    { method: 'GET', path: one, ability: 'read_project_snippet', params: ids },
    { method: 'GET', path: `${one}/raw`, ability: 'read_project_snippet', params: ids },
    { method: 'PUT', path: one, ability: 'update_project_snippet', params: ids, body: (c) => ({ title: `edited ${c.u}` }) },
    { method: 'DELETE', path: one, ability: 'update_project_snippet', params: ids, fresh: async (c) => ({ snippet_id: await fresh.snippet(c.w, c.p, c.vis) }) },
    { method: 'GET', path: `${one}/notes`, ability: 'read_project_snippet', params: ids },
    { method: 'POST', path: `${one}/notes`, ability: 'create_snippet_note', params: ids, body: (c) => ({ body: `note ${c.u}` }) },
    { method: 'GET', path: `${one}/notes/{note_id}`, ability: 'read_project_snippet', params: ids },
    { method: 'PUT', path: `${one}/notes/{note_id}`, ability: 'admin_snippet_note', params: ids, body: (c) => ({ body: `edited ${c.u}` }) },
    { method: 'DELETE', path: `${one}/notes/{note_id}`, ability: 'admin_snippet_note', params: ids, fresh: async (c) => ({ note_id: await fresh.snippetNote(c.w, c.p) }) },
    ...awards(false),
    ...awards(true),
  ];
}

/** A different emoji per caller, so that every permitted award in a cell is a new one. */
const AWARD_OF: Record<Caller, string> = {
  anonymous: 'a', blocked: 'b', nonMember: 'smile', external: 'heart', guest: 'rocket', reporter: 'eyes', developer: 'fire', master: 'star', owner: 'clap', admin: 'wave',
};

/**
 * Rows of the merge request routes served under `merge_requests` and the deprecated singular `merge_request`. The
 * singular ones are aliases of the plural routes' handlers (decisions.md "deprecated singular merge request routes"):
 * their private project's cells, where every kind of refusal happens, are enough.
 */
function mergeRequestRows(segment: 'merge_requests' | 'merge_request'): Row[] {
  const base = `${P}/${segment}/{merge_request_id}`;
  const alias = segment === 'merge_request' ? { visibilities: [0] as Visibility[] } : {};
  return (<Row[]>[
    { method: 'GET', path: base, ability: 'read_merge_request' },
    { method: 'PUT', path: base, ability: 'update_merge_request', body: (c) => ({ description: `edited ${c.u}` }) },
    { method: 'GET', path: `${base}/commits`, ability: 'read_merge_request' },
    { method: 'GET', path: `${base}/changes`, ability: 'read_merge_request' },
    { method: 'GET', path: `${base}/closes_issues`, ability: 'read_merge_request' },
    { method: 'GET', path: `${base}/comments`, ability: 'read_merge_request' },
    { method: 'POST', path: `${base}/comments`, ability: 'create_note', body: (c) => ({ note: `comment ${c.u}` }) },
    {
      method: 'PUT', path: `${base}/merge`, ability: 'merge_unprotected', fresh: async (c) => ({ merge_request_id: await fresh.mergeRequest(c.w, c.p, 'dev') }),
      why: 'a new merge request into the unprotected `dev` per cell',
    },
    ...(['PUT', 'POST'] as const).map((method): Row => ({
      method, path: `${base}/cancel_merge_when_build_succeeds`, ability: 'cancel_merge', ok: [406],
      why: 'the merge request is not set to merge when the build succeeds: 406 once the caller passed the checks (decisions.md)',
    })),
  ]).map((row) => ({ ...row, ...alias }));
}

/** The table. */
export const POLICY_TABLE: Row[] = [
  // session and users (reference 2.1; CONTRACT.md bootstrap)
  { method: 'POST', path: `${V3}/session`, ability: 'public', body: () => ({ login: 'mxguest', password: 'password123' }) },
  { method: 'GET', path: `${V3}/user`, ability: 'user' },
  { method: 'GET', path: `${V3}/version`, ability: 'user' },
  { method: 'GET', path: `${V3}/templates/licenses`, ability: 'public' },
  { method: 'GET', path: `${V3}/templates/licenses/{name}`, ability: 'public', params: () => ({ name: 'mit' }) },
  { method: 'GET', path: `${V3}/licenses`, ability: 'public' },
  { method: 'GET', path: `${V3}/licenses/{name}`, ability: 'public', params: () => ({ name: 'mit' }) },
  { method: 'GET', path: `${V3}/templates/gitignores`, ability: 'public' },
  { method: 'GET', path: `${V3}/templates/gitignores/{name}`, ability: 'public', params: () => ({ name: 'Ruby' }) },
  { method: 'GET', path: `${V3}/templates/gitlab_ci_ymls`, ability: 'public' },
  { method: 'GET', path: `${V3}/templates/gitlab_ci_ymls/{name}`, ability: 'public', params: () => ({ name: 'Ruby' }) },
  { method: 'GET', path: `${V3}/gitignores`, ability: 'public' },
  { method: 'GET', path: `${V3}/gitignores/{name}`, ability: 'public', params: () => ({ name: 'Ruby' }) },
  { method: 'GET', path: `${V3}/gitlab_ci_ymls`, ability: 'public' },
  { method: 'GET', path: `${V3}/gitlab_ci_ymls/{name}`, ability: 'public', params: () => ({ name: 'Ruby' }) },
  { method: 'GET', path: `${V3}/users`, ability: 'user' },
  { method: 'POST', path: `${V3}/users`, ability: 'admin', body: (c) => ({ username: c.u, email: `${c.u}@example.com`, name: c.u, password: 'password123' }) },
  { method: 'GET', path: `${V3}/users/{id}`, ability: 'user', params: (c) => ({ id: c.w.cast.guest.id }) },
  { method: 'PUT', path: `${V3}/users/{id}`, ability: 'admin', body: () => ({ bio: 'edited' }), fresh: async (c) => ({ id: await fresh.user(c.w) }) },
  { method: 'DELETE', path: `${V3}/users/{id}`, ability: 'admin', fresh: async (c) => ({ id: await fresh.user(c.w) }) },
  { method: 'PUT', path: `${V3}/users/{id}/block`, ability: 'admin', fresh: async (c) => ({ id: await fresh.user(c.w) }) },
  { method: 'PUT', path: `${V3}/users/{id}/unblock`, ability: 'admin', fresh: async (c) => ({ id: await fresh.user(c.w) }) },
  { method: 'GET', path: `${V3}/user/personal_access_tokens`, ability: 'user' },
  { method: 'POST', path: `${V3}/user/personal_access_tokens`, ability: 'user', body: (c) => ({ name: c.u }) },
  { method: 'GET', path: `${V3}/user/personal_access_tokens/{token_id}`, ability: 'own' },
  { method: 'DELETE', path: `${V3}/user/personal_access_tokens/{token_id}`, ability: 'own', fresh: async (c) => ({ token_id: await fresh.token(c.w) }) },
  { method: 'GET', path: `${V3}/users/{id}/personal_access_tokens`, ability: 'self' },
  { method: 'POST', path: `${V3}/users/{id}/personal_access_tokens`, ability: 'self', body: (c) => ({ name: c.u }) },
  { method: 'GET', path: `${V3}/users/{id}/personal_access_tokens/{token_id}`, ability: 'self' },
  { method: 'DELETE', path: `${V3}/users/{id}/personal_access_tokens/{token_id}`, ability: 'self', fresh: async (c) => ({ token_id: await fresh.token(c.w) }) },
  { method: 'GET', path: `${V3}/application/settings`, ability: 'admin' },
  { method: 'PUT', path: `${V3}/application/settings`, ability: 'admin', body: () => ({ home_page_url: 'http://home.example' }) },

  // projects (spec "Projects"; reference 2.15, 4.2)
  { method: 'GET', path: `${V3}/projects`, ability: 'user' },
  { method: 'POST', path: `${V3}/projects`, ability: 'user', body: (c) => ({ name: c.u }), ownSubject: true },
  { method: 'GET', path: `${V3}/projects/owned`, ability: 'user' },
  { method: 'GET', path: `${V3}/projects/starred`, ability: 'user' },
  { method: 'GET', path: `${V3}/projects/visible`, ability: 'user' },
  { method: 'GET', path: `${V3}/projects/all`, ability: 'admin' },
  { method: 'GET', path: `${V3}/projects/search/{query}`, ability: 'user', params: () => ({ query: 'mx' }) },
  { method: 'GET', path: P, ability: 'read_project' },
  { method: 'PUT', path: P, ability: 'admin_project', body: (c) => ({ description: `by ${c.u}` }) },
  { method: 'DELETE', path: P, ability: 'remove_project', fresh: async (c) => ({ id: (await freshProject(c.w, c.vis)).id }) },
  { method: 'POST', path: `${V3}/projects/user/{user_id}`, ability: 'admin', params: (c) => ({ user_id: c.w.cast.guest.id }), body: (c) => ({ name: c.u }) },
  {
    method: 'POST', path: `${V3}/projects/fork/{id}`, ability: 'fork_project', ok: [201, 409], ownSubject: true,
    why: "the owner's namespace already holds the project's path: 409 (reference 2.15)",
  },
  { method: 'DELETE', path: `${P}/fork`, ability: 'remove_fork_project', ok: [304], why: 'not a fork: 304' },
  {
    method: 'DELETE', path: `${P}/fork`, variant: 'fork', ability: 'remove_fork_project', ok: [200],
    fresh: async (c) => {
      const fork = await freshProject(c.w, c.vis);
      await c.w.s.ctx.data.run(`UPDATE projects SET forked_from_id = ? WHERE id = ?`, [c.p.id, fork.id]);
      return { id: fork.id };
    },
  },
  {
    method: 'POST', path: `${P}/fork/{forked_from_id}`, ability: 'admin', params: (c) => ({ forked_from_id: c.w.moveTargetId }),
    fresh: async (c) => ({ id: (await freshProject(c.w, c.vis)).id }), why: "8.x's authenticated_as_admin!: only administrators link a fork",
  },
  { method: 'GET', path: `${P}/users`, ability: 'read_project' },
  { method: 'POST', path: `${P}/star`, ability: 'read_project', ok: [201, 304] },
  { method: 'DELETE', path: `${P}/star`, ability: 'read_project', ok: [200, 304] },
  { method: 'POST', path: `${P}/archive`, ability: 'archive_project', fresh: async (c) => ({ id: (await freshProject(c.w, c.vis)).id }) },
  { method: 'POST', path: `${P}/unarchive`, ability: 'archive_project' },
  { method: 'POST', path: `${P}/share`, ability: 'admin_project', ok: [201, 409], body: (c) => ({ group_id: c.w.shareGroupId, group_access: 10 }), why: 'shared already: 409' },
  {
    method: 'POST', path: `${P}/share`, variant: 'hidden group', ability: 'share_with_hidden_group', ok: [201, 409],
    body: (c) => ({ group_id: c.w.hiddenGroupId, group_access: 10 }),
  },
  {
    method: 'DELETE', path: `${P}/share/{group_id}`, ability: 'admin_project', ok: [200, 204],
    fresh: async (c) => {
      const t = new Date().toISOString();
      await c.w.s.ctx.data.run(`INSERT INTO project_group_links (project_id, group_id, group_access, created_at, updated_at) VALUES (?, ?, 10, ?, ?)
        ON CONFLICT (project_id, group_id) DO NOTHING`, [c.p.id, c.w.shareGroupId, t, t]);
      return { group_id: c.w.shareGroupId };
    },
  },
  { method: 'GET', path: `${P}/hooks`, ability: 'admin_project' },
  { method: 'POST', path: `${P}/hooks`, ability: 'admin_project', body: (c) => ({ url: `http://hooks.invalid/${c.u}` }) },
  { method: 'GET', path: `${P}/hooks/{hook_id}`, ability: 'admin_project' },
  { method: 'PUT', path: `${P}/hooks/{hook_id}`, ability: 'admin_project', body: (c) => ({ url: `http://hooks.invalid/${c.u}` }) },
  {
    method: 'DELETE', path: `${P}/hooks/{hook_id}`, ability: 'admin_project', fresh: async (c) => ({ hook_id: await fresh.hook(c.w, c.p) }), absent: 200,
    why: 'decisions.md "hook DELETE of an absent hook": 200 with an empty body (the spec)',
  },
  { method: 'GET', path: `${P}/events`, ability: 'read_project' },
  { method: 'POST', path: `${P}/uploads`, ability: 'upload_file', raw: (c) => MULTIPART('file', `${c.u}.txt`, 'hello') },

  // groups and namespaces (reference 4.3)
  { method: 'GET', path: `${V3}/groups`, ability: 'user' },
  { method: 'POST', path: `${V3}/groups`, ability: 'user', body: (c) => ({ name: c.u, path: c.u }), why: 'can_create_group is on for the cast (4.3 create_group)' },
  { method: 'GET', path: `${V3}/groups/{id}`, ability: 'read_group' },
  { method: 'PUT', path: `${V3}/groups/{id}`, ability: 'admin_group', body: (c) => ({ description: `by ${c.u}` }) },
  { method: 'DELETE', path: `${V3}/groups/{id}`, ability: 'admin_group', fresh: async (c) => ({ id: await freshGroup(c.w, c.vis) }) },
  { method: 'GET', path: `${V3}/groups/{id}/projects`, ability: 'read_group' },
  { method: 'GET', path: `${V3}/groups/{id}`, variant: 'private group with a public project', ability: 'read_group_via_project', params: (c) => ({ id: c.w.publicHostGroupId }) },
  { method: 'GET', path: `${V3}/groups/{id}/projects`, variant: 'private group with a public project', ability: 'read_group_via_project', params: (c) => ({ id: c.w.publicHostGroupId }) },
  {
    method: 'POST', path: `${V3}/groups/{id}/projects/{project_id}`, ability: 'admin', fresh: async (c) => ({ project_id: (await freshProject(c.w, c.vis)).id }),
    why: 'spec "Groups": transfer is administrator only',
  },
  { method: 'GET', path: `${V3}/groups/{id}/issues`, ability: 'read_group' },
  ...(['', '/issues', '/projects'] as const).map((tail): Row => ({
    method: 'GET', path: `${V3}/groups/{id}${tail}`, variant: "the private projects' group", ability: 'read_group', visibilities: [0],
    params: (c) => ({ id: c.w.privateGroupId }), why: 'the group holding the private projects and their confidential issues (a leak shows in the answer check)',
  })),
  { method: 'GET', path: `${V3}/namespaces`, ability: 'user' },

  // members (reference 2.3)
  { method: 'GET', path: `${P}/members`, ability: 'read_project_member' },
  { method: 'POST', path: `${P}/members`, ability: 'admin_project_member', fresh: async (c) => ({ user: await fresh.user(c.w) }), standIn: (c) => ({ user: c.w.spareUserId }), body: (c) => ({ user_id: c.f.user, access_level: 20 }) },
  { method: 'GET', path: `${P}/members/{user_id}`, ability: 'read_project_member', why: 'the spare user: a direct member (8.x lists direct members only)' },
  { method: 'PUT', path: `${P}/members/{user_id}`, ability: 'admin_project_member', body: () => ({ access_level: 20 }), fresh: async (c) => ({ user_id: await fresh.member(c.w, { type: 'Project', id: c.p.id }) }) },
  { method: 'DELETE', path: `${P}/members/{user_id}`, ability: 'admin_project_member', fresh: async (c) => ({ user_id: await fresh.member(c.w, { type: 'Project', id: c.p.id }) }) },
  { method: 'GET', path: `${V3}/groups/{id}/members`, ability: 'read_group' },
  { method: 'POST', path: `${V3}/groups/{id}/members`, ability: 'admin_group_member', fresh: async (c) => ({ user: await fresh.user(c.w) }), standIn: (c) => ({ user: c.w.spareUserId }), body: (c) => ({ user_id: c.f.user, access_level: 20 }) },
  { method: 'GET', path: `${V3}/groups/{id}/members/{user_id}`, ability: 'read_group', params: (c) => ({ user_id: c.w.cast.guest.id }) },
  { method: 'PUT', path: `${V3}/groups/{id}/members/{user_id}`, ability: 'admin_group_member', body: () => ({ access_level: 20 }), fresh: async (c) => ({ user_id: await fresh.member(c.w, { type: 'Namespace', id: c.groupId }) }) },
  { method: 'DELETE', path: `${V3}/groups/{id}/members/{user_id}`, ability: 'admin_group_member', fresh: async (c) => ({ user_id: await fresh.member(c.w, { type: 'Namespace', id: c.groupId }) }) },

  // repository (reference 2.7-2.9): reads need download_code, writes push_code; `dev` is unprotected, `master` is
  // protected by default_branch_protection and `protected` by a rule
  { method: 'GET', path: `${P}/repository/files`, ability: 'download_code', query: () => ({ file_path: 'README.md', ref: 'master' }) },
  { method: 'POST', path: `${P}/repository/files`, ability: 'push_code', body: (c) => ({ file_path: `${c.u}.txt`, branch_name: 'dev', content: 'x', commit_message: 'add' }) },
  {
    method: 'POST', path: `${P}/repository/files`, variant: 'protected branch', ability: 'push_code_to_protected_branches',
    body: (c) => ({ file_path: `${c.u}.txt`, branch_name: 'protected', content: 'x', commit_message: 'add' }),
  },
  { method: 'PUT', path: `${P}/repository/files`, ability: 'push_code', body: (c) => ({ file_path: 'README.md', branch_name: 'dev', content: `readme ${c.u}`, commit_message: 'edit' }) },
  {
    method: 'DELETE', path: `${P}/repository/files`, ability: 'push_code', fresh: async (c) => ({ file: await fresh.file(c.w, c.p) }), standIn: () => ({ file: 'docs/a.txt' }),
    body: (c) => ({ file_path: c.f.file, branch_name: 'dev', commit_message: 'remove' }),
  },
  { method: 'GET', path: `${P}/repository/commits`, ability: 'download_code' },
  { method: 'GET', path: `${P}/repository/commits/{sha}`, ability: 'download_code' },
  { method: 'GET', path: `${P}/repository/commits/{sha}/diff`, ability: 'download_code' },
  { method: 'GET', path: `${P}/repository/commits/{sha}/blob`, ability: 'download_code', query: () => ({ filepath: 'README.md' }) },
  { method: 'GET', path: `${P}/repository/commits/{sha}/comments`, ability: 'download_code' },
  { method: 'POST', path: `${P}/repository/commits/{sha}/comments`, ability: 'download_code', body: (c) => ({ note: `comment ${c.u}` }), why: '8.12 commits.rb: the whole resource authorizes download_code' },
  { method: 'GET', path: `${P}/repository/branches`, ability: 'download_code' },
  { method: 'POST', path: `${P}/repository/branches`, ability: 'push_code', body: (c) => ({ branch_name: c.u, ref: 'master' }) },
  { method: 'GET', path: `${P}/repository/branches/{*}`, ability: 'download_code', params: () => ({ '*': 'dev' }) },
  { method: 'DELETE', path: `${P}/repository/branches/{*}`, ability: 'push_code', fresh: async (c) => ({ '*': await fresh.branch(c.w, c.p) }) },
  { method: 'PUT', path: `${P}/repository/branches/{*}`, variant: 'protect', ability: 'admin_project', params: () => ({ '*': 'prot-target/protect' }) },
  { method: 'PUT', path: `${P}/repository/branches/{*}`, variant: 'unprotect', ability: 'admin_project', params: () => ({ '*': 'prot-target/unprotect' }) },
  { method: 'GET', path: `${P}/repository/tags`, ability: 'download_code' },
  { method: 'POST', path: `${P}/repository/tags`, ability: 'push_code', body: (c) => ({ tag_name: c.u, ref: 'master' }) },
  { method: 'GET', path: `${P}/repository/tags/{*}`, ability: 'download_code', params: () => ({ '*': 'v1' }) },
  { method: 'DELETE', path: `${P}/repository/tags/{*}`, ability: 'push_code', fresh: async (c) => ({ '*': await fresh.tag(c.w, c.p) }) },
  {
    method: 'POST', path: `${P}/repository/tags/{*}`, variant: 'release', ability: 'push_code', body: () => ({ description: 'notes' }),
    fresh: async (c) => ({ '*': `${await fresh.tag(c.w, c.p)}/release` }),
  },
  { method: 'PUT', path: `${P}/repository/tags/{*}`, variant: 'release', ability: 'push_code', params: () => ({ '*': 'v1/release' }), body: (c) => ({ description: `notes ${c.u}` }) },
  { method: 'GET', path: `${P}/repository/tree`, ability: 'download_code' },
  { method: 'GET', path: `${P}/repository/blobs/{sha}`, ability: 'download_code', query: () => ({ filepath: 'README.md' }) },
  { method: 'GET', path: `${P}/repository/raw_blobs/{sha}`, ability: 'download_code', fresh: async (c) => ({ sha: await blobSha(c) }) },
  { method: 'GET', path: `${P}/repository/archive`, ability: 'download_code' },
  ...['zip', 'tar', 'tar.gz', 'tgz', 'gz', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2'].map((format): Row => ({
    method: 'GET', path: `${P}/repository/archive.${format}`, ability: 'download_code', visibilities: [0],
    why: "the archive route's handler with a format: its private-project cells (every refusal kind) are enough",
  })),
  { method: 'GET', path: `${P}/repository/compare`, ability: 'download_code', query: () => ({ from: 'master', to: 'feature' }) },
  { method: 'GET', path: `${P}/repository/contributors`, ability: 'download_code' },

  // builds, pipelines, statuses (reference 4.2; decisions.md "build play permission": update_build)
  { method: 'GET', path: `${P}/builds`, ability: 'read_build' },
  { method: 'GET', path: `${P}/repository/commits/{sha}/builds`, ability: 'read_build' },
  { method: 'GET', path: `${P}/builds/{build_id}`, ability: 'read_build' },
  { method: 'GET', path: `${P}/builds/{build_id}/artifacts`, ability: 'read_build' },
  { method: 'GET', path: `${P}/builds/artifacts/{ref_name}/download`, ability: 'read_build', params: () => ({ ref_name: 'master' }), query: () => ({ job: 'rspec' }) },
  { method: 'GET', path: `${P}/builds/{build_id}/trace`, ability: 'read_build' },
  { method: 'POST', path: `${P}/builds/{build_id}/cancel`, ability: 'update_build' },
  { method: 'POST', path: `${P}/builds/{build_id}/retry`, ability: 'update_build', fresh: async (c) => ({ build_id: await freshBuild(c.w, c.p) }) },
  { method: 'POST', path: `${P}/builds/{build_id}/erase`, ability: 'update_build', fresh: async (c) => ({ build_id: await freshBuild(c.w, c.p, { artifacts: true }) }) },
  { method: 'POST', path: `${P}/builds/{build_id}/artifacts/keep`, ability: 'update_build', ok: [200] },
  {
    method: 'POST', path: `${P}/builds/{build_id}/play`, ability: 'update_build', ok: [200],
    fresh: async (c) => ({ build_id: await freshBuild(c.w, c.p, { status: 'skipped', when: 'manual' }) }),
  },
  { method: 'GET', path: `${P}/pipelines`, ability: 'read_pipeline' },
  { method: 'GET', path: `${P}/pipelines/{pipeline_id}`, ability: 'read_pipeline' },
  { method: 'POST', path: `${P}/pipelines/{pipeline_id}/retry`, ability: 'update_pipeline' },
  { method: 'POST', path: `${P}/pipelines/{pipeline_id}/cancel`, ability: 'update_pipeline', ok: [200] },
  { method: 'POST', path: `${P}/statuses/{sha}`, ability: 'create_commit_status', body: (c) => ({ state: 'success', name: c.u }) },
  { method: 'GET', path: `${P}/repository/commits/{sha}/statuses`, ability: 'read_commit_status' },

  // runners (8.12 runners.rb: shared runners readable by all, specific ones by admins and masters of their projects)
  { method: 'GET', path: `${V3}/runners`, ability: 'user' },
  { method: 'GET', path: `${V3}/runners/all`, ability: 'admin' },
  { method: 'GET', path: `${V3}/runners/{id}`, ability: 'read_runner' },
  { method: 'PUT', path: `${V3}/runners/{id}`, ability: 'read_runner', body: (c) => ({ description: `by ${c.u}` }) },
  { method: 'DELETE', path: `${V3}/runners/{id}`, ability: 'read_runner', fresh: async (c) => ({ id: await fresh.runner(c.w, [c.p.id]) }) },
  { method: 'GET', path: `${P}/runners`, ability: 'admin_project' },
  {
    method: 'POST', path: `${P}/runners`, ability: 'admin_project', fresh: async (c) => ({ runner: await fresh.runner(c.w, [c.w.sideProjectId]) }),
    standIn: (c) => ({ runner: c.w.sideRunnerId }),
    body: (c) => ({ runner_id: c.f.runner }), why: "the runner is one of the side project's, which owner and master master",
  },
  { method: 'DELETE', path: `${P}/runners/{runner_id}`, ability: 'admin_project', fresh: async (c) => ({ runner_id: await fresh.runner(c.w, [c.w.sideProjectId, c.p.id]) }) },

  // variables (reference 2.13: master and up)
  { method: 'GET', path: `${P}/variables`, ability: 'admin_build' },
  { method: 'POST', path: `${P}/variables`, ability: 'admin_build', body: (c) => ({ key: `K_${c.u}`, value: 'v' }) },
  { method: 'GET', path: `${P}/variables/{key}`, ability: 'admin_build', params: () => ({ key: 'SECRET' }) },
  { method: 'PUT', path: `${P}/variables/{key}`, ability: 'admin_build', params: () => ({ key: 'SECRET' }), body: (c) => ({ value: c.u }) },
  { method: 'DELETE', path: `${P}/variables/{key}`, ability: 'admin_build', fresh: async (c) => ({ key: await fresh.variable(c.w, c.p) }) },
  // environments and deployments (GitLab 8.13 environments.rb, deployments.rb and ProjectPolicy)
  { method: 'GET', path: `${P}/environments`, ability: 'read_environment' },
  { method: 'POST', path: `${P}/environments`, ability: 'create_environment', body: (c) => ({ name: `env-${c.u}` }) },
  {
    method: 'PUT', path: `${P}/environments/{environment_id}`, ability: 'update_environment',
    params: (c) => ({ environment_id: c.p.environmentId }), body: (c) => ({ external_url: `https://${c.u}.example.com` }),
  },
  {
    method: 'DELETE', path: `${P}/environments/{environment_id}`, ability: 'update_environment',
    fresh: async (c) => ({ environment_id: await fresh.environment(c.w, c.p) }), standIn: (c) => ({ environment_id: c.p.environmentId }),
  },
  { method: 'GET', path: `${P}/deployments`, ability: 'read_deployment' },
  { method: 'GET', path: `${P}/deployments/{deployment_id}`, ability: 'read_deployment', params: (c) => ({ deployment_id: c.p.deploymentId }) },

  // build triggers (8.13 triggers.rb: admin_build, master and up); trigger/builds takes the trigger token, no user
  { method: 'GET', path: `${P}/triggers`, ability: 'admin_build' },
  { method: 'POST', path: `${P}/triggers`, ability: 'admin_build' },
  { method: 'GET', path: `${P}/triggers/{token}`, ability: 'admin_build' },
  { method: 'DELETE', path: `${P}/triggers/{token}`, ability: 'admin_build', fresh: async (c) => ({ token: (await asRoot(c.w, 'POST', `/projects/${c.p.id}/triggers`)).token }) },
  {
    method: 'POST', path: `${P}/trigger/builds`, ability: 'public', body: (c) => ({ token: c.p.triggerToken, ref: 'master' }),
    why: "8.13: the trigger token is the credential; anyone holding it starts a pipeline, on any visibility (a user's token is no trigger token: test/api/triggers.test.ts)",
  },

  // access requests (8.13 access_requests.rb): listed, approved and denied by who manages the members; the subject of
  // an approval or denial is a fresh user's request, refused calls name the spare user (a member, no request)
  { method: 'GET', path: `${P}/access_requests`, ability: 'admin_project_member' },
  { method: 'POST', path: `${P}/access_requests`, ability: 'request_project_access' },
  {
    method: 'PUT', path: `${P}/access_requests/{user_id}/approve`, ability: 'admin_project_member', ok: [201], body: () => ({ access_level: 20 }),
    fresh: async (c) => ({ user_id: await freshAccessRequest(c, 'Project', c.p.id) }),
  },
  { method: 'DELETE', path: `${P}/access_requests/{user_id}`, ability: 'admin_project_member', fresh: async (c) => ({ user_id: await freshAccessRequest(c, 'Project', c.p.id) }) },
  { method: 'GET', path: `${V3}/groups/{id}/access_requests`, ability: 'admin_group_member' },
  { method: 'POST', path: `${V3}/groups/{id}/access_requests`, ability: 'request_group_access' },
  {
    method: 'PUT', path: `${V3}/groups/{id}/access_requests/{user_id}/approve`, ability: 'admin_group_member', ok: [201], body: () => ({ access_level: 20 }),
    fresh: async (c) => ({ user_id: await freshAccessRequest(c, 'Namespace', c.groupId) }),
  },
  {
    method: 'DELETE', path: `${V3}/groups/{id}/access_requests/{user_id}`, ability: 'admin_group_member',
    fresh: async (c) => ({ user_id: await freshAccessRequest(c, 'Namespace', c.groupId) }),
  },

  // issue boards (8.13 boards.rb: read_board for guests and whoever sees the project, admin_list for reporters and up);
  // writes take a fresh label's list, refused ones the world's list of the label `bug`
  { method: 'GET', path: `${P}/boards`, ability: 'read_board' },
  { method: 'GET', path: `${P}/boards/{board_id}/lists`, ability: 'read_board', params: (c) => ({ board_id: c.p.boardId }) },
  { method: 'GET', path: `${P}/boards/{board_id}/lists/{list_id}`, ability: 'read_board', params: (c) => ({ board_id: c.p.boardId, list_id: c.p.boardListId }) },
  {
    method: 'POST', path: `${P}/boards/{board_id}/lists`, ability: 'admin_list', params: (c) => ({ board_id: c.p.boardId }),
    fresh: async (c) => ({ label: await freshLabelId(c) }), standIn: (c) => ({ label: c.p.labelId }), body: (c) => ({ label_id: c.f.label }),
  },
  {
    method: 'PUT', path: `${P}/boards/{board_id}/lists/{list_id}`, ability: 'admin_list', body: () => ({ position: 0 }),
    fresh: async (c) => ({ board_id: c.p.boardId, list_id: await freshBoardList(c) }), standIn: (c) => ({ board_id: c.p.boardId, list_id: c.p.boardListId }),
    why: 'a fresh list (at the end) moved to the start; the world list of `bug` for refused calls (found, then refused)',
  },
  {
    method: 'DELETE', path: `${P}/boards/{board_id}/lists/{list_id}`, ability: 'admin_list',
    fresh: async (c) => ({ board_id: c.p.boardId, list_id: await freshBoardList(c) }), standIn: (c) => ({ board_id: c.p.boardId, list_id: c.p.boardListId }),
  },

  // issues (reference 4.2; issue move: admin_issue on the source, create_issue on the target)
  { method: 'GET', path: `${V3}/issues`, ability: 'user' },
  { method: 'GET', path: `${P}/issues`, ability: 'read_issue' },
  { method: 'POST', path: `${P}/issues`, ability: 'create_issue', body: (c) => ({ title: `issue ${c.u}` }) },
  { method: 'GET', path: `${P}/issues/{issue_id}`, ability: 'read_issue' },
  { method: 'GET', path: `${P}/issues/{issue_id}`, variant: 'confidential', ability: 'read_issue', confidential: true, params: (c) => ({ issue_id: c.p.confidentialIssueId }) },
  { method: 'PUT', path: `${P}/issues/{issue_id}`, ability: 'update_issue', body: (c) => ({ description: `edited ${c.u}` }) },
  { method: 'DELETE', path: `${P}/issues/{issue_id}`, ability: 'destroy_issue', fresh: async (c) => ({ issue_id: await fresh.issue(c.w, c.p) }) },
  {
    method: 'POST', path: `${P}/issues/{issue_id}/move`, ability: 'move_issue', fresh: async (c) => ({ issue_id: await fresh.issue(c.w, c.p) }),
    body: (c) => ({ to_project_id: c.w.moveTargetId }),
  },
  { method: 'POST', path: `${P}/issues/{issue_id}/subscription`, ability: 'read_issue', ok: [201, 304] },
  { method: 'DELETE', path: `${P}/issues/{issue_id}/subscription`, ability: 'read_issue', ok: [200, 304] },
  { method: 'POST', path: `${P}/issues/{issue_id}/todo`, ability: 'read_issue', ok: [201, 304] },
  { method: 'GET', path: `${P}/issues/{issue_id}/notes`, variant: 'confidential', ability: 'read_note', confidential: true, params: (c) => ({ issue_id: c.p.confidentialIssueId }) },
  {
    method: 'POST', path: `${P}/issues/{issue_id}/notes`, variant: 'confidential', ability: 'create_note', confidential: true,
    params: (c) => ({ issue_id: c.p.confidentialIssueId }), body: (c) => ({ body: `note ${c.u}` }), why: 'decisions.md "notes and awards of an issue the caller may not read": 404',
  },
  ...noteableRows('issues', 'issue_id'),
  // project snippets, their notes and award emoji
  ...snippetRows(),
  // item-level rules (4.2): the guest wrote a confidential issue and a note on it, and awarded it; the reporter
  // opened a merge request. The confidential issue's notes are out of reach (404) for whoever may not read it
  { method: 'GET', path: `${P}/issues/{issue_id}`, variant: "guest's confidential issue", ability: 'read_issue', confidential: true, also: ['guest'], params: (c) => ({ issue_id: c.p.guestIssueId }) },
  {
    method: 'PUT', path: `${P}/issues/{issue_id}`, variant: "guest's confidential issue", ability: 'update_issue', also: ['guest'], confidential: true,
    params: (c) => ({ issue_id: c.p.guestIssueId }), body: (c) => ({ description: `edited ${c.u}` }),
  },
  { method: 'GET', path: `${P}/issues/{issue_id}/notes`, variant: "guest's confidential issue", ability: 'read_note', confidential: true, also: ['guest'], params: (c) => ({ issue_id: c.p.guestIssueId }) },
  {
    method: 'PUT', path: `${P}/issues/{issue_id}/notes/{note_id}`, variant: "guest's note", ability: 'admin_note', also: ['guest'], confidential: true,
    params: (c) => ({ issue_id: c.p.guestIssueId, note_id: c.p.guestNoteId }), body: (c) => ({ body: `edited ${c.u}` }),
  },
  {
    method: 'DELETE', path: `${P}/issues/{issue_id}/notes/{note_id}`, variant: "guest's note", ability: 'admin_note', also: ['guest'], confidential: true,
    params: (c) => ({ issue_id: c.p.guestIssueId }), fresh: async (c) => ({ note_id: await fresh.noteBy(c.w, c.p, c.w.cast.guest) }), standIn: (c) => ({ note_id: c.p.guestNoteId }),
  },
  {
    method: 'DELETE', path: `${P}/issues/{issue_id}/award_emoji/{award_id}`, variant: "guest's award", ability: 'destroy_award', also: ['guest'],
    fresh: async (c) => ({ award_id: await fresh.award(c.w, `/projects/${c.p.id}/issues/${c.p.issueId}`, c.w.cast.guest) }), standIn: (c) => ({ award_id: c.p.guestAwardId }),
  },
  {
    method: 'PUT', path: `${P}/merge_requests/{merge_request_id}`, variant: "reporter's merge request", ability: 'update_merge_request', also: ['reporter'],
    params: (c) => ({ merge_request_id: c.p.reporterMergeRequestId }), body: (c) => ({ description: `edited ${c.u}` }),
  },

  // labels and milestones (reference 4.2, 2.6)
  { method: 'GET', path: `${P}/labels`, ability: 'read_label' },
  { method: 'POST', path: `${P}/labels`, ability: 'admin_label', body: (c) => ({ name: c.u, color: '#123456' }) },
  { method: 'PUT', path: `${P}/labels`, ability: 'admin_label', body: (c) => ({ name: 'bug', color: '#00AA00', description: c.u }) },
  { method: 'DELETE', path: `${P}/labels`, ability: 'admin_label', fresh: async (c) => ({ label: await fresh.label(c.w, c.p) }), standIn: () => ({ label: 'bug' }), query: (c) => ({ name: String(c.f.label) }) },
  { method: 'POST', path: `${P}/labels/{label_id}/subscription`, ability: 'read_label', ok: [201, 304] },
  { method: 'DELETE', path: `${P}/labels/{label_id}/subscription`, ability: 'read_label', ok: [200, 304] },
  { method: 'GET', path: `${P}/milestones`, ability: 'read_milestone' },
  { method: 'POST', path: `${P}/milestones`, ability: 'admin_milestone', body: (c) => ({ title: c.u }) },
  { method: 'GET', path: `${P}/milestones/{milestone_id}`, ability: 'read_milestone' },
  { method: 'PUT', path: `${P}/milestones/{milestone_id}`, ability: 'admin_milestone', body: (c) => ({ description: c.u }) },
  { method: 'GET', path: `${P}/milestones/{milestone_id}/issues`, ability: 'read_milestone' },

  // todos: the caller's own
  { method: 'GET', path: `${V3}/todos`, ability: 'user' },
  { method: 'DELETE', path: `${V3}/todos`, ability: 'user' },
  {
    method: 'DELETE', path: `${V3}/todos/{id}`, ability: 'user', fresh: async (c) => ({ id: await fresh.todo(c.w, c.w.projects[20], c.userId || c.w.s.root.id) }),
    why: "each caller's own todo (on the public project, which all of them see); someone else's is a variant",
  },
  { method: 'DELETE', path: `${V3}/todos/{id}`, variant: "the owner's todo", ability: 'own', fresh: async (c) => ({ id: await fresh.todo(c.w, c.p, c.w.cast.owner.id) }) },

  // merge requests (reference 4.2)
  { method: 'GET', path: `${P}/merge_requests`, ability: 'read_merge_request' },
  {
    method: 'POST', path: `${P}/merge_requests`, ability: 'create_merge_request', fresh: async (c) => ({ branch: await fresh.branch(c.w, c.p) }),
    standIn: () => ({ branch: 'dev' }),
    body: (c) => ({ title: c.u, source_branch: c.f.branch, target_branch: 'master' }),
  },
  { method: 'DELETE', path: `${P}/merge_requests/{merge_request_id}`, ability: 'destroy_merge_request', fresh: async (c) => ({ merge_request_id: await fresh.mergeRequest(c.w, c.p) }) },
  { method: 'POST', path: `${P}/merge_requests/{merge_request_id}/subscription`, ability: 'read_merge_request', ok: [201, 304] },
  { method: 'GET', path: `${P}/merge_requests/{merge_request_id}/versions`, ability: 'read_merge_request' },
  { method: 'GET', path: `${P}/merge_requests/{merge_request_id}/versions/{version_id}`, ability: 'read_merge_request' },
  { method: 'DELETE', path: `${P}/merge_requests/{merge_request_id}/subscription`, ability: 'read_merge_request', ok: [200, 304] },
  { method: 'POST', path: `${P}/merge_requests/{merge_request_id}/todo`, ability: 'read_merge_request', ok: [201, 304] },
  ...mergeRequestRows('merge_requests'),
  ...mergeRequestRows('merge_request'),
  ...noteableRows('merge_requests', 'merge_request_id'),

  // SSH keys and deploy keys (reference 2.1, 2.12; decisions.md key rows: 147 a foreign key 404, 149 accessible deploy keys)
  { method: 'GET', path: `${V3}/user/keys`, ability: 'user' },
  { method: 'POST', path: `${V3}/user/keys`, ability: 'user', body: (c) => ({ title: c.u, key: sshPublicKey() }) },
  { method: 'GET', path: `${V3}/user/keys/{key_id}`, ability: 'own', params: (c) => ({ key_id: c.w.ownerKeyId }) },
  { method: 'DELETE', path: `${V3}/user/keys/{key_id}`, ability: 'own', fresh: async (c) => ({ key_id: await fresh.ownerKey(c.w) }), standIn: (c) => ({ key_id: c.w.ownerKeyId }) },
  { method: 'GET', path: `${V3}/users/{id}/keys`, ability: 'admin' },
  { method: 'POST', path: `${V3}/users/{id}/keys`, ability: 'admin', body: (c) => ({ title: c.u, key: sshPublicKey() }) },
  { method: 'DELETE', path: `${V3}/users/{id}/keys/{key_id}`, ability: 'admin', fresh: async (c) => ({ key_id: await fresh.ownerKey(c.w) }), standIn: (c) => ({ key_id: c.w.ownerKeyId }) },
  { method: 'GET', path: `${V3}/keys/{id}`, ability: 'admin', params: (c) => ({ id: c.w.ownerKeyId }) },
  { method: 'GET', path: `${V3}/deploy_keys`, ability: 'admin' },
  ...(['deploy_keys', 'keys'] as const).flatMap((seg): Row[] => [
    { method: 'GET', path: `${P}/${seg}`, ability: 'admin_project' },
    { method: 'GET', path: `${P}/${seg}/{key_id}`, ability: 'admin_project' },
    { method: 'POST', path: `${P}/${seg}`, ability: 'admin_project', body: (c) => ({ title: c.u, key: sshPublicKey() }) },
    {
      method: 'POST', path: `${P}/${seg}/{key_id}/enable`, ability: 'admin_project', fresh: async (c) => ({ key_id: await fresh.deployKey(c.w, c.w.sideProjectId) }),
      standIn: (c) => ({ key_id: c.w.sideDeployKeyId }), why: "a deploy key of the side project, which owner and master master",
    },
    { method: 'DELETE', path: `${P}/${seg}/{key_id}/disable`, ability: 'admin_project', fresh: async (c) => ({ key_id: await fresh.deployKey(c.w, c.p.id) }) },
    { method: 'DELETE', path: `${P}/${seg}/{key_id}`, ability: 'admin_project', fresh: async (c) => ({ key_id: await fresh.deployKey(c.w, c.p.id) }) },
  ]),

  // system hooks (8.13 lib/api/system_hooks.rb: authenticated_as_admin!) and project services (lib/api/services.rb: authorize_admin_project)
  { method: 'GET', path: `${V3}/hooks`, ability: 'admin' },
  { method: 'POST', path: `${V3}/hooks`, ability: 'admin', body: (c) => ({ url: `http://hooks.invalid/${c.u}` }) },
  { method: 'GET', path: `${V3}/hooks/{id}`, ability: 'admin', fresh: async (c) => ({ id: await systemHook(c) }), why: 'the test fire' },
  { method: 'DELETE', path: `${V3}/hooks/{id}`, ability: 'admin', fresh: async (c) => ({ id: await systemHook(c) }) },
  { method: 'GET', path: `${P}/services/{slug}`, ability: 'admin_project', params: () => ({ slug: 'slack' }) },
  { method: 'PUT', path: `${P}/services/{slug}`, ability: 'admin_project', params: () => ({ slug: 'slack' }), body: (c) => ({ webhook: `http://slack.invalid/${c.u}` }) },
  { method: 'DELETE', path: `${P}/services/{slug}`, ability: 'admin_project', params: () => ({ slug: 'slack' }) },

  // OAuth applications (CONTRACT.md step 5: user_oauth_applications is on by default)
  { method: 'GET', path: `${V3}/applications`, ability: 'user' },
  { method: 'POST', path: `${V3}/applications`, ability: 'user', body: (c) => ({ name: c.u, redirect_uri: 'https://client.test/cb' }) },
  { method: 'DELETE', path: `${V3}/applications/{id}`, ability: 'own_or_admin', ok: [204],
    fresh: async (c) => ({ id: await fresh.application(c.w) }), standIn: (c) => ({ id: c.w.applicationId }), why: "the later GitLab API's shape (CONTRACT.md step 5): 204" },

  // the runner API (runner-protocol.md; decisions.md runner rows): user tokens are refused whoever holds them
  { method: 'POST', path: '/ci/api/v1/runners/register', ability: 'ci_token_required' },
  { method: 'DELETE', path: '/ci/api/v1/runners/delete', ability: 'ci_token_required' },
  { method: 'POST', path: '/ci/api/v1/builds/register', ability: 'ci' },
  { method: 'PUT', path: '/ci/api/v1/builds/{id}', ability: 'ci', params: (c) => ({ id: c.p.buildId }) },
  { method: 'PATCH', path: '/ci/api/v1/builds/{id}/trace.txt', ability: 'ci', params: (c) => ({ id: c.p.buildId }), raw: () => ({ payload: 'x', contentType: 'text/plain' }) },
  { method: 'POST', path: '/ci/api/v1/builds/{id}/artifacts', ability: 'ci', params: (c) => ({ id: c.p.buildId }), raw: () => MULTIPART('file', 'a.zip', 'PK') },
  { method: 'GET', path: '/ci/api/v1/builds/{id}/artifacts', ability: 'ci', params: (c) => ({ id: c.p.buildId }) },
  { method: 'DELETE', path: '/ci/api/v1/builds/{id}/artifacts', ability: 'ci', params: (c) => ({ id: c.p.buildId }) },

  // routes outside the OpenAPI document (router paths)
  { method: 'GET', path: '/-/health', ability: 'public' },
  { method: 'GET', path: '/-/readiness', ability: 'public' },
  { method: 'GET', path: '/-/metrics', ability: 'metrics' },
  { method: 'GET', path: '/oauth/assets/oauth.css', ability: 'public' },
  { method: 'GET', path: '/oauth/authorize', ability: 'oauth_page' },
  { method: 'POST', path: '/oauth/authorize', ability: 'oauth_form' },
  { method: 'POST', path: '/oauth/sign_in', ability: 'oauth_form' },
  { method: 'POST', path: '/oauth/sign_out', ability: 'oauth_form_csrf' },
  { method: 'POST', path: '/oauth/token', ability: 'oauth_token', body: () => ({ grant_type: 'client_credentials' }) },
  { method: 'POST', path: '/oauth/revoke', ability: 'oauth_revoke', body: () => ({ token: 'x' }) },
  { method: 'GET', path: '/oauth/token/info', ability: 'oauth_bearer' },
  { method: 'GET', path: '/api/v3/openapi', ability: 'public' },
  { method: 'GET', path: '/:namespace/:project/info/refs', variant: 'upload-pack', ability: 'git_read', query: () => ({ service: 'git-upload-pack' }) },
  { method: 'GET', path: '/:namespace/:project/info/refs', variant: 'receive-pack', ability: 'git_push', query: () => ({ service: 'git-receive-pack' }) },
  { method: 'POST', path: '/:namespace/:project/git-upload-pack', ability: 'git_read', ok: [200], readOnly: true, raw: (c) => uploadPackRequest(c.p.sha) },
  { method: 'POST', path: '/:namespace/:project/git-receive-pack', ability: 'git_push', ok: [200], raw: (c) => receivePackRequest(c.p.sha, `refs/heads/${c.u}`) },
  {
    method: 'POST', path: '/:namespace/:project/git-receive-pack', variant: 'protected branch', ability: 'git_push_protected', ok: [200],
    raw: (c) => receivePackRequest(c.p.sha, `refs/heads/prot-${c.u}`),
  },
  { method: 'GET', path: '/:namespace/:project/uploads/:secret/:filename', ability: 'web_read_project' },

  // the web pages (issue 24): a token is no session, so every caller here is an anonymous browser (abilities.ts `page`).
  // Fastify's route tree prints /tree/*, /blob/*, /raw/* and /commits/* as one `/:namespace/:project/*`: one variant each.
  { method: 'GET', path: '/-/assets/web.css', ability: 'public' },
  { method: 'GET', path: '/-/assets/favicon.svg', ability: 'public' },
  { method: 'GET', path: '/users/sign_in', ability: 'public' },
  { method: 'POST', path: '/users/sign_in', ability: 'page_form' },
  { method: 'POST', path: '/users/sign_out', ability: 'page_form' },
  { method: 'GET', path: '/:namespace', ability: 'page' },
  { method: 'GET', path: '/u/:username', ability: 'page', params: (c) => ({ username: c.w.cast.owner.username }) },
  { method: 'GET', path: '/groups/:path', ability: 'page', params: () => ({ path: 'mxshare' }) },
  { method: 'GET', path: '/:namespace/:project', ability: 'page_code', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/{*}', variant: 'tree', ability: 'page_code', params: (c) => ({ ...PAGE_PROJECT(c), '*': 'tree/master' }) },
  { method: 'GET', path: '/:namespace/:project/{*}', variant: 'blob', ability: 'page_code', params: (c) => ({ ...PAGE_PROJECT(c), '*': 'blob/master/README.md' }) },
  { method: 'GET', path: '/:namespace/:project/{*}', variant: 'raw', ability: 'page_code', params: (c) => ({ ...PAGE_PROJECT(c), '*': 'raw/master/README.md' }) },
  { method: 'GET', path: '/:namespace/:project/{*}', variant: 'commits', ability: 'page_code', params: (c) => ({ ...PAGE_PROJECT(c), '*': 'commits/master' }) },
  { method: 'GET', path: '/:namespace/:project/commit/:sha', ability: 'page_code', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/issues', ability: 'page_public', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/issues/:iid', ability: 'page_public', params: (c) => ({ ...PAGE_PROJECT(c), iid: 1 }) },
  { method: 'GET', path: '/:namespace/:project/merge_requests', ability: 'page_public', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/merge_requests/:iid', ability: 'page_public', params: (c) => ({ ...PAGE_PROJECT(c), iid: 1 }) },
  { method: 'GET', path: '/:namespace/:project/pipelines', ability: 'page_public', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/pipelines/:id', ability: 'page_public', params: (c) => ({ ...PAGE_PROJECT(c), id: c.p.pipelineId }) },
  { method: 'GET', path: '/:namespace/:project/builds/:id', ability: 'page', params: (c) => ({ ...PAGE_PROJECT(c), id: c.p.buildId }) },
  // the writing half (forms, dashboard, profile): GETs send a browser without a session to sign in, every POST without
  // the session's CSRF token is 422 and changes nothing. Each role's answers with a session: test/web/forms.test.ts.
  ...['/', '/dashboard', '/dashboard/projects', '/dashboard/todos', '/dashboard/issues', '/dashboard/merge_requests', '/profile', '/profile/keys',
    '/profile/personal_access_tokens'].map((path) => ({ method: 'GET' as const, path, ability: 'page' as const })),
  { method: 'GET', path: '/:namespace/:project/issues/new', ability: 'page', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/merge_requests/new', ability: 'page', params: PAGE_PROJECT },
  ...['issues', 'merge_requests'].map((kind) => ({
    method: 'GET' as const, path: `/:namespace/:project/${kind}/:iid/edit`, ability: 'page' as const, params: (c: Cell) => ({ ...PAGE_PROJECT(c), iid: 1 }),
  })),
  { method: 'POST', path: '/dashboard/todos/:id/done', ability: 'page_form', params: () => ({ id: 1 }) },
  { method: 'POST', path: '/profile/keys', ability: 'page_form' },
  { method: 'POST', path: '/profile/keys/:id/delete', ability: 'page_form', params: () => ({ id: 1 }) },
  { method: 'POST', path: '/profile/personal_access_tokens', ability: 'page_form' },
  { method: 'POST', path: '/profile/personal_access_tokens/:id/revoke', ability: 'page_form', params: () => ({ id: 1 }) },
  ...['cancel', 'play', 'retry'].map((a) => ({
    method: 'POST' as const, path: `/:namespace/:project/builds/:id/${a}`, ability: 'page_form' as const, params: (c: Cell) => ({ ...PAGE_PROJECT(c), id: c.p.buildId }),
  })),
  ...['cancel', 'retry'].map((a) => ({
    method: 'POST' as const, path: `/:namespace/:project/pipelines/:id/${a}`, ability: 'page_form' as const, params: (c: Cell) => ({ ...PAGE_PROJECT(c), id: c.p.pipelineId }),
  })),
  { method: 'POST', path: '/:namespace/:project/issues', ability: 'page_form', params: PAGE_PROJECT },
  { method: 'POST', path: '/:namespace/:project/merge_requests', ability: 'page_form', params: PAGE_PROJECT },
  ...['issues/:iid/close', 'issues/:iid/notes', 'issues/:iid/reopen', 'merge_requests/:iid/cancel_merge_when_build_succeeds', 'merge_requests/:iid/close',
    'merge_requests/:iid/merge', 'merge_requests/:iid/notes', 'merge_requests/:iid/reopen', 'issues/:iid/edit', 'merge_requests/:iid/edit'].map((tail) => ({
    method: 'POST' as const, path: `/:namespace/:project/${tail}`, ability: 'page_form' as const, params: (c: Cell) => ({ ...PAGE_PROJECT(c), iid: 1 }),
  })),
  { method: 'GET', path: '/:namespace/:project/pipelines/:id/status.json', ability: 'page_public', params: (c) => ({ ...PAGE_PROJECT(c), id: c.p.pipelineId }) },
  { method: 'GET', path: '/:namespace/:project/branches', ability: 'page_code', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/tags', ability: 'page_code', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/compare', ability: 'page_code', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/compare/{*}', ability: 'page_code', params: (c) => ({ ...PAGE_PROJECT(c), '*': 'master...master' }) },
  { method: 'GET', path: '/:namespace/:project/milestones', ability: 'page_public', params: PAGE_PROJECT },
  { method: 'GET', path: '/:namespace/:project/milestones/:iid', ability: 'page_public', params: (c) => ({ ...PAGE_PROJECT(c), iid: 1 }) },
  { method: 'GET', path: '/:namespace/:project/labels', ability: 'page_public', params: PAGE_PROJECT },
  { method: 'GET', path: '/-/assets/live.js', ability: 'public' },
  { method: 'GET', path: '/-/assets/swatch/:color', ability: 'public', params: () => ({ color: 'd9534f.svg' }) },
];

/** A new system hook (made by root). */
async function systemHook(c: Cell): Promise<number> {
  const r = await c.w.s.api('POST', '/hooks', c.w.s.root, { url: `http://hooks.invalid/${c.u}` });
  return r.body.id as number;
}

/** The project of a page row: its path without `.git` (the git rows' default). */
function PAGE_PROJECT(c: Cell): Record<string, string> {
  return { project: c.p.path.split('/')[1]! };
}

/** The blob sha of README.md at master. */
async function blobSha(c: Cell): Promise<string> {
  const r = await c.w.s.api('GET', `/projects/${c.p.id}/repository/tree`, c.w.s.root);
  return (r.body as { name: string; id: string }[]).find((e) => e.name === 'README.md')!.id;
}
