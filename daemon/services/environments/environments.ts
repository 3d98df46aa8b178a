/**
 * Environments (GitLab 8.13 Environment, lib/api/environments.rb): a project's named places builds deploy to. The
 * API lists, creates, renames and deletes them; a successful build whose job names one creates it (deployments.ts).
 * The model's validations answer 400 with the errors hash, as 8.13's render_validation_error!.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import type { EnvironmentRow } from '../../db/rows.js';
import {
  deleteEnvironmentRow, environmentById, environmentValueTaken, insertEnvironment, updateEnvironmentRow,
} from '../../db/ci/environments.js';
import { ENVIRONMENT_NAME, ENVIRONMENT_NAME_MESSAGE, isAddressableUrl } from '../../ci/config-entries.js';
import { isRowId } from '../../db/builds.js';
import { notFound, validationError } from '../../errors.js';

/** What the API sets: a name and an external URL (a blank URL clears it, as 8.13's nullify_external_url). */
export interface EnvironmentParams {
  name?: string;
  externalUrl?: string | null;
}

const TAKEN = 'has already been taken';
const TOO_LONG = 'is too long (maximum is 255 characters)';

/** 8.13's environment_type: the part before the first `/` of a name that has one. */
export function environmentType(name: string): string | null {
  const parts = name.split('/').filter((p) => p !== '');
  return parts.length > 1 ? parts[0]! : null;
}

/** A blank URL is no URL (before_validation :nullify_external_url). */
export function normalizeUrl(url: string | null | undefined): string | null {
  return url === undefined || url === null || url.trim() === '' ? null : url;
}

/** The errors of the name alone (presence, length, format), without its uniqueness. */
export function nameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name.trim() === '') errors.push("can't be blank");
  if (name.length > 255) errors.push(TOO_LONG);
  if (!ENVIRONMENT_NAME.test(name)) errors.push(ENVIRONMENT_NAME_MESSAGE);
  return errors;
}

/** The errors of an external URL alone (length, an http/https/ssh/git URL), without its uniqueness. */
export function urlErrors(url: string): string[] {
  const errors: string[] = [];
  if (url.length > 255) errors.push(TOO_LONG);
  if (!isAddressableUrl(url)) errors.push('must be a valid URL');
  return errors;
}

/** Another environment of the project (not `exceptId`) has this column value (never one with NUL: none is stored). */
async function taken(q: Queries, projectId: number, column: 'name' | 'external_url', value: string, exceptId: number | null): Promise<boolean> {
  if (value.includes('\0')) return false; // PostgreSQL refuses NUL in text even in a comparison
  return environmentValueTaken(q, projectId, column, value, exceptId);
}

/** 8.13's validations in their order: name presence, uniqueness, length, format; external_url uniqueness, length, URL. */
export async function environmentErrors(q: Queries, projectId: number, name: string, url: string | null, exceptId: number | null): Promise<Record<string, string[]>> {
  const errors: Record<string, string[]> = {};
  const n = nameErrors(name);
  if (name.trim() !== '' && (await taken(q, projectId, 'name', name, exceptId))) n.unshift(TAKEN); // after presence, which passed
  if (n.length) errors.name = n;
  if (url !== null) {
    const u = urlErrors(url);
    if (await taken(q, projectId, 'external_url', url, exceptId)) u.unshift(TAKEN);
    if (u.length) errors.external_url = u;
  }
  return errors;
}

/** A project's environment by id, or null (another project's, or an id beyond any row, is not found). */
export async function findEnvironment(ctx: AppContext, projectId: number, id: number): Promise<EnvironmentRow | null> {
  return isRowId(id) ? environmentById(ctx.data, projectId, id) : null;
}

/** Create an environment: 400 with the errors hash on a bad or taken name or URL; nothing written then. */
export async function createEnvironment(ctx: AppContext, projectId: number, params: { name: string; externalUrl?: string | null }): Promise<EnvironmentRow> {
  const url = normalizeUrl(params.externalUrl);
  const errors = await environmentErrors(ctx.data, projectId, params.name, url, null);
  if (Object.keys(errors).length) throw validationError(errors);
  const t = now();
  try {
    return await insertEnvironment(ctx.data, { projectId, name: params.name, externalUrl: url, environmentType: environmentType(params.name), at: t });
  } catch (e) {
    // a concurrent create of the same name won the race for the unique index: the answer the validation gives
    if (isUniqueViolation(e)) throw validationError({ name: [TAKEN] });
    if (isForeignKeyViolation(e)) throw notFound('Project'); // the project was deleted meanwhile
    throw e;
  }
}

/**
 * Rename an environment or change its URL (absent params are left as they are; a blank URL clears it): 400 with the
 * errors hash when the result is invalid; null when the environment is gone (deleted meanwhile too).
 */
export async function updateEnvironment(ctx: AppContext, env: EnvironmentRow, params: EnvironmentParams): Promise<EnvironmentRow | null> {
  const name = params.name ?? env.name;
  const url = params.externalUrl === undefined ? env.externalUrl : normalizeUrl(params.externalUrl);
  const errors = await environmentErrors(ctx.data, env.projectId, name, url, env.id);
  if (Object.keys(errors).length) throw validationError(errors);
  try {
    return await updateEnvironmentRow(ctx.data, env.projectId, env.id, { name, externalUrl: url, environmentType: environmentType(name), at: now() });
  } catch (e) {
    if (isUniqueViolation(e)) throw validationError({ name: [TAKEN] });
    throw e;
  }
}

/** Delete an environment and its deployments; the deleted row, or null when there was none. */
export async function deleteEnvironment(ctx: AppContext, projectId: number, id: number): Promise<EnvironmentRow | null> {
  if (!isRowId(id)) return null;
  return deleteEnvironmentRow(ctx.data, projectId, id);
}
