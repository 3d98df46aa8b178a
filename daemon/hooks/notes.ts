/**
 * Note webhook payloads (GitLab 8.x Gitlab::DataBuilder::Note): object_kind "note", user, project_id, project,
 * repository, object_attributes (the note's columns plus its web url) and the noteable under `issue`,
 * `merge_request` or `snippet`. Below the API: services build payloads without importing presenters.
 * OWNER: notes/award-emoji engineer.
 */
import type { AppContext } from '../context.js';
import type { IssueRow, NoteRow, NoteableType } from '../db/schema-collaboration.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { issueHookAttributes, projectHookBlocks, userHookAttributes, type ProjectHookBlocks } from './issues.js';
import type { Queries } from '../db/layer/types.js';
import type { SnippetRow } from '../db/rows.js';
import { snippetHookAttributes } from './snippets.js';

/** What the payload needs of the noteable: its kind, number, and own row (for its hook attributes). */
export interface HookNoteable {
  type: NoteableType;
  id: number;
  iid: number | null;
  row: unknown;
}

/** How note payloads embed a kind of noteable: its key, its web path, and its hook attributes (read through `q`). */
type NoteableHook = {
  key: string; path: (n: HookNoteable) => string;
  attributes: (ctx: AppContext, q: Queries, row: unknown) => Record<string, unknown> | Promise<Record<string, unknown>>;
};

/** The payload key and hook attributes of each kind of noteable; merge requests register theirs. */
const NOTEABLE_HOOKS: Partial<Record<NoteableType, NoteableHook>> = {
  Issue: { key: 'issue', path: (n) => `issues/${n.iid}`, attributes: (ctx, _q, row) => issueHookAttributes(ctx, row as IssueRow) },
  Snippet: { key: 'snippet', path: (n) => `snippets/${n.id}`, attributes: (_ctx, _q, row) => snippetHookAttributes(row as SnippetRow) },
};

/** Register how note payloads embed a kind of noteable (merge requests: `merge_request`, `merge_requests/<iid>`). */
export function setNoteableHookAttributes(type: NoteableType, key: string, path: NoteableHook['path'], attributes: NoteableHook['attributes']): void {
  NOTEABLE_HOOKS[type] = { key, path, attributes };
}

/** The web URL of a note: `<project web_url>/issues/<iid>#note_<id>` (merge requests and snippets alike). */
export function noteWebUrl(projectWebUrl: string, noteable: HookNoteable, noteId: number): string {
  const h = NOTEABLE_HOOKS[noteable.type];
  const path = h ? h.path(noteable) : `${noteable.type === 'Snippet' ? 'snippets' : 'merge_requests'}/${noteable.iid ?? noteable.id}`;
  return `${projectWebUrl}/${path}#note_${noteId}`;
}

async function notePayloadOf(
  ctx: AppContext, q: Queries, project: ProjectRow, user: Record<string, unknown>, note: NoteRow, noteable: HookNoteable,
  blocks: ProjectHookBlocks,
): Promise<Record<string, unknown>> {
  const payload: Record<string, unknown> = {
    object_kind: 'note',
    user,
    project_id: project.id,
    project: blocks.project,
    repository: blocks.repository,
    object_attributes: {
      id: note.id, note: note.note, noteable_type: note.noteableType, author_id: note.authorId, created_at: note.createdAt,
      updated_at: note.updatedAt, project_id: note.projectId, attachment: note.attachment, line_code: null, commit_id: null,
      noteable_id: note.noteableId, system: note.system, st_diff: null, updated_by_id: note.updatedById,
      url: noteWebUrl(blocks.project.web_url as string, noteable, note.id),
    },
  };
  const h = NOTEABLE_HOOKS[noteable.type];
  if (h) payload[h.key] = await h.attributes(ctx, q, noteable.row);
  return payload;
}

/** The whole note hook payload of a new note by `user`, read through the note's transaction `tx`; `gravatar`: the setting, read before it. */
export async function noteHookPayload(
  ctx: AppContext, tx: Queries, project: ProjectRow, user: UserRow, note: NoteRow, noteable: HookNoteable, gravatar: boolean,
): Promise<Record<string, unknown>> {
  const blocks = await projectHookBlocks(ctx, tx, project);
  return notePayloadOf(ctx, tx, project, userHookAttributes(ctx, user, gravatar), note, noteable, blocks);
}
