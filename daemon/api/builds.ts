/**
 * /api/v3/projects/:id/builds (consumer side): lists, one build, artifacts, trace and the cancel, retry, erase,
 * keep-artifacts and play actions. Reading needs read_build (reporter+, or public_builds for non-members of a visible
 * project); the actions need update_build (developer+).
 */
import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProjectRow } from '../db/schema.js';
import type { CommitStatusRow } from '../db/schema-ci.js';
import { badRequest, badRequestMessage, forbidden, notFound } from '../errors.js';
import { BUILD_STATUSES, type BuildStatus } from '../ci/status.js';
import { artifactsFilePath } from '../services/ci/artifacts.js';
import { cancelBuild, eraseBuild, findProjectBuild, keepArtifacts, playBuild, retryBuild } from '../services/ci/builds.js';
import { countBuilds, latestArtifactsBuild, listBuilds, type BuildListFilter } from '../db/builds.js';
import { commitOrNotFound } from '../services/ci/commit-statuses.js';
import { readTrace } from '../services/ci/traces.js';
import { BuildSchema, presentBuild, presentBuilds } from './entities/builds.js';
import { pageOf, setPageHeaders } from './pagination.js';
import { FileResponse, Int, PageParams, ProjectIdParams } from './params.js';
import { callerOf, loadProject, projectOf } from './project-scope.js';

const tags = ['builds'];
const ScopeQuery = Type.Object({
  scope: Type.Optional(Type.Unknown({
    description: `a status or several: scope=x, scope[]=x&scope[]=y or scope[0]=x&scope[1]=y; one of ${BUILD_STATUSES.join(', ')}`,
  })),
  ...PageParams,
});
const BuildParams = Type.Object({ id: Type.String(), build_id: Int() });
const SHAParams = Type.Object({ id: Type.String(), sha: Type.String() });
const DownloadParams = Type.Object({ id: Type.String(), ref_name: Type.String() });
const DownloadQuery = Type.Object({ job: Type.String({ description: 'the job (build) name' }) });

/**
 * The `scope` filter: a string, an array (`scope[]=`) or an indexed hash (`scope[0]=`), each value a build status.
 * Absent or empty means every build; any unknown value is 400 `Scope contains invalid value(s)` (GitLab's text).
 */
export function parseBuildScope(value: unknown): BuildStatus[] {
  if (value === undefined || value === null || value === '') return [];
  let values: unknown[];
  if (typeof value === 'string') values = [value];
  else if (Array.isArray(value)) values = value;
  else if (typeof value === 'object') values = Object.values(value as Record<string, unknown>);
  else values = [value];
  if (!values.length) return [];
  if (!values.every((v) => typeof v === 'string' && (BUILD_STATUSES as readonly string[]).includes(v))) {
    throw badRequestMessage('Scope contains invalid value(s)');
  }
  return [...new Set(values as BuildStatus[])];
}

/** The build of `:build_id` in the request's project, or 404. */
async function buildOf(request: FastifyRequest, project: ProjectRow): Promise<CommitStatusRow> {
  const b = await findProjectBuild(request.server.ctx, project.id, (request.params as { build_id: number }).build_id);
  if (!b) throw notFound();
  return b;
}

/** Stream a stored artifacts archive as an attachment. */
function sendArtifacts(reply: FastifyReply, path: string) {
  const size = statSync(path).size;
  return reply
    .header('Content-Type', 'application/octet-stream')
    .header('Content-Length', String(size))
    .header('Content-Disposition', `attachment; filename="${basename(path).replace(/["\\]/g, '_')}"`)
    .send(createReadStream(path));
}

