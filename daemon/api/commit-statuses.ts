/**
 * Commit statuses: POST /projects/:id/statuses/:sha (create_commit_status, developer+) and
 * GET /projects/:id/repository/commits/:sha/statuses (read_commit_status; `ref` and `ref_name` both filter).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { commitOrNotFound, countCommitStatuses, listCommitStatuses, postCommitStatus, COMMIT_STATUS_STATES, type StatusListFilter } from '../services/ci/commit-statuses.js';
import { CommitStatusSchema, presentCommitStatuses } from './entities/commit-statuses.js';
import { paginate } from './pagination.js';
import { Bool, PageParams, RequiredString } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';

const tags = ['commit statuses'];
const SHAParams = Type.Object({ id: Type.String(), sha: Type.String() });
const O = Type.Optional;
const PostBody = Type.Object({
  state: RequiredString({ description: COMMIT_STATUS_STATES.join(', ') }),
  ref: O(Type.String({ description: 'default: the default branch if it contains the commit, else the first branch that does' })),
  name: O(Type.String({ description: 'default "default"' })),
  context: O(Type.String({ description: 'alias of name' })),
  target_url: O(Type.String()),
  description: O(Type.String()),
});
const ListQuery = Type.Object({
  ref: O(Type.String()),
  ref_name: O(Type.String({ description: 'alias of ref' })),
  stage: O(Type.String()),
  name: O(Type.String()),
  all: O(Bool({ description: 'every status, not only the newest per name and pipeline' })),
  ...PageParams,
});

/** Registers the commit status routes. */
export default async function commitStatusRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.post('/projects/:id/statuses/:sha', {
    preValidation: [loadProject('create_commit_status'), dropBlankParams],
    schema: { tags, summary: 'Add or update a status of a commit', params: SHAParams, body: PostBody, response: { 201: CommitStatusSchema } },
  }, async (request, reply) => {
    const b = request.body as { state: string; ref?: string; name?: string; context?: string; target_url?: string; description?: string };
    const status = await postCommitStatus(ctx, projectOf(request), callerOf(request), (request.params as { sha: string }).sha, {
      state: b.state, ref: b.ref, name: b.name || b.context, targetUrl: b.target_url, description: b.description,
    });
    return reply.code(201).send((await presentCommitStatuses(ctx, [status]))[0]);
  });

  api.get('/projects/:id/repository/commits/:sha/statuses', {
    preValidation: loadProject('read_commit_status'),
    schema: { tags, summary: 'Statuses of a commit (newest per name unless all=true)', params: SHAParams, querystring: ListQuery, response: { 200: Type.Array(CommitStatusSchema) } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const q = request.query as { ref?: string; ref_name?: string; stage?: string; name?: string; all?: boolean };
    const commit = await commitOrNotFound(ctx, project, (request.params as { sha: string }).sha);
    const filter: StatusListFilter = { ref: q.ref || q.ref_name || undefined, stage: q.stage || undefined, name: q.name || undefined, all: q.all === true };
    const rows = await paginate(request, reply, ctx.data, (q) => countCommitStatuses(q, project.id, commit.sha, filter),
      (q, limit, offset, total) => listCommitStatuses(ctx, q, project.id, commit.sha, filter, limit, offset, total));
    return presentCommitStatuses(ctx, rows);
  });
}
