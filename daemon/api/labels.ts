/** /api/v3/projects/:id/labels: project labels (read with the project; reporters and up write) and label subscriptions. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound, notModified } from '../errors.js';
import { createLabel, deleteLabel, findLabelByIdOrTitle, subscribeToLabel, unsubscribeFromLabel, updateLabel } from '../services/collaboration/labels.js';
import { countProjectLabels, listProjectLabels } from '../db/labels.js';
import { labelRecord, LabelRecordSchema, LabelSchema, presentLabel, presentLabels } from './entities/labels.js';
import { NotBlank, PageParams, ProjectIdParams } from './params.js';
import { paginate } from './pagination.js';
import { callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';

const O = Type.Optional;
const S = (description: string) => Type.String({ description });
const CreateBody = Type.Object({
  name: O(S('label title (required)')),
  color: O(S('# and 6 hex digits (required)')),
  description: O(S('label description')),
});
const UpdateBody = Type.Object({
  name: O(S('title of the existing label (required)')),
  new_name: O(NotBlank({ description: 'new title (required if color is absent; blank: 400 can\'t be blank)' })),
  color: O(NotBlank({ description: 'new colour, # and 6 hex digits (required if new_name is absent; blank: 400)' })),
  description: O(S('new description')),
});
const NameParam = Type.Object({ name: O(S('title of the label (required)')) });
const SubscriptionParams = Type.Object({ id: Type.String(), label_id: S('label ID or title') });
const tags = ['labels'];

/** The label of `:label_id` (id or title) in the request's project, or 404 `Label Not Found`. */
async function labelOf(request: FastifyRequest) {
  const project = projectOf(request);
  const label = await findLabelByIdOrTitle(request.server.ctx.data, project.id, (request.params as { label_id: string }).label_id);
  if (!label) throw notFound('Label');
  return label;
}

/** Registers the label routes. */
export default async function labelRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_label');
  const admin = loadProject('admin_label');

  api.get('/projects/:id/labels', {
    preValidation: read,
    schema: { tags, params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(LabelSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const rows = await paginate(request, reply, ctx.data, (q) => countProjectLabels(q, project.id), (q, limit, offset) => listProjectLabels(q, project.id, limit, offset));
    return presentLabels(ctx, callerOf(request), project, rows, projectLevelOf(request));
  });

  api.post('/projects/:id/labels', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: CreateBody, response: { 201: LabelSchema } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const label = await createLabel(ctx, project.id, request.body as Static<typeof CreateBody>);
    return reply.code(201).send(await presentLabel(ctx, callerOf(request), project, label, projectLevelOf(request)));
  });

  api.put('/projects/:id/labels', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: ProjectIdParams, querystring: NameParam, body: UpdateBody, response: { 200: LabelSchema } },
  }, async (request) => {
    const project = projectOf(request);
    const body = request.body as Static<typeof UpdateBody>;
    const name = body.name ?? (request.query as Static<typeof NameParam>).name;
    const label = await updateLabel(ctx, project.id, { ...body, name });
    return presentLabel(ctx, callerOf(request), project, label, projectLevelOf(request));
  });

  // The name may come in the query string (most clients) or in a form/JSON body, as 8.x read every param.
  api.delete('/projects/:id/labels', {
    preValidation: [admin, dropBlankParams],
    schema: { tags, params: ProjectIdParams, querystring: NameParam, body: NameParam, response: { 200: LabelRecordSchema } },
  }, async (request) => {
    const project = projectOf(request);
    const name = (request.query as Static<typeof NameParam>).name || (request.body as Static<typeof NameParam> | undefined)?.name;
    return labelRecord(await deleteLabel(ctx, project.id, name));
  });

  api.post('/projects/:id/labels/:label_id/subscription', {
    preValidation: read,
    schema: { tags, params: SubscriptionParams, response: { 201: LabelSchema } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const label = await labelOf(request);
    if (!(await subscribeToLabel(ctx, user.id, label))) throw notModified();
    return reply.code(201).send(await presentLabel(ctx, user, projectOf(request), label, projectLevelOf(request)));
  });

  api.delete('/projects/:id/labels/:label_id/subscription', {
    preValidation: read,
    schema: { tags, params: SubscriptionParams, response: { 200: LabelSchema } },
  }, async (request) => {
    const user = callerOf(request);
    const label = await labelOf(request);
    if (!(await unsubscribeFromLabel(ctx, user.id, label))) throw notModified();
    return presentLabel(ctx, user, projectOf(request), label, projectLevelOf(request));
  });
}
