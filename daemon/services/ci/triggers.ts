/**
 * Build triggers (GitLab 8.13 Ci::Trigger, Ci::TriggerRequest, Ci::CreateTriggerRequestService): a project's trigger
 * tokens, and the pipelines they start without a user. Tokens are 30 hex characters as 8.13's SecureRandom.hex(15),
 * stored sealed (the API shows them again) and looked up by their SHA-256; a deleted trigger keeps its row with
 * deleted_at (8.13's acts_as_paranoid) and its token stops working. The variables of a trigger request are stored
 * sealed and handed to the runner with the builds of its pipeline (public: false).
 */
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ProjectRow } from '../../db/schema.js';
import type { PipelineRow } from '../../db/schema-ci.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import type { TriggerRequestRow, TriggerRow } from '../../db/rows.js';
import {
  insertTrigger, insertTriggerRequest, liveTriggerOfTokenHash, markTriggerDeleted, triggerByTokenHash, triggerLive, triggerRequestRowOfPipeline,
} from '../../db/ci/triggers.js';
import { badRequestMessage, notFound } from '../../errors.js';
import { hashToken } from '../../secrets.js';
import { preparePipelineForTrigger, writePreparedPipeline } from './pipelines.js';

/** A trigger request as the API shows it: its variables opened (null when none were given). */
export interface TriggerRequest extends TriggerRequestRow {
  variables: Record<string, string> | null;
}

/** What POST /projects/:id/trigger/builds made: the trigger request and its pipeline. */
export interface TriggeredPipeline {
  request: TriggerRequest;
  pipeline: PipelineRow;
}

/** The plain token of a trigger row. */
export function triggerToken(ctx: AppContext, row: TriggerRow): string {
  return ctx.secrets.open(row.tokenSealed);
}

/** A project's live trigger by its token, or null. */
export function findTrigger(ctx: AppContext, projectId: number, token: string): Promise<TriggerRow | null> {
  return triggerByTokenHash(ctx.data, projectId, hashToken(token));
}

/** Create a trigger with a new token (8.13: SecureRandom.hex(15)). 404 when the project was deleted meanwhile. */
export async function createTrigger(ctx: AppContext, project: ProjectRow): Promise<TriggerRow> {
  const token = randomBytes(15).toString('hex');
  const at = now();
  try {
    return await insertTrigger(ctx.data, project.id, hashToken(token), ctx.secrets.seal(token), at);
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
}

/**
 * Delete a project's trigger by token (8.13 keeps it with deleted_at): the trigger as deleted, with its last use, or
 * null when there is no live trigger of that token (a concurrent delete included).
 */
export async function deleteTrigger(ctx: AppContext, projectId: number, token: string): Promise<TriggerRow | null> {
  return ctx.data.transaction(async (tx) => {
    if (!(await markTriggerDeleted(tx, projectId, hashToken(token), now()))) return null;
    return triggerByTokenHash(tx, projectId, hashToken(token), true);
  });
}

/** 8.13's check of the `variables` parameter: absent, or a hash whose keys and values are all strings. */
export function checkTriggerVariables(variables: unknown): Record<string, string> | null {
  if (variables === undefined || variables === null) return null;
  if (typeof variables !== 'object' || Array.isArray(variables)) throw badRequestMessage('variables needs to be a hash');
  const entries = Object.entries(variables as Record<string, unknown>);
  if (!entries.every(([, v]) => typeof v === 'string')) throw badRequestMessage('variables needs to be a map of key-valued strings');
  return Object.fromEntries(entries) as Record<string, string>;
}

function openRequest(ctx: AppContext, row: TriggerRequestRow): TriggerRequest {
  const variables = row.variablesSealed === null ? null : (JSON.parse(ctx.secrets.open(row.variablesSealed)) as Record<string, string>);
  return { ...row, variables };
}

/**
 * POST /projects/:id/trigger/builds (8.13 CreateTriggerRequestService): the trigger of `token` must be a live trigger
 * of `project` (404 otherwise, see docs/decisions.md); a pipeline is created for `ref` from its .gitlab-ci.yml
 * (preparePipelineForTrigger; 400 "No builds created" when none is) and the trigger request recorded with it in one
 * transaction. Returns the trigger request and the pipeline.
 */
export async function runTrigger(
  ctx: AppContext, project: ProjectRow, token: string, ref: string, variables: Record<string, string> | null,
): Promise<TriggeredPipeline> {
  const trigger = await liveTriggerOfTokenHash(ctx.data, hashToken(token));
  if (!trigger || trigger.projectId !== project.id) throw notFound();
  const prepared = await preparePipelineForTrigger(ctx, project, ref);
  if (!prepared) throw badRequestMessage('No builds created');
  try {
    const made = await ctx.data.transaction(async (tx) => {
      // the trigger may have been deleted while the repository was read
      if (!(await triggerLive(tx, trigger.id))) return null;
      const pipeline = await writePreparedPipeline(ctx, tx, project, null, prepared);
      const at = now();
      const sealed = variables === null ? null : ctx.secrets.seal(JSON.stringify(variables));
      return { row: await insertTriggerRequest(tx, trigger.id, pipeline.id, sealed, at), pipeline };
    });
    if (!made) throw notFound();
    return { request: openRequest(ctx, made.row), pipeline: made.pipeline };
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
}

/** The trigger request that created a pipeline, variables opened, or null for a pipeline no trigger made. */
export async function triggerRequestOfPipeline(ctx: AppContext, pipelineId: number, q: Queries = ctx.data): Promise<TriggerRequest | null> {
  const row = await triggerRequestRowOfPipeline(q, pipelineId);
  return row ? openRequest(ctx, row) : null;
}
