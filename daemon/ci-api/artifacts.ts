/**
 * Artifacts of the runner API (runner-protocol.md 1.5-1.7, runner-1x-wire.md 6-7): POST streams the multipart `file`
 * part to disk (chunked bodies welcome, nothing buffered), GET streams the archive back, DELETE removes it.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest, notFound, tooLarge } from '../errors.js';
import { FileResponse } from '../api/params.js';
import { findBuild } from '../services/ci/builds.js';
import { artifactsExpiry, artifactsFilePath, maxArtifactsBytes, removeArtifacts, storeArtifacts } from '../services/ci/artifacts.js';
import { requireBuildAccess, requireNotErased, requireRunning } from './auth.js';
import { RunnerBuildSchema, runnerBuild } from './entities.js';
import { multipartBoundary, readMultipart } from './multipart.js';

const IdParams = Type.Object({ id: Type.Integer({ description: 'build id' }) });
const TokenQuery = Type.Object({ token: Type.Optional(Type.String({ description: 'build token (or the BUILD-TOKEN header)' })) });

/** Registers the artifacts routes. */
export default async function artifactRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.post('/builds/:id/artifacts', {
    schema: {
      tags: ['runner api'],
      summary: 'Upload the artifacts archive of a running build (multipart field `file`, query expire_in): 201 build; 400 no file; 403; 404; 413 too large',
      params: IdParams,
      querystring: Type.Object({ ...TokenQuery.properties, expire_in: Type.Optional(Type.String({ description: 'e.g. "1 week"; no value keeps them forever' })) }),
      response: { 201: RunnerBuildSchema },
    },
  }, async (request, reply) => {
    const { id } = request.params as { id: number };
    const { build } = await requireBuildAccess(ctx, request, id);
    requireRunning(build);
    requireNotErased(build);
    const boundary = multipartBoundary(request.headers['content-type']);
    if (!boundary) throw badRequest('file');
    const queryExpire = (request.query as { expire_in?: string }).expire_in;
    if (queryExpire !== undefined) artifactsExpiry(queryExpire);
    const limit = await maxArtifactsBytes(ctx);
    // A declared length far over the limit is refused before reading (the multipart framing is small).
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared >= limit + 1024 * 1024) throw tooLarge();
    const { result } = await readMultipart(request.raw, boundary, 'file', (part) =>
      storeArtifacts(ctx, build, part.stream, basename(part.filename.replace(/\\/g, '/')), queryExpire ?? part.fields.expire_in, { maxBytes: limit }),
    );
    if (!result) throw badRequest('file');
    return reply.code(201).send(await runnerBuild(ctx, (await findBuild(ctx, id)) ?? build));
  });

  api.get('/builds/:id/artifacts', {
    schema: {
      tags: ['runner api'],
      summary: "Download a build's artifacts (its own token, or the token of a running build of the same pipeline): 200 file; 403; 404",
      params: IdParams, querystring: TokenQuery, response: { 200: FileResponse('application/octet-stream', 'the artifacts archive') },
    },
  }, async (request, reply) => {
    const { id } = request.params as { id: number };
    const { build } = await requireBuildAccess(ctx, request, id, { pipeline: true });
    const file = await artifactsFilePath(ctx, build);
    const info = file ? await stat(file).catch(() => null) : null;
    if (!file || !info?.isFile()) throw notFound();
    const name = basename(file);
    const encoded = encodeURIComponent(name);
    return reply
      .header('Content-Type', 'application/octet-stream')
      .header('Content-Length', String(info.size))
      .header('Content-Disposition', `attachment; filename="${name.replace(/["\\]/g, '_')}"; filename*=UTF-8''${encoded}`)
      .send(createReadStream(file));
  });

  api.delete('/builds/:id/artifacts', {
    schema: {
      tags: ['runner api'], summary: "Remove a build's artifacts: 200 build; 403; 404",
      params: IdParams, querystring: TokenQuery, response: { 200: RunnerBuildSchema },
    },
  }, async (request) => {
    const { id } = request.params as { id: number };
    const { build } = await requireBuildAccess(ctx, request, id);
    await removeArtifacts(ctx, build);
    return runnerBuild(ctx, (await findBuild(ctx, id)) ?? build);
  });
}
