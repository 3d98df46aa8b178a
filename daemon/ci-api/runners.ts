/** POST /runners/register and DELETE /runners/delete of the runner API (runner-protocol.md 1.8, 1.9). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.js';
import { deleteRunner, registerRunner } from '../services/ci/runners.js';
import { param, rawParam, requireRunner } from './auth.js';

const RegisterBody = Type.Object({
  token: Type.Optional(Type.String({ description: 'the instance registration token (shared runner) or a project runners token (specific runner)' })),
  description: Type.Optional(Type.String()),
  tag_list: Type.Optional(Type.Unknown({ description: 'comma-separated tags (an array is accepted too)' })),
  run_untagged: Type.Optional(Type.Boolean({ description: 'take builds without tags (default true)' })),
  locked: Type.Optional(Type.Boolean({ description: 'a specific runner that may not be enabled for other projects (default false)' })),
  info: Type.Optional(Type.Unknown({ description: '{name, version, revision, platform, architecture}' })),
});

const RunnerSchema = Type.Object({
  id: Type.Integer(),
  description: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  is_shared: Type.Boolean(),
  name: Type.Union([Type.String(), Type.Null()]),
});

/** Registers the runner registration routes. */
export default async function runnerRegistrationRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.post('/runners/register', {
    schema: {
      tags: ['runner api'], summary: 'Register a runner: 201 {id, token}; 403 for a bad registration token; 404 for no tags with run_untagged false',
      body: RegisterBody, response: { 201: Type.Object({ id: Type.Integer(), token: Type.String() }) },
    },
  }, async (request, reply) => {
    const token = param(request, 'token');
    if (!token) throw badRequest('token');
    const { runner, token: runnerToken } = await registerRunner(ctx, {
      token, description: rawParam(request, 'description'), tag_list: rawParam(request, 'tag_list'),
      run_untagged: rawParam(request, 'run_untagged'), locked: rawParam(request, 'locked'), info: rawParam(request, 'info'),
    });
    return reply.code(201).send({ id: runner.id, token: runnerToken });
  });

  api.delete('/runners/delete', {
    schema: {
      tags: ['runner api'], summary: 'Remove the runner with this token: 200; 400 without token; 403 unknown token',
      body: Type.Object({ token: Type.Optional(Type.String()) }), response: { 200: RunnerSchema },
    },
  }, async (request) => {
    if (!param(request, 'token')) throw badRequest('token');
    const runner = await requireRunner(ctx, request);
    await deleteRunner(ctx, runner);
    return { id: runner.id, description: runner.description, active: runner.active, is_shared: runner.isShared, name: runner.name };
  });
}
