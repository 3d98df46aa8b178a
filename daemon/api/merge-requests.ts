/**
 * /api/v3/projects/:id/merge_requests: list (iid, state, order_by, sort), get, commits, changes, closes_issues,
 * create (within the project or from a fork into its upstream), update (state_event close/reopen), delete (soft),
 * subscription, todo, the older comments API, notes and award emoji (the collaboration factories), and 8.x's
 * deprecated singular `/merge_request/:merge_request_id` routes as aliases. The merge routes live in
 * merge-request-merge.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, forbidden, notFoundMessage } from '../errors.js';
import { mergeRequestHookAttributes, mergeRequestHookColumns } from '../hooks/merge-requests.js';
import { setNoteableHookAttributes } from '../hooks/notes.js';
import { canProjectAsync, canUpdateMergeRequest } from '../policy/permissions.js';
import { countNotes, createNote, listNotes } from '../services/collaboration/notes.js';
import {
  canReadMergeRequest, checkMergeStatus, closesIssues, countMergeRequests, createMergeRequest, deleteMergeRequest,
  diffCommits, findProjectMergeRequest, findReadableMergeRequest, latestDiff, listMergeRequests, markMergeRequestTodo, mergeRequestChanges,
  mergeRequestNoteable, mergeRequestNoteablesByIds, mergeRequestsByIds, subscribeToMergeRequest, unsubscribeFromMergeRequest,
  updateMergeRequest, type MergeRequestListFilter,
} from '../services/merge-requests/index.js';
import type { MergeRequestRow } from '../db/schema-merge-requests.js';
import type { Queries } from '../db/layer/types.js';
import { updateAndMerge } from '../services/merge-requests/merge.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { awardEmojiRoutes } from './award-emoji.js';
import { IssueSchema, presentIssues } from './entities/issues.js';
import {
  MergeRequestChangesSchema, MergeRequestSchema, presentMergeRequest, presentMergeRequests, versionCommits, type ChangeEntry,
} from './entities/merge-requests.js';
import { setTodoTargetKind } from './entities/todos.js';
import { dropBlankKeepLabels, issuableRoutes, Labels, labelsParam } from './issuable-routes.js';
import { RepoCommitSchema } from './entities/repository.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './entities/users.js';
import { addEventNoteable, noteRoutes } from './notes.js';
import type { NoteableKind } from './noteables.js';
import { paginateArray, paginate } from './pagination.js';
import { Int, NotBlank, Nullable, PageParams, ProjectIdParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';
import { ANSWER_BYTES, ResponseCache } from './response-cache.js';
import { usersByIds } from '../db/users.js';

const O = Type.Optional;
const S = (description: string) => Type.String({ description });
const ListQuery = Type.Object({
  iid: O(Type.Array(Type.Integer(), { description: 'merge request iid (or several: iid[]=1&iid[]=2)' })),
  state: O(S('all (default), merged, opened or closed')),
  order_by: O(S('created_at (default) or updated_at')),
  sort: O(S('desc (default) or asc')),
  ...PageParams,
});
const CreateBody = Type.Object({
  source_branch: O(S('the source branch (required)')),
  target_branch: O(S('the target branch (required)')),
  title: O(S('title (required)')),
  description: O(S('description')),
  assignee_id: O(Int({ description: 'assignee user ID (developers and up)' })),
  milestone_id: O(Int({ description: 'milestone ID of the target project (developers and up)' })),
  target_project_id: O(Int({ description: 'the upstream project when the URL names a fork' })),
  labels: O(Labels),
});
const UpdateBody = Type.Object({
  title: O(NotBlank({ description: 'title (blank: 400 can\'t be blank)' })),
  description: O(S('description')),
  target_branch: O(NotBlank({ description: 'a new target branch (blank: 400 can\'t be blank)' })),
  source_branch: O(S('cannot be changed (400)')),
  assignee_id: O(Int({ description: 'assignee user ID (0 removes it)' })),
  milestone_id: O(Int({ description: 'milestone ID (0 removes it)' })),
  labels: O(Labels),
  state_event: O(S('close, reopen or merge (merges as PUT .../merge with its defaults)')),
});
const CommentBody = Type.Object({ note: O(S('the comment text (required)')) });
const MrParams = Type.Object({ id: Type.String(), merge_request_id: S('merge request ID (global)') });
const I = Type.Integer();
const NSx = Nullable(Type.String());
/** DELETE answers the merge request with its raw columns too (8.x sent the destroyed record). */
const DeletedSchema = Type.Object({
  ...MergeRequestSchema.properties, author_id: Nullable(I), assignee_id: Nullable(I), milestone_id: Nullable(I), updated_by_id: Nullable(I),
  deleted_at: NSx, merge_error: NSx, merge_user_id: Nullable(I),
});
/** The older MR comment (MRNote): the note text and its author. */
const MRNoteSchema = Type.Object({ note: Type.String(), author: Nullable(UserBasicSchema) });
const tags = ['merge requests'];

/** Pages of a project's merge request list, kept as their bytes until the next write (api/response-cache.ts). */
const listAnswers = new ResponseCache(200, ANSWER_BYTES);
/** Every merge request route runs on SQLite and PostgreSQL alike. */

