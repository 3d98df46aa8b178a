/**
 * Route hooks shared by the project routes: resolve `:id` (404 hidden, 403 ability missing) BEFORE body validation,
 * as GitLab's `authorize!` ran before `required_attributes!`, so a caller without rights never learns about params.
 */
import type { FastifyRequest, preValidationAsyncHookHandler, preValidationHookHandler } from 'fastify';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { requireUser } from '../policy/authentication.js';
import { NOT_BLANK } from './params.js';
import type { ProjectAbility } from '../policy/permissions.js';
import { checkProjectAccess } from '../services/projects/projects.js';
import { peekProjectAccess, projectAccessAsync, type ProjectWithLevel } from '../db/access.js';
import { requestVersion } from '../db/read-cache.js';

/** What loadProject resolved for a request: the project and the caller's level on it (read once per request). */
export interface ProjectAccess {
  project: ProjectRow;
  /** The caller's access level (undefined when no rule needs it: admins, blocked or anonymous callers). */
  level: number | undefined;
}

const resolved = new WeakMap<FastifyRequest, ProjectAccess>();

/** Reads that may share one write version for the whole request (db/read-cache.ts requestVersion). */
const READS = new Set(['GET', 'HEAD']);

/**
 * preValidation hook: resolve the project of `:id` for the caller, needing `ability` (404 hidden, 403 ability missing),
 * and the caller's access level, once for the request (projectOf, projectLevelOf, projectAccessOf hand them down).
 * A kept lookup (SQLite, nothing written since) is answered at once, without a promise; on PostgreSQL a read
 * request reads the write version first and shares it with the response cache (one statement for a kept answer).
 */
export function loadProject(ability: ProjectAbility = 'read_project'): preValidationHookHandler {
  return function (request, _reply, done) {
    const ctx = request.server.ctx;
    const { id } = request.params as { id: string };
    const admit = (access: ProjectWithLevel) => {
      try {
        resolved.set(request, checkProjectAccess(request.user, access, ability));
      } catch (e) {
        return done(e as Error);
      }
      done();
    };
    const kept = peekProjectAccess(ctx, request.user, id);
    if (kept) return admit(kept);
    const version = !ctx.data.sqlite && READS.has(request.method) ? requestVersion(ctx, request) : undefined;
    Promise.resolve(version)
      .then((v) => projectAccessAsync(ctx, request.user, id, v))
      .then(admit, (e: Error) => done(e));
  };
}

/** The project and the caller's level resolved by loadProject for this request. */
export function projectAccessOf(request: FastifyRequest): ProjectAccess {
  const access = resolved.get(request);
  if (!access) throw new Error('projectAccessOf() without the loadProject() hook on the route');
  return access;
}

/** The caller's access level on the project of loadProject (undefined for admins, blocked or anonymous callers). */
export function projectLevelOf(request: FastifyRequest): number | undefined {
  return projectAccessOf(request).level;
}

/** The project resolved by loadProject for this request. */
export function projectOf(request: FastifyRequest): ProjectRow {
  return projectAccessOf(request).project;
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
