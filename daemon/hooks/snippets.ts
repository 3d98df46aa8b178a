/** Snippet hook attributes (GitLab 8.13 Snippet#hook_attrs: the record's columns), as note payloads embed them under `snippet`. */
import type { SnippetRow } from '../db/rows.js';

/** The `snippet` block of a note hook payload. */
export function snippetHookAttributes(s: SnippetRow): Record<string, unknown> {
  return {
    id: s.id, title: s.title, content: s.content, author_id: s.authorId, project_id: s.projectId, created_at: s.createdAt, updated_at: s.updatedAt,
    file_name: s.fileName, expires_at: null, type: 'ProjectSnippet', visibility_level: s.visibilityLevel,
  };
}
