/**
 * Build routes of the runner API: POST /builds/register (claim a build), PUT /builds/:id (state and full trace),
 * PATCH /builds/:id/trace.txt (incremental trace). runner-protocol.md 1.1-1.3, runner-1x-wire.md 2-5.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest, forbidden, invalidParam, notFound, ApiError } from '../errors.js';
import { changeBuildStatus, findBuild } from '../services/ci/builds.js';
import { buildCredential, knownBuildToken, maskSecrets, projectRunnersToken, safeEqual } from '../services/ci/build-tokens.js';
import { claimBuild, runnerForToken, touchRunner } from '../services/ci/runners.js';
import { runnerProjectIds } from '../db/runners.js';
import type { BuildWaiters } from '../services/ci/build-queue.js';
import { MAX_RUNNER_LONG_POLL } from '../config.js';
import { appendTrace, replaceTrace } from '../services/ci/traces.js';
import { hashToken } from '../secrets.js';
import type { CommitStatusRow } from '../db/schema-ci.js';
import type { AppContext } from '../context.js';
import { buildTokenOf, param, rawParam, requireBuildAccess, requireNotErased, requireRunner, requireRunning } from './auth.js';
import { BuildDetailsSchema, RunnerBuildSchema, buildDetails, runnerBuild } from './entities.js';

const IdParams = Type.Object({ id: Type.Integer({ description: 'build id' }) });

/** Mask the build token and the project's runners token in trace bytes (same length, so offsets hold). */
async function mask(ctx: AppContext, build: CommitStatusRow, data: Buffer, presented?: string): Promise<Buffer> {
  return maskSecrets(data, [presented, knownBuildToken(ctx, build), await projectRunnersToken(ctx, build.projectId)]);
}

/** Content-Range as GitLab Runner sends it: `<start>-<end>` (end exclusive; a `bytes ` prefix and `/total` are tolerated). */
export function contentRangeStart(header: string | undefined): number | null | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const m = /^\s*(?:bytes[ =])?(\d{1,15})-(\d{0,15})(?:\/(?:\d+|\*))?\s*$/i.exec(header);
  return m ? Number(m[1]) : null;
}

/** The header a runner sends to be held (seconds, 0 to MAX_RUNNER_LONG_POLL): gantry-runner sends it. */
export const LONG_POLL_HEADER = 'x-gantry-long-poll';

/**
 * How long to hold a build request when nothing is pending: what the runner asks for in X-Gantry-Long-Poll, else
 * --runner-long-poll (GitLab Runner 1.x sends nothing); null when the header is not a number of seconds.
 */
export function holdSeconds(header: string | string[] | undefined, fallback: number): number | null {
  if (header === undefined) return fallback;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!/^\s*\d{1,6}\s*$/.test(text)) return null;
  return Math.min(Number(text), MAX_RUNNER_LONG_POLL);
}

