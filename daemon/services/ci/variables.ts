/**
 * Project secret variables (GitLab 8.x Ci::Variable): list, find, create, update, delete, and the plain list handed
 * to the runner. Values are stored sealed with the server secret (ctx.secrets.seal) and opened only on the way out.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import { notFound, validationError } from '../../errors.js';
import {
  countVariableRows, deleteVariableRow, insertVariable, updateVariableValue, variableRow, variableRows, type VariableRow,
} from '../../db/variables.js';

/** A variable with its value opened. */
export interface ProjectVariable {
  key: string;
  value: string;
}

const KEY_FORMAT = /^[A-Za-z0-9_]+$/;

function open(ctx: AppContext, row: VariableRow): ProjectVariable {
  return { key: row.key, value: ctx.secrets.open(row.value) };
}

const findRow = variableRow;

/** Ci::Variable's key validations in their order: presence, uniqueness per project, length, format. */
async function keyErrors(q: Queries, projectId: number, key: string): Promise<string[]> {
  const errors: string[] = [];
  if (key.trim() === '') errors.push("can't be blank");
  else if (await findRow(q, projectId, key)) errors.push('has already been taken');
  if (key.length > 255) errors.push('is too long (maximum is 255 characters)');
  if (!KEY_FORMAT.test(key)) errors.push("can contain only letters, digits and '_'.");
  return errors;
}

/** Number of variables of a project. */
export async function countVariables(ctx: AppContext, projectId: number, q: Queries = ctx.data): Promise<number> {
  return countVariableRows(q, projectId);
}

/** One page of a project's variables, oldest first, values opened (limit -1: all). */
export async function listVariables(ctx: AppContext, projectId: number, limit = -1, offset = 0, q: Queries = ctx.data): Promise<ProjectVariable[]> {
  return (await variableRows(q, projectId, limit, offset)).map((r) => open(ctx, r));
}

/** A project's variable by key, or null. */
export async function findVariable(ctx: AppContext, projectId: number, key: string): Promise<ProjectVariable | null> {
  const row = await findRow(ctx.data, projectId, key);
  return row ? open(ctx, row) : null;
}

/** Add a variable; 400 with the validation hash when the key is blank, taken, too long or badly formed. */
export async function createVariable(ctx: AppContext, projectId: number, key: string, value: string): Promise<ProjectVariable> {
  const errors = await keyErrors(ctx.data, projectId, key);
  if (errors.length > 0) throw validationError({ key: errors });
  const t = now();
  try {
    await insertVariable(ctx.data, projectId, key, ctx.secrets.seal(value), t);
  } catch (e) {
    // A concurrent create of the same key lost the race to the UNIQUE index.
    if (isUniqueViolation(e)) throw validationError({ key: ['has already been taken'] });
    if (isForeignKeyViolation(e)) throw notFound('Project'); // the project was deleted meanwhile
    throw e;
  }
  return { key, value };
}

/** Change a variable's value (undefined leaves it as it is); null when the key does not exist. */
export async function updateVariable(ctx: AppContext, projectId: number, key: string, value: string | undefined): Promise<ProjectVariable | null> {
  if (value === undefined) {
    const row = await findRow(ctx.data, projectId, key);
    return row ? open(ctx, row) : null;
  }
  return (await updateVariableValue(ctx.data, projectId, key, ctx.secrets.seal(value), now())) ? { key, value } : null;
}

/** Delete a variable; the deleted variable, or null when there was none. */
export async function deleteVariable(ctx: AppContext, projectId: number, key: string): Promise<ProjectVariable | null> {
  const row = await deleteVariableRow(ctx.data, projectId, key);
  return row ? open(ctx, row) : null;
}

/** Every secret variable of a project, in creation order, for a build's runner payload. */
export function secretVariables(ctx: AppContext, projectId: number, q: Queries = ctx.data): Promise<ProjectVariable[]> {
  return listVariables(ctx, projectId, -1, 0, q);
}
