/**
 * Route hooks shared by the project routes: resolve `:id` (404 hidden, 403 ability missing) BEFORE body validation,
 * as GitLab's `authorize!` ran before `required_attributes!`, so a caller without rights never learns about params.
 */
import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { requireUser } from '../policy/authentication.js';
import { NOT_BLANK } from './params.js';
import type { ProjectAbility } from '../policy/permissions.js';
import { findProjectWithLevelAsync } from '../services/projects.js';

const resolved = new WeakMap<FastifyRequest, ProjectRow>();

const levels = new WeakMap<FastifyRequest, number>();

/**
 * preValidation hook: resolve the project of `:id` for the caller, needing `ability` (404 hidden, 403 ability missing).
 * The caller's access level, when it was read, is kept for the route (projectLevelOf).
 */
export function loadProjectAsync(ability: ProjectAbility = 'read_project'): preValidationAsyncHookHandler {
  return async function (request) {
    const { id } = request.params as { id: string };
    const { project, level } = await findProjectWithLevelAsync(request.server.ctx, request.user, id, ability);
    resolved.set(request, project);
    if (level !== undefined) levels.set(request, level);
  };
}

/** The caller's access level on the project of loadProjectAsync, when it read it (undefined for admins and others). */
export function projectLevelOf(request: FastifyRequest): number | undefined {
  return levels.get(request);
}

/**
 * The project of loadProjectAsync and the caller's level, as of now: on SQLite those the hook read (its reads and the
 * route's version read run in one stretch of promise callbacks, which no other request's write interleaves); on PostgreSQL read again, needing `ability` (404/403 as
 * the hook), for an answer kept under a version read after the hook (api/response-cache.ts): another daemon may have
 * written in between, and a kept answer must never be older than its version.
 */
export async function currentProjectAsync(request: FastifyRequest, ability: ProjectAbility): Promise<{ project: ProjectRow; level: number | undefined }> {
  const { ctx } = request.server;
  if (ctx.data.dialect.name !== 'postgres') return { project: projectOf(request), level: projectLevelOf(request) };
  return findProjectWithLevelAsync(ctx, request.user, projectOf(request).id, ability);
}

/** The project resolved by loadProject for this request. */
export function projectOf(request: FastifyRequest): ProjectRow {
  const project = resolved.get(request);
  if (!project) throw new Error('projectOf() without the loadProjectAsync() hook on the route');
  return project;
}

/** preValidation hook: administrators only (403 otherwise), checked before the params (the policy's rule). */
export { adminOnly } from '../policy/authentication.js';

/** The signed-in caller (routes under /api/v3 always have one). */
export const callerOf = (request: FastifyRequest): UserRow => requireUser(request);

/**
 * preValidation hook: drop body keys whose value is null or blank, as GitLab's attributes_for_keys did, so that
 * `null` never turns into false/0 through type coercion and a blank optional text field counts as not given; on a PUT
 * a blank field marked NotBlank (params.ts) stays, so the update answers `can't be blank` instead of ignoring it.
 * A request without a body gets an empty one.
 */
export const dropBlankParams: preValidationAsyncHookHandler = async function (request) {
  // No body at all counts as an empty form, so a missing required param reads `"<attr>" not given`.
  if (request.body === undefined || request.body === null) request.body = {};
  const body = request.body;
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body) || Array.isArray(body)) return;
  const b = body as Record<string, unknown>;
  const keep = request.method === 'PUT' ? notBlankKeys(request) : undefined;
  for (const [k, v] of Object.entries(b)) if (v === null || (v === '' && !keep?.has(k))) delete b[k];
};

/** The body fields of the route marked NotBlank (params.ts): a blank one is kept on updates, for the service to refuse. */
function notBlankKeys(request: FastifyRequest): Set<string> {
  const body = (request.routeOptions.schema as { body?: { properties?: Record<string, Record<string, unknown>> } } | undefined)?.body;
  return new Set(Object.entries(body?.properties ?? {}).filter(([, prop]) => prop[NOT_BLANK] === true).map(([k]) => k));
}
