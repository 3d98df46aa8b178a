/** /api/v3/projects/:id/milestones: project milestones (read with the project; masters and up write) and their issues. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFoundMessage } from '../errors.js';
import { canProject, confidentialIssuesSql } from '../policy/permissions.js';
import {
  countMilestoneIssues, countProjectMilestones, createMilestone, findProjectMilestone, listMilestoneIssues, listProjectMilestones,
  updateMilestone,
} from '../services/collaboration/milestones.js';
import { IssueSchema, presentIssues } from './entities/issues.js';
import { milestoneEntity, MilestoneSchema } from './entities/milestones.js';
import { paginate } from './pagination.js';
import { PageParams, ProjectIdParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';

const O = Type.Optional;
const S = (description: string) => Type.String({ description });
const ListQuery = Type.Object({
  state: O(S('active or closed; anything else lists all')),
  iid: O(Type.Array(Type.Integer(), { description: 'milestone iid (or several: iid[]=1&iid[]=2)' })),
  ...PageParams,
});
const MilestoneBody = Type.Object({
  title: O(S('title (required on create)')),
  description: O(S('description')),
  due_date: O(S('YYYY-MM-DD')),
  state_event: O(S('close or activate (update only)')),
});
const MilestoneParams = Type.Object({ id: Type.String(), milestone_id: S('milestone ID (global)') });
const tags = ['milestones'];

/** The milestone of `:milestone_id` in the request's project; 8.x's `find` miss answered `404 Not found`. */
function milestoneOf(request: FastifyRequest) {
  const raw = (request.params as { milestone_id: string }).milestone_id;
  const m = /^\d+$/.test(raw) ? findProjectMilestone(request.server.ctx, projectOf(request).id, Number(raw)) : null;
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
    return paginate(request, reply, () => countProjectMilestones(ctx, project.id, filter), (limit, offset) => listProjectMilestones(ctx, project.id, filter, limit, offset))
      .map(milestoneEntity);
  });

  api.get('/projects/:id/milestones/:milestone_id', {
    preValidation: read,
    schema: { tags, params: MilestoneParams, response: { 200: MilestoneSchema } },
  }, async (request) => milestoneEntity(milestoneOf(request)));

  api.post('/projects/:id/milestones', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: MilestoneBody, response: { 201: MilestoneSchema } },
  }, async (request, reply) => {
    const body = request.body as Static<typeof MilestoneBody>;
    const m = createMilestone(ctx, callerOf(request).id, projectOf(request).id, { title: body.title, description: body.description, due_date: body.due_date });
    return reply.code(201).send(milestoneEntity(m));
  });

  api.put('/projects/:id/milestones/:milestone_id', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: MilestoneParams, body: MilestoneBody, response: { 200: MilestoneSchema } },
  }, async (request) => {
    const m = updateMilestone(ctx, callerOf(request).id, milestoneOf(request), request.body as Static<typeof MilestoneBody>);
    return milestoneEntity(m);
  });

  // Issues of a milestone in every state, without the confidential ones the caller may not read (8.x visible_to_user).
  api.get('/projects/:id/milestones/:milestone_id/issues', {
    preValidation: read,
    schema: { tags, params: MilestoneParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(IssueSchema) } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const project = projectOf(request);
    const milestone = milestoneOf(request);
    // Issues switched off: the milestone still answers (merge requests use it), with no issue in it.
    const filter = canProject(ctx, user, 'read_issue', project) ? confidentialIssuesSql(ctx, user, project) : '0';
    const rows = paginate(request, reply, () => countMilestoneIssues(ctx, milestone, filter), (limit, offset) => listMilestoneIssues(ctx, milestone, filter, limit, offset));
    return presentIssues(ctx, user, rows);
  });
}
