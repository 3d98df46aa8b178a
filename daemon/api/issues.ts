/**
 * /api/v3 issues: the caller's (GET /issues), a group's and a project's lists with their filters; get, create,
 * update (state_event close/reopen), delete (soft), move, subscription and todo.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, forbidden, notFoundMessage } from '../errors.js';
import { canProjectAsync, canUpdateIssue } from '../policy/permissions.js';
import {
  countIssues, createIssue, deleteIssue, findReadableIssue, issueListQuery, listIssues, markIssueTodo, moveIssue, subscribeToIssue,
  unsubscribeFromIssue, updateIssue, type IssueListFilter, type IssueListScope, type UpdateIssueParams,
} from '../services/collaboration/index.js';
import { findGroup } from '../services/users/groups.js';
import { findProject } from '../services/projects/projects.js';
import type { UserRow } from '../db/schema.js';
import type { IssueRow } from '../db/schema-collaboration.js';
import { issueHookAttributes } from '../hooks/issues.js';
import { IssueSchema, presentIssue, presentIssues } from './entities/issues.js';
import { dropBlankKeepLabels, issuableRoutes, Labels, labelsParam } from './issuable-routes.js';
import { paginate } from './pagination.js';
import { Bool, Int, NotBlank, Nullable, PageParams, ProjectIdParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';
import { ANSWER_BYTES, ResponseCache } from './response-cache.js';

const O = Type.Optional;
const S = (description: string) => Type.String({ description });
const ListQuery = Type.Object({
  state: O(S('opened or closed; anything else lists every state')),
  labels: O(Labels),
  order_by: O(S('created_at (default) or updated_at')),
  sort: O(S('desc (default) or asc')),
  ...PageParams,
});
const ProjectListQuery = Type.Object({
  ...ListQuery.properties,
  milestone: O(S('milestone title')),
  iid: O(Type.Array(Type.Integer(), { description: 'issue iid (or several: iid[]=1&iid[]=2)' })),
});
const GroupListQuery = Type.Object({ ...ListQuery.properties, milestone: O(S('milestone title')) });
const IssueBody = Type.Object({
  title: O(S('title (required on create)')),
  description: O(S('description')),
  assignee_id: O(Int({ description: 'assignee user ID (0 removes it; reporters and up)' })),
  milestone_id: O(Int({ description: 'milestone ID of the project (0 removes it; reporters and up)' })),
  labels: O(Labels),
  created_at: O(S('ISO 8601 time (admins and project owners)')),
  due_date: O(S('YYYY-MM-DD')),
  confidential: O(Bool()),
});
const UpdateBody = Type.Object({
  ...IssueBody.properties,
  title: O(NotBlank({ description: 'title (blank: 400 can\'t be blank)' })),
  state_event: O(S('close or reopen')),
  updated_at: O(S('ISO 8601 time (admins and project owners)')),
});
const MoveBody = Type.Object({ to_project_id: O(Int({ description: 'target project ID' })) });
const IssueParams = Type.Object({ id: Type.String(), issue_id: S('issue ID (global)') });
const I = Type.Integer();
/** DELETE answers the issue with its raw columns too (8.x sent the destroyed record). */
const DeletedIssueSchema = Type.Object({
  ...IssueSchema.properties, assignee_id: Nullable(I), author_id: Nullable(I), milestone_id: Nullable(I), updated_by_id: Nullable(I),
  moved_to_id: Nullable(I), deleted_at: Nullable(Type.String()),
});
const tags = ['issues'];

/**
 * Pages of the caller's and a project's issue lists, kept as their bytes until the next write (api/response-cache.ts):
 * a list polled again (boards, CLI views, dashboards) is answered without a query, a presenter or a serializer run.
 */
const answers = new ResponseCache(200, ANSWER_BYTES);

/** The list filter of a request (only the parameters its route declares: the schema does not drop the others). */
function filterOf(viewer: UserRow, scope: IssueListScope, q: Static<typeof ProjectListQuery>, labelsMode: 'any' | 'all'): IssueListFilter {
  const labels = labelsParam(q.labels);
  return {
    scope, viewer, state: q.state, labelsMode, milestone: q.milestone, iids: q.iid,
    labels: labels !== undefined ? labels.split(',') : undefined,
    orderBy: q.order_by === 'updated_at' ? 'updated_at' : 'created_at',
    sort: q.sort === 'asc' ? 'asc' : 'desc',
  };
}