/** Merge requests as notes and award emoji address them: `/projects/:id/merge_requests/:merge_request_id`. */
export const MERGE_REQUEST_NOTEABLES: NoteableKind = {
  segment: 'merge_requests',
  idParam: 'merge_request_id',
  tag: 'merge requests',
  loadAsync: async (ctx, project, id) => {
    const row = await findProjectMergeRequest(ctx.data, project.id, id);
    return row ? mergeRequestNoteable(row) : null;
  },
  loadManyAsync: (ctx, ids) => mergeRequestNoteablesByIds(ctx.data, ids),
  canReadAsync: (ctx, user, project, n, level) => canReadMergeRequest(ctx, user, project, n.row as MergeRequestRow, level),
};

// Comment events show merge request notes; note hooks embed the merge request; todos present merge request targets.
addEventNoteable('MergeRequest', MERGE_REQUEST_NOTEABLES);
setNoteableHookAttributes('MergeRequest', 'merge_request', (n) => `merge_requests/${n.iid}`,
  (ctx, q, row) => mergeRequestHookAttributes(ctx, q, row as MergeRequestRow));
setTodoTargetKind<MergeRequestRow>('MergeRequest', {
  loadAsync: async (ctx, ids) => new Map((await mergeRequestsByIds(ctx.data, ids)).map((r) => [r.id, r])),
  presentAsync: async (ctx, viewer, rows) => {
    const presented = await presentMergeRequests(ctx, viewer, rows);
    return new Map(rows.map((r, i) => [r.id, presented[i]!]));
  },
  title: (row) => row.title,
  webPath: (row) => `merge_requests/${row.iid}`,
});

/** A page of changes as the API shows them (RepoDiff plus too_large). */
export function changeEntries(files: Awaited<ReturnType<typeof mergeRequestChanges>>['files']): ChangeEntry[] {
  return files.map((f) => ({
    old_path: f.oldPath, new_path: f.newPath, a_mode: f.aMode, b_mode: f.bMode, diff: f.diff, new_file: f.newFile,
    renamed_file: f.renamedFile, deleted_file: f.deletedFile, too_large: f.tooLarge,
  }));
}

/** The MRNote entity of notes, authors loaded in one query. */
async function presentMRNotes(ctx: FastifyInstance['ctx'], rows: { note: string; authorId: number | null }[], q: Queries = ctx.data) {
  const users = await usersByIds(q, rows.map((r) => r.authorId));
  const gravatar = await gravatarEnabledAsync(ctx, q);
  return rows.map((r) => {
    const a = r.authorId !== null ? users.get(r.authorId) : undefined;
    return { note: r.note, author: a ? userBasic(ctx, a, gravatar) : null };
  });
}

/** The merge request of `:merge_request_id` the caller may read in the project of loadProject (404 `Not found` otherwise). */
export function readableMergeRequestOf(request: FastifyRequest): Promise<MergeRequestRow> {
  const raw = (request.params as { merge_request_id: string }).merge_request_id;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw notFoundMessage('404 Not found');
  return findReadableMergeRequest(request.server.ctx, callerOf(request), projectOf(request), Number(raw), projectLevelOf(request));
}

