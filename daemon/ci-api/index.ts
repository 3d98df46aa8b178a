/**
 * The runner interface, mounted at /ci/api/v1 (GitLab 8.13 Ci::API; runner-protocol.md, runner-1x-wire.md). It has
 * its own credentials (registration, runner and build tokens; no /api/v3 user auth), answers JSON with a Content-Type
 * of exactly `application/json` (GitLab Runner 1.x compares it with ==), accepts the `.json` suffix (app.ts rewriteUrl)
 * and reads multipart uploads as streams. Registering it also attaches the live trace WebSocket (daemon/live).
 */
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { attachLiveTrace } from '../live/trace.js';
import runnerRegistrationRoutes from './runners.js';
import buildRoutes from './builds.js';
import artifactRoutes from './artifacts.js';
import { BuildWaiters, countHeldRequests } from '../services/ci/build-queue.js';
import { claimBuild, findRunner, pendingBuildIds } from '../services/ci/runners.js';

/** Registers the /ci/api/v1 routes (register with `{ prefix: '/ci/api/v1' }`). */
export default async function ciApi(api: FastifyInstance): Promise<void> {
  // Artifact uploads are read as streams by the route (the app-wide multipart parser would buffer whole files).
  api.removeContentTypeParser('multipart/form-data');
  api.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null, undefined));

  api.addHook('onSend', async (_request, reply, payload) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json')) reply.header('content-type', 'application/json');
    return payload;
  });
  api.setNotFoundHandler(async () => {
    throw notFound();
  });

  await api.register(runnerRegistrationRoutes);
  // Runners held by builds/register until a build is queued for them (long-polling; services/ci/build-queue.ts).
  const { ctx } = api;
  const waiters = new BuildWaiters(async (id, current) => {
    const runner = current ?? (await findRunner(ctx, id));
    return runner && runner.active ? claimBuild(ctx, runner) : null;
  }, (ids) => pendingBuildIds(ctx, ids), (message, e) => api.log.warn({ err: e }, message));
  waiters.start(ctx.data);
  const uncount = countHeldRequests(ctx, waiters);
  api.drain.onDrain.push(() => waiters.close());
  // (preClose: held requests answer before the server waits for its connections to end)
  api.addHook('preClose', async () => waiters.close());
  api.addHook('onClose', async () => {
    await waiters.stop();
    uncount();
  });
  await api.register(buildRoutes, { waiters });
  await api.register(artifactRoutes);
  const live = attachLiveTrace(api.ctx, api.server);
  api.addHook('preClose', async () => live.close());
}
