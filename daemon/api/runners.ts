/**
 * Runners seen by users (GitLab 8.12/8.13 lib/api/runners.rb): GET /runners (specific runners of projects the
 * caller masters), GET /runners/all (admin), GET /runners/:id (RunnerDetails), PUT and DELETE /runners/:id,
 * GET /projects/:id/runners (the project's specific runners plus the shared ones; needs admin_project), and
 * POST/DELETE /projects/:id/runners(/:runner_id) to enable or disable a specific runner for another project.
 * Who may do what is daemon/policy/permissions.ts (runnerDenial).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import type { RunnerRow } from '../db/schema-ci.js';
import { ApiError, forbidden, notFound } from '../errors.js';
import { ownedRunnerIds, runnerDenial, type RunnerAbility } from '../policy/permissions.js';
import { deleteRunner, disableRunner, enableRunner, findRunner, updateRunner, type RunnerUpdate } from '../services/ci/runners.js';
import { runnerDetails, RunnerDetailsSchema, runnerEntity, RunnerSchema } from './entities/runners.js';
import { countRunners, runnersPage, type RunnerListFilter, type RunnerScope } from '../db/runners.js';
import { paginate } from './pagination.js';
import { Bool, PageParams, ProjectIdParams } from './params.js';
import { adminOnly, callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';

/** A runner counts as online when it called in within the last hour. */
const ONLINE_MS = 60 * 60 * 1000;


const Scope = (values: string[]) => Type.Optional(Type.String({ description: `one of ${values.join(', ')}` }));
const OWN_SCOPES: RunnerScope[] = ['active', 'paused', 'online'];
const ALL_SCOPES: RunnerScope[] = ['specific', 'shared', 'active', 'paused', 'online'];


const RunnerIdParams = Type.Object({ id: Type.Integer({ description: 'runner id' }) });
const ProjectRunnerParams = Type.Object({ id: ProjectIdParams.properties.id, runner_id: Type.Integer({ description: 'runner id' }) });
const UpdateRunnerBody = Type.Object({
  description: Type.Optional(Type.String()), active: Type.Optional(Bool()),
  tag_list: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'comma-separated string or array' })),
  run_untagged: Type.Optional(Bool()), locked: Type.Optional(Bool()),
});

const loadedRunners = new WeakMap<FastifyRequest, RunnerRow>();

/** preValidation hook: the runner of `:id` (404 "Runner Not Found") that the caller may `ability` (403 with the reason). */
function loadRunner(ability: RunnerAbility): preValidationAsyncHookHandler {
  return async function (request) {
    const raw = String((request.params as { id: unknown }).id);
    if (!/^\d+$/.test(raw)) return; // not an integer: the params schema answers 400
    const runner = await findRunner(request.server.ctx, Number(raw));
    if (!runner) throw notFound('Runner');
    const denial = await runnerDenial(request.server.ctx, callerOf(request), ability, runner);
    if (denial) throw forbidden(denial);
    loadedRunners.set(request, runner);
  };
}

/** The runner resolved by loadRunner for this request. */
function runnerOf(request: FastifyRequest): RunnerRow {
  const runner = loadedRunners.get(request);
  if (!runner) throw new Error('runnerOf() without the loadRunner() hook on the route');
  return runner;
}

/** The list filter of a `scope` parameter (400 for an unknown scope, as 8.13). */
function scopeFilter(scope: string | undefined, allowed: RunnerScope[]): RunnerListFilter {
  if (scope === undefined || scope === '') return {};
  if (!(allowed as string[]).includes(scope)) throw new ApiError(400, { message: 'Scope contains invalid value' });
  return { scope: scope as RunnerScope, onlineSince: new Date(Date.now() - ONLINE_MS).toISOString() };
}

/** A page of the runners `filter` shows (ordered by id). */
function listRunners(ctx: AppContext, request: FastifyRequest, reply: Parameters<typeof paginate>[1], filter: RunnerListFilter) {
  return paginate(
    request, reply, ctx.data,
    async (q) => countRunners(q, filter),
    async (q, limit, offset) => (await runnersPage(q, filter, limit, offset)).map(runnerEntity),
  );
}

