/** Label presenter (GitLab v3 Label with its counts and the viewer's subscription), batched for lists. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { LabelRow } from '../../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { confidentialIssuesWhere } from '../../policy/permissions.js';
import { labelCounts } from '../../db/labels.js';
import { subscribedSet } from '../../services/collaboration/subscriptions.js';
import { Nullable } from '../params.js';

/**
 * Present labels of one project for a viewer with a fixed number of queries (counts, subscriptions). `level`: the
 * viewer's access level on the project when the route has it (saves reading it again).
 */
export async function presentLabels(ctx: AppContext, viewer: UserRow, project: ProjectRow, rows: LabelRow[], level?: number) {
  if (rows.length === 0) return [];
  const ids = rows.map((l) => l.id);
  const counts = await labelCounts(ctx.data, ids, await confidentialIssuesWhere(ctx, viewer, project, level));
  const subscribed = await subscribedSet(ctx.data, viewer.id, 'Label', ids);
  return rows.map((l) => {
    const c = counts.get(l.id)!;
    return {
      id: l.id,
      name: l.title,
      color: l.color,
      description: l.description,
      open_issues_count: c.openIssues,
      closed_issues_count: c.closedIssues,
      open_merge_requests_count: c.openMergeRequests,
      subscribed: subscribed.has(l.id),
    };
  });
}

/** Present one label for a viewer. */
export async function presentLabel(ctx: AppContext, viewer: UserRow, project: ProjectRow, row: LabelRow, level?: number) {
  return (await presentLabels(ctx, viewer, project, [row], level))[0]!;
}

/** The raw label record (DELETE /projects/:id/labels answers it, as 8.x; `priority` is 8.x's column, always null). */
export function labelRecord(l: LabelRow) {
  return {
    id: l.id, title: l.title, color: l.color, project_id: l.projectId, created_at: l.createdAt, updated_at: l.updatedAt,
    template: l.template, description: l.description, priority: null,
  };
}

const I = Type.Integer();
/** Response schema of Label. */
export const LabelSchema = Type.Object({
  id: I, name: Type.String(), color: Type.String({ description: '# and 6 hex digits' }), description: Nullable(Type.String()),
  open_issues_count: I, closed_issues_count: I, open_merge_requests_count: I, subscribed: Type.Boolean(),
});
/** Response schema of the raw label record. */
export const LabelRecordSchema = Type.Object({
  id: I, title: Type.String(), color: Type.String(), project_id: I, created_at: Type.String(), updated_at: Type.String(),
  template: Type.Boolean(), description: Nullable(Type.String()), priority: Type.Null(),
});
