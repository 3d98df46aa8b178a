/**
 * /api/v3/projects/:id/repository/branches: list, show, create, delete, protect and unprotect. Branch names may
 * contain `/` (URL-encoded as %2F or not), so the single-branch routes are wildcards.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import {
  createBranch, deleteBranch, findBranchWithRules, listBranchesWithRules, protectExistingBranch, unprotectExistingBranch, type BranchWithRules,
} from '../services/repository/branches.js';
import { repoBranch, RepoBranchSchema } from './entities/repository.js';
import { paginateArray } from './pagination.js';
import { Bool, PageParams, ProjectIdParams, RequiredString } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectOf } from './project-scope.js';
import { mergeQueryParams, wildcardOf } from './repository-scope.js';

const O = Type.Optional;
const tags = ['branches'];
const BranchParams = Type.Object({ id: Type.String(), '*': Type.String({ description: 'branch name (may contain /)' }) });
const CreateBody = Type.Object({
  branch_name: RequiredString({ description: 'the new branch' }),
  ref: RequiredString({ description: 'branch, tag or sha to start it at' }),
});
const ProtectBody = Type.Object({
  developers_can_push: O(Bool({ description: 'let developers push (default false for a new rule)' })),
  developers_can_merge: O(Bool({ description: 'let developers merge (default false for a new rule)' })),
});

const present = (b: BranchWithRules) => repoBranch(b, b.rules);

/** Registers the branch routes. */
export default async function branchRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;
  const read = loadProject('download_code');
  const push = loadProject('push_code');

  api.get('/projects/:id/repository/branches', {
    preValidation: read,
    schema: { tags, params: ProjectIdParams, querystring: Type.Object(PageParams), response: { 200: Type.Array(RepoBranchSchema) } },
  }, async (request, reply) => paginateArray(request, reply, await listBranchesWithRules(ctx, projectOf(request))).map(present));

  api.get('/projects/:id/repository/branches/*', {
    preValidation: read,
    schema: { tags, params: BranchParams, response: { 200: RepoBranchSchema } },
  }, async (request) => present(await findBranchWithRules(ctx, projectOf(request), wildcardOf(request))));

  api.post('/projects/:id/repository/branches', {
    preValidation: [push, mergeQueryParams, dropBlankParams],
    schema: { tags, params: ProjectIdParams, body: CreateBody, response: { 201: RepoBranchSchema } },
  }, async (request, reply) => {
    const b = request.body as Static<typeof CreateBody>;
    const branch = await createBranch(ctx, projectOf(request), callerOf(request), b.branch_name, b.ref);
    return reply.code(201).send(present(branch));
  });

  api.delete('/projects/:id/repository/branches/*', {
    preValidation: push,
    schema: { tags, params: BranchParams, response: { 200: Type.Object({ branch_name: Type.String() }) } },
  }, async (request) => {
    const name = wildcardOf(request);
    await deleteBranch(ctx, projectOf(request), callerOf(request), name);
    return { branch_name: name };
  });

  // PUT .../branches/<name>/protect and .../unprotect (the name may itself contain `/`).
  api.put('/projects/:id/repository/branches/*', {
    preValidation: [loadProject('admin_project'), mergeQueryParams, dropBlankParams],
    schema: { tags, params: BranchParams, body: ProtectBody, response: { 200: RepoBranchSchema } },
  }, async (request) => {
    const m = /^(.+)\/(protect|unprotect)$/.exec(wildcardOf(request));
    if (!m) throw notFound();
    const project = projectOf(request);
    if (m[2] === 'unprotect') return present(await unprotectExistingBranch(ctx, project, m[1]!));
    const b = request.body as Static<typeof ProtectBody>;
    return present(await protectExistingBranch(ctx, project, m[1]!, { developersCanPush: b.developers_can_push, developersCanMerge: b.developers_can_merge }));
  });
}