/** Registers the merge request routes. */
export default async function mergeRequestRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_merge_request');

  const mrOf = readableMergeRequestOf;

  /** What the caller may set on merge requests of `project` (the URL's project: its level is known). */
  const rightsOn = (user: UserRow, request: FastifyRequest) => async (project: ProjectRow) =>
    ({ admin: await canProjectAsync(ctx, user, 'admin_merge_request', project, project.id === projectOf(request).id ? projectLevelOf(request) : undefined) });

  const listKey = (request: FastifyRequest) => `project-merge-requests\u0000${request.url}`;
  api.get('/projects/:id/merge_requests', {
    preValidation: [read, listAnswers.keptFirst(ctx, listKey)],
    schema: { tags, params: ProjectIdParams, querystring: ListQuery, response: { 200: Type.Array(MergeRequestSchema) } },
  }, (request, reply) => listAnswers.sendAsync(ctx, request, reply, listKey(request), async () => {
    const user = callerOf(request);
    const q = request.query as Static<typeof ListQuery>;
    const project = projectOf(request);
    const f: MergeRequestListFilter = {
      projectId: project.id, state: q.state, iids: q.iid,
      orderBy: q.order_by === 'updated_at' ? 'updated_at' : 'created_at', sort: q.sort === 'asc' ? 'asc' : 'desc',
    };
    const rows = await paginate(request, reply, ctx.data, (q) => countMergeRequests(q, f), (q, limit, offset, total) => listMergeRequests(ctx, q, f, limit, offset, total));
    return presentMergeRequests(ctx, user, rows);
  }));

  api.post('/projects/:id/merge_requests', {
    preValidation: [loadProject('create_merge_request'), dropBlankKeepLabels],
    schema: { tags, params: ProjectIdParams, body: CreateBody, response: { 201: MergeRequestSchema } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const body = request.body as Static<typeof CreateBody>;
    const mr = await createMergeRequest(ctx, user, projectOf(request), { ...body, labels: labelsParam(body.labels) }, rightsOn(user, request));
    return reply.code(201).send(await presentMergeRequest(ctx, user, mr));
  });

  // Per merge request: the plural routes and 8.x's deprecated singular aliases (`/merge_request/:merge_request_id`).
  for (const segment of ['merge_requests', 'merge_request']) {
    const base = `/projects/:id/${segment}/:merge_request_id`;
    const alias = segment === 'merge_request';
    const t = alias ? ['merge requests (deprecated singular)'] : tags;

    api.get(base, {
      preValidation: read,
      schema: { tags: t, params: MrParams, response: { 200: MergeRequestSchema } },
    }, async (request) => {
      const user = callerOf(request);
      const mr = await checkMergeStatus(ctx, await mrOf(request), projectOf(request));
      return presentMergeRequest(ctx, user, mr);
    });

    api.get(`${base}/commits`, {
      preValidation: read,
      schema: { tags: t, params: MrParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(RepoCommitSchema) } },
    }, async (request, reply) => {
      const mr = await mrOf(request);
      return paginateArray(request, reply, versionCommits(await latestDiff(ctx.data, mr.id)));
    });

    api.get(`${base}/changes`, {
      preValidation: read,
      schema: { tags: t, params: MrParams, response: { 200: MergeRequestChangesSchema } },
    }, async (request) => {
      const user = callerOf(request);
      const project = projectOf(request);
      const mr = await checkMergeStatus(ctx, await mrOf(request), project);
      const changes = await mergeRequestChanges(ctx, mr, project);
      return { ...(await presentMergeRequest(ctx, user, mr)), changes: changeEntries(changes.files), overflow: changes.overflow };
    });

    api.put(base, {
      preValidation: [read, dropBlankKeepLabels],
      schema: { tags: t, params: MrParams, body: UpdateBody, response: { 200: MergeRequestSchema } },
    }, async (request) => {
      const user = callerOf(request);
      const project = projectOf(request);
      const mr = await mrOf(request);
      if (!(await canUpdateMergeRequest(ctx, user, project, mr, projectLevelOf(request)))) throw forbidden();
      const body = request.body as Static<typeof UpdateBody>;
      const params = { ...body, labels: labelsParam(body.labels) };
      // state_event=merge merges, as PUT .../merge with its defaults (the spec's Merge request state table)
      const row = body.state_event === 'merge'
        ? await updateAndMerge(ctx, user, project, mr, params, await rightsOn(user, request)(project))
        : await updateMergeRequest(ctx, user, project, mr, params, await rightsOn(user, request)(project));
      return presentMergeRequest(ctx, user, row);
    });

    api.get(`${base}/closes_issues`, {
      preValidation: read,
      schema: { tags: t, params: MrParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(IssueSchema) } },
    }, async (request, reply) => {
      const user = callerOf(request);
      const issues = await closesIssues(ctx, user, await mrOf(request), projectOf(request));
      return presentIssues(ctx, user, paginateArray(request, reply, issues));
    });

    api.get(`${base}/comments`, {
      preValidation: read,
      schema: { tags: t, params: MrParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(MRNoteSchema) } },
    }, async (request, reply) => {
      const noteable = mergeRequestNoteable(await mrOf(request));
      const rows = await paginate(request, reply, ctx.data, (q) => countNotes(q, noteable),
        (q, limit, offset, total) => listNotes(ctx, q, noteable, limit, offset, total));
      return presentMRNotes(ctx, rows);
    });

    api.post(`${base}/comments`, {
      preValidation: [loadProject('create_note'), dropBlankParams],
      schema: { tags: t, params: MrParams, body: CommentBody, response: { 201: MRNoteSchema } },
    }, async (request, reply) => {
      const user = callerOf(request);
      const project = projectOf(request);
      const mr = await mrOf(request);
      const note = (request.body as Static<typeof CommentBody>).note;
      if (note === undefined || note.trim() === '') throw badRequest('note');
      const created = await createNote(ctx, user, project, mergeRequestNoteable(mr), { body: note });
      const shown = created.kind === 'note' ? created.note : { note, authorId: user.id };
      return reply.code(201).send((await presentMRNotes(ctx, [shown]))[0]);
    });
  }

  // DELETE: 404 when the merge request is absent or cannot be destroyed by the caller (owners and admins only)
  await api.register(issuableRoutes<MergeRequestRow>({
    segment: 'merge_requests', idParam: 'merge_request_id', noun: 'merge request', tags, schema: MergeRequestSchema, read, load: mrOf,
    subscribe: subscribeToMergeRequest, unsubscribe: unsubscribeFromMergeRequest, markTodo: markMergeRequestTodo, present: presentMergeRequest,
    destroyAbility: 'destroy_merge_request', remove: deleteMergeRequest, columns: (_ctx, row) => mergeRequestHookColumns(row), deletedSchema: DeletedSchema,
  }));
  await api.register(noteRoutes(MERGE_REQUEST_NOTEABLES));
  await api.register(awardEmojiRoutes(MERGE_REQUEST_NOTEABLES));
}