/** Registers the issue routes. */
export default async function issueRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_issue');

  /** The issue of `:issue_id` the caller may read (404 `Not found` otherwise). */
  async function issueOf(request: FastifyRequest) {
    const raw = (request.params as { issue_id: string }).issue_id;
    if (!/^\d+$/.test(raw)) throw notFoundMessage('404 Not found');
    return findReadableIssue(ctx, callerOf(request), projectOf(request), Number(raw), projectLevelOf(request));
  }

  /** One page of a list, presented for the caller. */
  async function page(request: FastifyRequest, reply: Parameters<typeof paginate>[1], f: IssueListFilter, level?: number) {
    const lq = await issueListQuery(ctx, f, level);
    const rows = await paginate(request, reply, ctx.data, (q) => countIssues(ctx, q, lq), (q, limit, offset, total) => listIssues(ctx, q, lq, limit, offset, total));
    return presentIssues(ctx, f.viewer, rows);
  }

  /** The rights of an issue write (policy), with the caller's level once. */
  async function rightsOf(request: FastifyRequest) {
    const user = callerOf(request);
    const project = projectOf(request);
    const level = projectLevelOf(request);
    return {
      admin: await canProjectAsync(ctx, user, 'admin_issue', project, level),
      timestamps: await canProjectAsync(ctx, user, 'set_issuable_timestamps', project, level),
    };
  }

  const issuesKey = (request: FastifyRequest) => `issues\u0000${request.url}`;
  api.get('/issues', {
    preValidation: answers.keptFirst(ctx, issuesKey),
    schema: { tags, querystring: ListQuery, response: { 200: Type.Array(IssueSchema) } },
  }, async (request, reply) => {
    const user = callerOf(request);
    return answers.sendAsync(ctx, request, reply, issuesKey(request), () =>
      page(request, reply, filterOf(user, { kind: 'author', userId: user.id }, { ...(request.query as Static<typeof ListQuery>), milestone: undefined, iid: undefined }, 'any')));
  });

  api.get('/groups/:id/issues', {
    schema: { tags, params: Type.Object({ id: S('group ID or path') }), querystring: GroupListQuery, response: { 200: Type.Array(IssueSchema) } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const group = await findGroup(ctx, user, (request.params as { id: string }).id);
    return page(request, reply, filterOf(user, { kind: 'group', groupId: group.id }, { ...(request.query as Static<typeof GroupListQuery>), iid: undefined }, 'all'));
  });

  const projectIssuesKey = (request: FastifyRequest) => `project-issues\u0000${request.url}`;
  api.get('/projects/:id/issues', {
    preValidation: [read, answers.keptFirst(ctx, projectIssuesKey)],
    schema: { tags, params: ProjectIdParams, querystring: ProjectListQuery, response: { 200: Type.Array(IssueSchema) } },
  }, async (request, reply) => {
    const user = callerOf(request);
    return answers.sendAsync(ctx, request, reply, projectIssuesKey(request), async () => {
      const project = projectOf(request);
      const level = projectLevelOf(request);
      return page(request, reply, filterOf(user, { kind: 'project', project }, request.query as Static<typeof ProjectListQuery>, 'any'), level);
    });
  });

  api.get('/projects/:id/issues/:issue_id', {
    preValidation: read,
    schema: { tags, params: IssueParams, response: { 200: IssueSchema } },
  }, async (request) => presentIssue(ctx, callerOf(request), await issueOf(request)));

  api.post('/projects/:id/issues', {
    preValidation: [loadProject('create_issue'), dropBlankKeepLabels],
    schema: { tags, params: ProjectIdParams, body: IssueBody, response: { 201: IssueSchema } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const project = projectOf(request);
    const body = request.body as Static<typeof IssueBody>;
    const issue = await createIssue(ctx, user, project, { ...body, labels: labelsParam(body.labels) }, await rightsOf(request));
    return reply.code(201).send(await presentIssue(ctx, user, issue));
  });

  api.put('/projects/:id/issues/:issue_id', {
    preValidation: [read, dropBlankKeepLabels],
    schema: { tags, params: IssueParams, body: UpdateBody, response: { 200: IssueSchema } },
  }, async (request) => {
    const user = callerOf(request);
    const project = projectOf(request);
    const issue = await issueOf(request);
    if (!(await canUpdateIssue(ctx, user, project, issue, projectLevelOf(request)))) throw forbidden();
    const body = request.body as Static<typeof UpdateBody>;
    const params: UpdateIssueParams = { ...body, labels: labelsParam(body.labels) };
    const row = await updateIssue(ctx, user, project, issue, params, await rightsOf(request));
    return presentIssue(ctx, user, row);
  });

  api.post('/projects/:id/issues/:issue_id/move', {
    preValidation: [read, dropBlankParams],
    schema: { tags, params: IssueParams, body: MoveBody, response: { 201: IssueSchema } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const issue = await issueOf(request);
    const to = (request.body as Static<typeof MoveBody>).to_project_id;
    if (to === undefined) throw badRequest('to_project_id');
    const target = await findProject(ctx, user, to);
    const moved = await moveIssue(ctx, user, projectOf(request), issue, target);
    return reply.code(201).send(await presentIssue(ctx, user, moved));
  });

  // DELETE: 404 when the issue is absent or cannot be destroyed by the caller (owners and admins only)
  await api.register(issuableRoutes<IssueRow>({
    segment: 'issues', idParam: 'issue_id', noun: 'issue', tags, schema: IssueSchema, read, load: issueOf,
    subscribe: subscribeToIssue, unsubscribe: unsubscribeFromIssue, markTodo: markIssueTodo, present: presentIssue,
    destroyAbility: 'destroy_issue', remove: deleteIssue, columns: issueHookAttributes, deletedSchema: DeletedIssueSchema,
  }));
}
