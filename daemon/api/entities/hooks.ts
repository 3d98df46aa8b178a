/** ProjectHook presenter (GitLab v3 entity; the secret token is never shown). */
import { Type } from '@sinclair/typebox';
import type { ProjectHookRow } from '../../db/schema.js';
import type { SystemHookRow } from '../../db/rows.js';

/** ProjectHook: id, url, created_at, project_id and the event switches. */
export function projectHookEntity(h: ProjectHookRow) {
  return {
    id: h.id,
    url: h.url,
    created_at: h.createdAt,
    project_id: h.projectId,
    push_events: h.pushEvents,
    issues_events: h.issuesEvents,
    merge_requests_events: h.mergeRequestsEvents,
    tag_push_events: h.tagPushEvents,
    note_events: h.noteEvents,
    build_events: h.buildEvents,
    pipeline_events: h.pipelineEvents,
    wiki_page_events: h.wikiPageEvents,
    enable_ssl_verification: h.enableSslVerification,
  };
}

const B = Type.Boolean();
/** Response schema of ProjectHook. */
export const ProjectHookSchema = Type.Object({
  id: Type.Integer(), url: Type.String(), created_at: Type.String(), project_id: Type.Integer(),
  push_events: B, issues_events: B, merge_requests_events: B, tag_push_events: B, note_events: B, build_events: B,
  pipeline_events: B, wiki_page_events: B, enable_ssl_verification: B,
});

/**
 * Hook (a system hook): 8.13's id, url and created_at, with the switches POST /hooks takes (push_events,
 * tag_push_events, enable_ssl_verification), as later v3 servers show them. The token is never shown.
 */
export function systemHookEntity(h: SystemHookRow) {
  return {
    id: h.id, url: h.url, created_at: h.createdAt, push_events: h.pushEvents, tag_push_events: h.tagPushEvents,
    enable_ssl_verification: h.enableSslVerification,
  };
}

/** Response schema of a system hook. */
export const SystemHookSchema = Type.Object({
  id: Type.Integer(), url: Type.String(), created_at: Type.String(), push_events: B, tag_push_events: B, enable_ssl_verification: B,
});
