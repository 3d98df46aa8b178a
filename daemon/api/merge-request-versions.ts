/**
 * Merge request diff versions (GitLab 8.13 lib/api/merge_request_diffs.rb, introduced in 8.12): every version of a
 * merge request's diff, one per head the merge request has had (recorded at create and on every push to either
 * branch, services/merge-requests/refresh.ts), newest first; and one version with its commits and file diffs. Readers
 * of the merge request only (404 `Not found` otherwise, as the merge request routes).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFoundMessage } from '../errors.js';
import { findDiffVersion, listDiffVersions, versionChanges } from '../services/merge-requests/diffs.js';
import {
  mergeRequestDiffEntity, MergeRequestDiffFullSchema, MergeRequestDiffSchema, versionCommits,
} from './entities/merge-requests.js';
import { changeEntries, readableMergeRequestOf } from './merge-requests.js';
import { Int } from './params.js';
import { loadProject, projectOf } from './project-scope.js';

const tags = ['merge requests'];
const MrParams = Type.Object({ id: Type.String(), merge_request_id: Type.String({ description: 'merge request ID (global)' }) });
// version_id as 8.13's `type: Integer`: text is 400 `"version_id" is invalid`; 0, negative or huge is 404 (app.ts oddIdParam).
const VersionParams = Type.Object({ ...MrParams.properties, version_id: Int({ description: 'version ID (a MergeRequestDiff id)' }) });

/** Registers the versions routes (on the data layer and git: both engines). */
export default async function mergeRequestVersionRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_merge_request');
  const base = '/projects/:id/merge_requests/:merge_request_id/versions';

  api.get(base, {
    preValidation: read,
    schema: { tags, summary: 'The diff versions of a merge request, newest first', params: MrParams, response: { 200: Type.Array(MergeRequestDiffSchema) } },
  }, async (request) => {
    const mr = await readableMergeRequestOf(request);
    return (await listDiffVersions(ctx.data, mr.id)).map(mergeRequestDiffEntity);
  });

  api.get(`${base}/:version_id`, {
    preValidation: read,
    schema: { tags, summary: 'One diff version with its commits and diffs', params: VersionParams, response: { 200: MergeRequestDiffFullSchema } },
  }, async (request) => {
    const mr = await readableMergeRequestOf(request);
    const version = await findDiffVersion(ctx.data, mr.id, (request.params as { version_id: number }).version_id);
    if (!version) throw notFoundMessage('404 Not found');
    const changes = await versionChanges(ctx, version, projectOf(request));
    return { ...mergeRequestDiffEntity(version), commits: versionCommits(version), diffs: changeEntries(changes.files) };
  });
}
