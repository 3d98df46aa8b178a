/** ProjectService presenter (GitLab 8.13's Entities::ProjectService). */
import { Type } from '@sinclair/typebox';
import type { ProjectServiceRow } from '../../db/rows.js';
import { parseProperties, type ServiceType } from '../../services/project-services/services.js';

/**
 * id, title, created_at, updated_at, active, the event switches, and `properties`: the settings of the service's
 * fields that are set (8.13's `properties.slice(*field_names)`; Slack has no password field, so nothing is hidden).
 */
export function projectServiceEntity(s: ProjectServiceRow, type: ServiceType) {
  const props = parseProperties(s.properties);
  const properties: Record<string, unknown> = {};
  for (const f of type.fields) if (Object.hasOwn(props, f.name)) properties[f.name] = props[f.name];
  return {
    id: s.id, title: type.title, created_at: s.createdAt, updated_at: s.updatedAt, active: s.active,
    push_events: s.pushEvents, issues_events: s.issuesEvents, merge_requests_events: s.mergeRequestsEvents, tag_push_events: s.tagPushEvents,
    note_events: s.noteEvents, build_events: s.buildEvents, pipeline_events: s.pipelineEvents, properties,
  };
}

const B = Type.Boolean();
/** Response schema of ProjectService. */
export const ProjectServiceSchema = Type.Object({
  id: Type.Integer(), title: Type.String(), created_at: Type.String(), updated_at: Type.String(), active: B,
  push_events: B, issues_events: B, merge_requests_events: B, tag_push_events: B, note_events: B, build_events: B, pipeline_events: B,
  properties: Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean(), Type.Null()])),
});
