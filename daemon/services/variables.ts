/**
 * Project secret variables (GitLab 8.x Ci::Variable): list, find, create, update, delete, and the plain list handed
 * to the runner. Values are stored sealed with the server secret (ctx.secrets.seal) and opened only on the way out.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { ciVariables, type CiVariableRow } from '../db/schema-variables.js';
import { validationError } from '../errors.js';

/** A variable with its value opened. */
export interface ProjectVariable {
  key: string;
  value: string;
}

const KEY_FORMAT = /^[A-Za-z0-9_]+$/;

function open(ctx: AppContext, row: CiVariableRow): ProjectVariable {
  return { key: row.key, value: ctx.secrets.open(row.value) };
}

function findRow(ctx: AppContext, projectId: number, key: string): CiVariableRow | null {
  return ctx.db.select().from(ciVariables).where(and(eq(ciVariables.projectId, projectId), eq(ciVariables.key, key))).get() ?? null;
}

/** Ci::Variable's key validations in their order: presence, uniqueness per project, length, format. */
function keyErrors(ctx: AppContext, projectId: number, key: string): string[] {
  const errors: string[] = [];
  if (key.trim() === '') errors.push("can't be blank");
  else if (findRow(ctx, projectId, key)) errors.push('has already been taken');
  if (key.length > 255) errors.push('is too long (maximum is 255 characters)');
  if (!KEY_FORMAT.test(key)) errors.push("can contain only letters, digits and '_'.");
  return errors;
}

/** Number of variables of a project. */
export function countVariables(ctx: AppContext, projectId: number): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(ciVariables).where(eq(ciVariables.projectId, projectId)).get()!.n;
}

/** One page of a project's variables, oldest first, values opened. */
export function listVariables(ctx: AppContext, projectId: number, limit = -1, offset = 0): ProjectVariable[] {
  return ctx.db.select().from(ciVariables).where(eq(ciVariables.projectId, projectId)).orderBy(asc(ciVariables.id))
    .limit(limit).offset(offset).all().map((r) => open(ctx, r));
}

/** A project's variable by key, or null. */
export function findVariable(ctx: AppContext, projectId: number, key: string): ProjectVariable | null {
  const row = findRow(ctx, projectId, key);
  return row ? open(ctx, row) : null;
}

/** Add a variable; 400 with the validation hash when the key is blank, taken, too long or badly formed. */
export function createVariable(ctx: AppContext, projectId: number, key: string, value: string): ProjectVariable {
  const errors = keyErrors(ctx, projectId, key);
  if (errors.length > 0) throw validationError({ key: errors });
  const t = now();
  try {
    ctx.db.insert(ciVariables).values({ projectId, key, value: ctx.secrets.seal(value), createdAt: t, updatedAt: t }).run();
  } catch (e) {
    // A concurrent create of the same key lost the race to the UNIQUE index.
    if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw validationError({ key: ['has already been taken'] });
    throw e;
  }
  return { key, value };
}

/** Change a variable's value (undefined leaves it as it is); null when the key does not exist. */
export function updateVariable(ctx: AppContext, projectId: number, key: string, value: string | undefined): ProjectVariable | null {
  const row = findRow(ctx, projectId, key);
  if (!row) return null;
  if (value === undefined) return open(ctx, row);
  ctx.db.update(ciVariables).set({ value: ctx.secrets.seal(value), updatedAt: now() }).where(eq(ciVariables.id, row.id)).run();
  return { key, value };
}

/** Delete a variable; the deleted variable, or null when there was none. */
export function deleteVariable(ctx: AppContext, projectId: number, key: string): ProjectVariable | null {
  const row = ctx.db.delete(ciVariables).where(and(eq(ciVariables.projectId, projectId), eq(ciVariables.key, key))).returning().get();
  return row ? open(ctx, row) : null;
}

/** Every secret variable of a project, in creation order, for a build's runner payload. */
export function secretVariables(ctx: AppContext, projectId: number): ProjectVariable[] {
  return listVariables(ctx, projectId);
}