/** Registers the build routes (claim, update, trace). */
export default async function buildRoutes(api: FastifyInstance, opts: { waiters: BuildWaiters }): Promise<void> {
  const { ctx } = api;
  const { waiters } = opts;

  api.post('/builds/register', {
    schema: {
      tags: ['runner api'],
      summary: 'Claim the oldest pending build this runner may run: 201 build payload; 204 nothing to do; 403 bad runner token; 404 paused runner. ' +
        'While nothing is pending the request is held until a build for this runner is queued (201) or the hold ends (204): ' +
        'X-Gantry-Long-Poll seconds (0 = answer at once, at most 60), else the daemon\'s --runner-long-poll',
      headers: Type.Object({ [LONG_POLL_HEADER]: Type.Optional(Type.String({ description: 'seconds to hold the request while no build is pending (0-60)' })) }),
      body: Type.Object({ token: Type.Optional(Type.String()), info: Type.Optional(Type.Unknown()), last_update: Type.Optional(Type.String()) }),
      response: { 201: BuildDetailsSchema, 204: Type.Null() },
    },
  }, async (request, reply) => {
    const runner = await requireRunner(ctx, request);
    if (!runner.active) throw notFound();
    const seconds = holdSeconds(request.headers[LONG_POLL_HEADER], ctx.config.runnerLongPollSeconds);
    if (seconds === null) throw invalidParam('X-Gantry-Long-Poll');
    const current = await touchRunner(ctx, runner, rawParam(request, 'info'));
    let claimed;
    if (seconds === 0 || api.drain.draining) claimed = await claimBuild(ctx, current);
    else {
      // Held: woken by the builds queued for its projects (any project for an unlocked shared runner).
      const projects = current.isShared && !current.locked ? null : await runnerProjectIds(ctx.data, current.id);
      claimed = await waiters.hold(current, projects, seconds * 1000, (stop) => reply.raw.once('close', stop));
    }
    if (!claimed) return reply.code(204).send();
    return reply.code(201).send(await buildDetails(ctx, claimed.build, claimed.token, current));
  });

  api.put('/builds/:id', {
    schema: {
      tags: ['runner api'],
      summary: 'Update a running build: state (success, failed; others ignored) and the full trace. 403 bad token; 404 unless the build runs (for this runner)',
      params: IdParams,
      body: Type.Object({
        token: Type.Optional(Type.String({ description: 'runner token (build token or BUILD-TOKEN header also accepted)' })),
        state: Type.Optional(Type.String({ description: 'running, success or failed' })),
        trace: Type.Optional(Type.String({ description: 'the whole trace' })),
        info: Type.Optional(Type.Unknown()),
      }),
      response: { 200: RunnerBuildSchema },
    },
  }, async (request) => {
    const { id } = request.params as { id: number };
    const runner = await runnerForToken(ctx, param(request, 'token'));
    let build: CommitStatusRow | null;
    let presented: string | undefined;
    if (runner) {
      // The runner's own build, while it runs; anything else is 404 (`PUT builds/-1` is how runners verify their token).
      build = await findBuild(ctx, id);
      if (!build || build.runnerId !== runner.id || build.status !== 'running') throw notFound();
      await touchRunner(ctx, runner, rawParam(request, 'info'));
    } else {
      const token = buildTokenOf(request);
      build = await findBuild(ctx, id);
      if (!build || !token) throw forbidden();
      const credential = await buildCredential(ctx, build, token);
      const own = !!build.tokenHash && safeEqual(hashToken(token), build.tokenHash);
      if (!credential && !own) throw forbidden();
      if (build.status !== 'running') throw notFound();
      presented = own ? token : undefined;
    }
    requireNotErased(build);
    const trace = rawParam(request, 'trace');
    if (typeof trace === 'string') await replaceTrace(ctx, build, await mask(ctx, build, Buffer.from(trace, 'utf8'), presented));
    const state = param(request, 'state');
    if (state === 'success') await changeBuildStatus(ctx, build.id, 'success');
    else if (state === 'failed') await changeBuildStatus(ctx, build.id, 'drop');
    return runnerBuild(ctx, (await findBuild(ctx, build.id)) ?? build);
  });

  // The trace body is raw bytes whatever its Content-Type (runners send text/plain).
  await api.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    raw.patch('/builds/:id/trace.txt', {
      schema: {
        tags: ['runner api'],
        summary: 'Append a trace part at Content-Range `<start>-<end>`: 202 with Build-Status and Range 0-<length>; 416 with Range when start is not the current length',
        params: IdParams,
        headers: Type.Object({ 'build-token': Type.Optional(Type.String()), 'content-range': Type.Optional(Type.String()) }),
        response: { 202: { description: 'accepted; the Range header holds 0-<trace length>, Build-Status the build status', type: 'null' } },
      },
    }, async (request, reply) => {
      const { id } = request.params as { id: number };
      const { build, token } = await requireBuildAccess(ctx, request, id);
      requireNotErased(build);
      requireRunning(build);
      const start = contentRangeStart(request.headers['content-range']);
      if (start === undefined) throw badRequest('Content-Range');
      if (start === null) throw invalidParam('Content-Range');
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = await appendTrace(ctx, build, start, await mask(ctx, build, body, token));
      const headers = { 'Build-Status': build.status, Range: `0-${result.length}` };
      if (!result.ok) throw new ApiError(416, { message: '416 Range Not Satisfiable' }, headers);
      return reply.code(202).headers(headers).send();
    });
  });
}