/** Registers the consumer build routes. */
export default async function buildRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('read_build');
  const update = loadProject('update_build');

  const list = async (request: FastifyRequest, reply: FastifyReply, filter: BuildListFilter) => {
    const project = projectOf(request);
    const page = pageOf(request);
    const { total, rows } = await ctx.data.snapshot(async (q) => {
      const n = await countBuilds(q, project.id, filter);
      return { total: n, rows: n === 0 ? [] : await listBuilds(ctx, q, project.id, filter, page.limit, page.offset, n) };
    });
    setPageHeaders(request, reply, page, total);
    return presentBuilds(ctx, project, rows);
  };

  api.get('/projects/:id/builds', {
    preValidation: read,
    schema: { tags, summary: 'Builds of a project, newest first', params: ProjectIdParams, querystring: ScopeQuery, response: { 200: Type.Array(BuildSchema) } },
  }, async (request, reply) => list(request, reply, { statuses: parseBuildScope((request.query as { scope?: unknown }).scope) }));

  api.get('/projects/:id/repository/commits/:sha/builds', {
    preValidation: read,
    schema: { tags, summary: 'Builds of every pipeline of a commit, newest first', params: SHAParams, querystring: ScopeQuery, response: { 200: Type.Array(BuildSchema) } },
  }, async (request, reply) => {
    const statuses = parseBuildScope((request.query as { scope?: unknown }).scope);
    const project = projectOf(request);
    // 8.x answered a plain `404 Not Found` here (statuses say `404 Commit Not Found`).
    const commit = await commitOrNotFound(ctx, project, (request.params as { sha: string }).sha).catch(() => {
      throw notFound();
    });
    return list(request, reply, { statuses, sha: commit.sha });
  });

  api.get('/projects/:id/builds/:build_id', {
    preValidation: read,
    schema: { tags, summary: 'One build', params: BuildParams, response: { 200: BuildSchema } },
  }, async (request) => {
    const project = projectOf(request);
    return presentBuild(ctx, project, await buildOf(request, project));
  });

  api.get('/projects/:id/builds/:build_id/artifacts', {
    preValidation: read,
    schema: { tags, summary: 'Download the artifacts archive of a build (404 when none)', params: BuildParams, response: { 200: FileResponse('application/octet-stream', 'the artifacts archive') } },
  }, async (request, reply) => {
    const build = await buildOf(request, projectOf(request));
    const path = await artifactsFilePath(ctx, build);
    if (!path) throw notFound();
    return sendArtifacts(reply, path);
  });

  api.get('/projects/:id/builds/artifacts/:ref_name/download', {
    preValidation: read,
    schema: {
      tags, summary: 'Download the artifacts of the newest successful build of a job on a ref', params: DownloadParams, querystring: DownloadQuery,
      response: { 200: FileResponse('application/octet-stream', 'the artifacts archive') },
    },
  }, async (request, reply) => {
    const { job } = request.query as { job?: string };
    if (!job) throw badRequest('job');
    const build = await latestArtifactsBuild(ctx.data, projectOf(request).id, (request.params as { ref_name: string }).ref_name, job);
    const path = build ? await artifactsFilePath(ctx, build) : null;
    if (!path) throw notFound();
    return sendArtifacts(reply, path);
  });

  api.get('/projects/:id/builds/:build_id/trace', {
    preValidation: read,
    schema: { tags, summary: 'The trace (log) of a build as text/plain (404 when none)', params: BuildParams, response: { 200: FileResponse('text/plain', 'the trace') } },
  }, async (request, reply) => {
    const build = await buildOf(request, projectOf(request));
    const trace = await readTrace(ctx, build);
    if (trace === null) throw notFound();
    return reply.header('Content-Type', 'text/plain; charset=utf-8').header('Content-Disposition', `infile; filename="${build.id}.log"`).send(trace);
  });

  api.post('/projects/:id/builds/:build_id/cancel', {
    preValidation: update,
    schema: { tags, summary: 'Cancel a build (created, pending or running); other builds are returned unchanged', params: BuildParams, response: { 201: BuildSchema } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const build = await cancelBuild(ctx, await buildOf(request, project));
    return reply.code(201).send(await presentBuild(ctx, project, build));
  });

  api.post('/projects/:id/builds/:build_id/retry', {
    preValidation: update,
    schema: { tags, summary: 'Retry a finished build: returns the new pending build (403 when not retryable)', params: BuildParams, response: { 201: BuildSchema } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const retried = await retryBuild(ctx, await buildOf(request, project), callerOf(request));
    if (!retried) throw forbidden('Build is not retryable');
    return reply.code(201).send(await presentBuild(ctx, project, retried));
  });

  api.post('/projects/:id/builds/:build_id/erase', {
    preValidation: update,
    schema: { tags, summary: 'Erase the artifacts and trace of a finished build (403 when not erasable)', params: BuildParams, response: { 201: BuildSchema } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const erased = await eraseBuild(ctx, await buildOf(request, project), callerOf(request));
    if (!erased) throw forbidden('Build is not erasable!');
    return reply.code(201).send(await presentBuild(ctx, project, erased, { downloadUrl: true }));
  });

  api.post('/projects/:id/builds/:build_id/artifacts/keep', {
    preValidation: update,
    schema: { tags, summary: 'Keep the artifacts of a build (clears their expiry; 404 when none)', params: BuildParams, response: { 200: BuildSchema } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const kept = await keepArtifacts(ctx, await buildOf(request, project));
    if (!kept) throw notFound();
    return reply.code(200).send(await presentBuild(ctx, project, kept, { downloadUrl: true }));
  });

  api.post('/projects/:id/builds/:build_id/play', {
    preValidation: update,
    schema: { tags, summary: 'Play a manual build waiting in skipped (400 otherwise)', params: BuildParams, response: { 200: BuildSchema } },
  }, async (request, reply) => {
    const project = projectOf(request);
    const played = await playBuild(ctx, await buildOf(request, project), callerOf(request));
    if (!played) throw badRequest('Unplayable Build');
    return reply.code(200).send(await presentBuild(ctx, project, played));
  });
}
