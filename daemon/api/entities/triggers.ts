/** Trigger presenters (GitLab 8.13 Entities::Trigger, Entities::TriggerRequest) and their response schemas. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { TriggerRow } from '../../db/rows.js';
import { triggerToken, type TriggeredPipeline } from '../../services/ci/triggers.js';
import { Nullable } from '../params.js';
import { pipelineBasic, PipelineBasicSchema } from './pipelines.js';

const NS = Nullable(Type.String());

/** Trigger: token, created_at, updated_at, deleted_at, last_used (the newest trigger request's time). */
export const TriggerSchema = Type.Object({ token: Type.String(), created_at: Type.String(), updated_at: Type.String(), deleted_at: NS, last_used: NS });

/** The Trigger entity of a trigger row. */
export function triggerEntity(ctx: AppContext, t: TriggerRow) {
  return { token: triggerToken(ctx, t), created_at: t.createdAt, updated_at: t.updatedAt, deleted_at: t.deletedAt, last_used: t.lastUsed };
}

/**
 * TriggerRequest: 8.13's id and variables (the hash given, or null), with created_at, updated_at and deleted_at of
 * the row as later GitLab versions show them, and the pipeline it created (PipelineBasic), which 8.13 did not send:
 * a superset (docs/DECISIONS.md rule 2), so that a caller can follow the pipeline it started.
 */
export const TriggerRequestSchema = Type.Object({
  id: Type.Integer(), variables: Nullable(Type.Record(Type.String(), Type.String())), created_at: Type.String(), updated_at: Type.String(), deleted_at: NS,
  pipeline: PipelineBasicSchema,
});

/** The TriggerRequest entity, with its pipeline. */
export function triggerRequestEntity({ request: r, pipeline }: TriggeredPipeline) {
  return { id: r.id, variables: r.variables, created_at: r.createdAt, updated_at: r.updatedAt, deleted_at: null, pipeline: pipelineBasic(pipeline) };
}
