/**
 * /api/v3 merge request merging: PUT .../merge (merge now, or when the head pipeline succeeds) and PUT or POST
 * .../cancel_merge_when_build_succeeds, with the deprecated singular `/merge_request/` aliases (8.x, removed in 9.0).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFoundMessage } from '../errors.js';
import { findReadableMergeRequest } from '../services/merge-requests/find.js';
import { acceptMergeRequest } from '../services/merge-requests/merge.js';
import { cancelAutoMerge } from '../services/merge-requests/auto-merge.js';
import { MergeRequestSchema, presentMergeRequest } from './entities/merge-requests.js';
import { Bool } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';

const O = Type.Optional;
const MergeParams = Type.Object({ id: Type.String(), merge_request_id: Type.String({ description: 'merge request ID (global)' }) });
const MergeBody = Type.Object({
  merge_commit_message: O(Type.String({ maxLength: 1_000_000, description: "commit message, at most 1,000,000 characters (default: Merge branch '<source>' into '<target>' ...)" })),
  should_remove_source_branch: O(Bool({ description: 'remove the source branch after the merge' })),
  merge_when_build_succeeds: O(Bool({ description: 'merge when the head pipeline succeeds (while it is unfinished)' })),
  sha: O(Type.String({ description: 'must be the HEAD of the source branch (409 otherwise)' })),
});
const tags = ['merge requests'];
/** The merge routes run on SQLite and PostgreSQL alike. */

/** Registers the merge routes. */
export default async function mergeRequestMergeRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_merge_request');

  /** The merge request of `:merge_request_id` the caller may read (404 `Not found` otherwise). */
  function mergeRequestOf(request: FastifyRequest) {
    const raw = (request.params as { merge_request_id: string }).merge_request_id;
    if (!/^\d+$/.test(raw)) throw notFoundMessage('404 Not found');
    return findReadableMergeRequest(ctx, callerOf(request), projectOf(request), Number(raw), projectLevelOf(request));
  }

  for (const segment of ['merge_requests', 'merge_request']) {
    const base = `/projects/:id/${segment}/:merge_request_id`;
    const deprecated = segment === 'merge_request';

    api.put(`${base}/merge`, {
      preValidation: [read, dropBlankParams],
      schema: { tags, deprecated, params: MergeParams, body: MergeBody, response: { 200: MergeRequestSchema } },
    }, async (request) => {
      const user = callerOf(request);
      const row = await acceptMergeRequest(ctx, user, projectOf(request), await mergeRequestOf(request), request.body as Static<typeof MergeBody>);
      return presentMergeRequest(ctx, user, row);
    });

    // The spec routes cancel as PUT, 8.x as POST: both, answering 200 as the spec's row.
    for (const method of ['put', 'post'] as const) {
      api[method](`${base}/cancel_merge_when_build_succeeds`, {
        preValidation: read,
        schema: { tags, deprecated, params: MergeParams, response: { 200: MergeRequestSchema } },
      }, async (request, reply) => {
        const user = callerOf(request);
        const row = await cancelAutoMerge(ctx, user, projectOf(request), await mergeRequestOf(request));
        return reply.code(200).send(await presentMergeRequest(ctx, user, row));
      });
    }
  }
}
