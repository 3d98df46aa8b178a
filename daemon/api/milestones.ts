/** /api/v3/projects/:id/milestones: project milestones (read with the project; masters and up write) and their issues. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFoundMessage } from '../errors.js';
import { canProjectAsync, confidentialIssuesWhere } from '../policy/permissions.js';
import {
  countMilestoneIssues, countProjectMilestones, createMilestone, findProjectMilestone, listMilestoneIssues, listProjectMilestones,
  updateMilestone,
} from '../services/collaboration/milestones.js';
import { IssueSchema, presentIssues } from './entities/issues.js';
import { milestoneEntity, MilestoneSchema } from './entities/milestones.js';
import { paginate } from './pagination.js';
import { NotBlank, PageParams, ProjectIdParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';

const O = Type.Optional;
const S = (description: string) => Type.String({ description });
const ListQuery = Type.Object({
  state: O(S('active or closed; anything else lists all')),
  iid: O(Type.Array(Type.Integer(), { description: 'milestone iid (or several: iid[]=1&iid[]=2)' })),
  ...PageParams,
});
const MilestoneBody = Type.Object({
  title: O(NotBlank({ description: 'title (required on create; a blank one on update: 400 can\'t be blank)' })),
  description: O(S('description')),
  due_date: O(S('YYYY-MM-DD')),
  state_event: O(S('close or activate (update only)')),
});
const MilestoneParams = Type.Object({ id: Type.String(), milestone_id: S('milestone ID (global)') });
const tags = ['milestones'];

/** The milestone of `:milestone_id` in the request's project; 8.x's `find` miss answered `404 Not found`. */
async function milestoneOf(request: FastifyRequest) {
  const raw = (request.params as { milestone_id: string }).milestone_id;
  const m = /^\d+$/.test(raw) ? await findProjectMilestone(request.server.ctx.data, projectOf(request).id, Number(raw)) : null;
  if (!m) throw notFoundMessage('404 Not found');
  return m;
}

/** Registers the milestone routes. */
export default async function milestoneRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_milestone');
  const admin = loadProject('admin_milestone');

  api.get('/projects/:id/milestones', {
    preValidation: read,
    schema: { tags, params: ProjectIdParams, querystring: ListQuery, response: { 200: Type.Array(MilestoneSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const q = request.query as Static<typeof ListQuery>;
    const filter = { state: q.state, iids: q.iid };
    return (await paginate(request, reply, ctx.data, (q) => countProjectMilestones(q, project.id, filter), (q, limit, offset) => listProjectMilestones(q, project.id, filter, limit, offset)))
      .map(milestoneEntity);
  });

  api.get('/projects/:id/milestones/:milestone_id', {
    preValidation: read,
    schema: { tags, params: MilestoneParams, response: { 200: MilestoneSchema } },
  }, async (request) => milestoneEntity(await milestoneOf(request)));

  api.post('/projects/:id/milestones', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: MilestoneBody, response: { 201: MilestoneSchema } },
  }, async (request, reply) => {
    const body = request.body as Static<typeof MilestoneBody>;
    const m = await createMilestone(ctx, callerOf(request).id, projectOf(request).id, { title: body.title, description: body.description, due_date: body.due_date });
    return reply.code(201).send(milestoneEntity(m));
  });

  api.put('/projects/:id/milestones/:milestone_id', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: MilestoneParams, body: MilestoneBody, response: { 200: MilestoneSchema } },
  }, async (request) => {
    const m = await updateMilestone(ctx, callerOf(request).id, await milestoneOf(request), request.body as Static<typeof MilestoneBody>);
    return milestoneEntity(m);
  });

  // Issues of a milestone in every state, without the confidential ones the caller may not read (8.x visible_to_user).
  api.get('/projects/:id/milestones/:milestone_id/issues', {
    preValidation: read,
    schema: { tags, params: MilestoneParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(IssueSchema) } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const project = projectOf(request);
    const milestone = await milestoneOf(request);
    const level = projectLevelOf(request);
    // Issues switched off: the milestone still answers (merge requests use it), with no issue in it.
    const filter = (await canProjectAsync(ctx, user, 'read_issue', project, level))
      ? await confidentialIssuesWhere(ctx, user, project, level) : { sql: 'FALSE', args: [] };
    const rows = await paginate(request, reply, ctx.data, (q) => countMilestoneIssues(q, milestone, filter), (q, limit, offset) => listMilestoneIssues(q, milestone, filter, limit, offset));
    return presentIssues(ctx, user, rows);
  });
}