/** Registers the runner read routes. */
export default async function runnerRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.get('/runners', {
    schema: {
      tags: ['runners'], summary: "Specific runners of the projects the caller masters (scope: active, paused, online)",
      querystring: Type.Object({ scope: Scope(OWN_SCOPES), ...PageParams }), response: { 200: Type.Array(RunnerSchema) },
    },
  }, async (request, reply) => {
    const user = callerOf(request);
    const scope = scopeFilter((request.query as { scope?: string }).scope, OWN_SCOPES);
    const ids = await ownedRunnerIds(ctx, user);
    return listRunners(ctx, request, reply, { ...scope, ids });
  });

  api.get('/runners/all', {
    preValidation: adminOnly,
    schema: {
      tags: ['runners'], summary: 'Every runner (admin; scope: specific, shared, active, paused, online)',
      querystring: Type.Object({ scope: Scope(ALL_SCOPES), ...PageParams }), response: { 200: Type.Array(RunnerSchema) },
    },
  }, async (request, reply) => {
    return listRunners(ctx, request, reply, scopeFilter((request.query as { scope?: string }).scope, ALL_SCOPES));
  });

  api.get('/runners/:id', {
    preValidation: loadRunner('read_runner'),
    schema: {
      tags: ['runners'], summary: "A runner's details: shared runners for everyone, specific ones for admins and masters of its projects",
      params: RunnerIdParams, response: { 200: RunnerDetailsSchema },
    },
  }, async (request) => runnerDetails(ctx, callerOf(request), runnerOf(request)));

  api.put('/runners/:id', {
    preValidation: [loadRunner('update_runner'), dropBlankParams],
    schema: {
      tags: ['runners'], summary: "Update a runner (admins; for a specific runner also masters of one of its projects; shared runners: admins only)",
      params: RunnerIdParams, body: UpdateRunnerBody, response: { 200: RunnerDetailsSchema },
    },
  }, async (request) => {
    const updated = await updateRunner(ctx, runnerOf(request), request.body as RunnerUpdate);
    return runnerDetails(ctx, callerOf(request), updated);
  });

  api.delete('/runners/:id', {
    preValidation: loadRunner('delete_runner'),
    schema: {
      tags: ['runners'], summary: 'Remove a runner; its token stops working (admins; masters of its only project for a specific runner)',
      params: RunnerIdParams, response: { 200: RunnerSchema },
    },
  }, async (request) => {
    const runner = runnerOf(request);
    await deleteRunner(ctx, runner);
    return runnerEntity(runner);
  });

  api.get('/projects/:id/runners', {
    preValidation: loadProject('admin_project'),
    schema: {
      tags: ['runners'], summary: "The project's specific runners and the shared runners (needs admin_project; scope as /runners/all)",
      params: ProjectIdParams, querystring: Type.Object({ scope: Scope(ALL_SCOPES), ...PageParams }), response: { 200: Type.Array(RunnerSchema) },
    },
  }, async (request, reply) => {
    const project = projectOf(request);
    const scope = scopeFilter((request.query as { scope?: string }).scope, ALL_SCOPES);
    return listRunners(ctx, request, reply, { ...scope, project: project.id });
  });

  api.post('/projects/:id/runners', {
    preValidation: loadProject('admin_project'),
    schema: {
      tags: ['runners'], summary: "Enable a specific runner of the caller's for this project too (not shared or locked runners; needs admin_project)",
      params: ProjectIdParams, body: Type.Object({ runner_id: Type.Integer({ description: 'runner id' }) }, { required: ['runner_id'] }),
      response: { 201: RunnerSchema },
    },
  }, async (request, reply) => {
    const project = projectOf(request);
    const runner = await findRunner(ctx, (request.body as { runner_id: number }).runner_id);
    if (!runner) throw notFound('Runner');
    const denial = await runnerDenial(ctx, callerOf(request), 'assign_runner', runner);
    if (denial) throw forbidden(denial);
    await enableRunner(ctx, runner, project.id);
    return reply.code(201).send(runnerEntity(runner));
  });

  api.delete('/projects/:id/runners/:runner_id', {
    preValidation: loadProject('admin_project'),
    schema: {
      tags: ['runners'], summary: "Disable a runner for this project (not its last project: remove the runner instead; needs admin_project)",
      params: ProjectRunnerParams, response: { 200: RunnerSchema },
    },
  }, async (request) => {
    const project = projectOf(request);
    const runnerId = (request.params as { runner_id: number }).runner_id;
    await disableRunner(ctx, runnerId, project.id);
    const runner = await findRunner(ctx, runnerId);
    if (!runner) throw notFound('Runner');
    return runnerEntity(runner);
  });
}


