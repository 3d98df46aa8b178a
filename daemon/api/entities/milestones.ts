/** Milestone presenter (GitLab v3 Milestone), used by the milestones routes and inside Issue and MergeRequest. */
import { Type } from '@sinclair/typebox';
import type { MilestoneRow } from '../../db/schema-collaboration.js';
import { Nullable } from '../params.js';

/** Milestone: id, iid, project_id, title, description, state (active/closed), created_at, updated_at, due_date. */
export function milestoneEntity(m: MilestoneRow) {
  return {
    id: m.id,
    iid: m.iid,
    project_id: m.projectId,
    title: m.title,
    description: m.description,
    state: m.state,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    due_date: m.dueDate,
  };
}

/** Response schema of Milestone. */
export const MilestoneSchema = Type.Object({
  id: Type.Integer(), iid: Type.Integer(), project_id: Type.Integer(), title: Type.String(), description: Type.String(),
  state: Type.String({ description: 'active or closed' }), created_at: Type.String(), updated_at: Type.String(),
  due_date: Nullable(Type.String({ description: 'YYYY-MM-DD' })),
});
