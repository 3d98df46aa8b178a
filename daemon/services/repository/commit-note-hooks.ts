/**
 * What a comment on a commit sets off, as in GitLab 8.x: a `commented on` project event and a Note Hook delivery
 * (Gitlab::DataBuilder::Note with noteable_type Commit), written in the transaction that stores the comment.
 */
import type { AppContext } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import type { CommitNoteRow } from '../../db/schema-notes.js';
import { avatarUrl, commitWebUrl, projectUrls } from '../../web-urls.js';
import { isoDate, messageTitle, type CommitInfo } from '../../git/objects.js';
import { recordEvent } from '../instance/events.js';
import { queueHookDeliveries } from '../hooks/deliveries.js';
import { projectNamespace } from '../projects/projects.js';
import { getSettings } from '../instance/settings.js';
import { projectHookAttrs, repositoryHookAttrs } from '../../hooks/project.js';

/** What the payload needs besides the note, read before the transaction (which may read only through `tx`). */
export interface CommitNoteHookContext {
  ns: NamespaceRow;
  gravatar: boolean;
}

/** Read the project's namespace and the gravatar setting for commitNoteHookData. */
export async function commitNoteHookContext(ctx: AppContext, project: ProjectRow): Promise<CommitNoteHookContext> {
  const [ns, settings] = await Promise.all([projectNamespace(ctx, project), getSettings(ctx)]);
  return { ns, gravatar: settings.gravatarEnabled };
}

/** GitLab's note hook payload for a comment on a commit. */
export function commitNoteHookData(ctx: AppContext, project: ProjectRow, hc: CommitNoteHookContext, user: UserRow, commit: CommitInfo, note: CommitNoteRow) {
  const { ns } = hc;
  const urls = projectUrls(ctx, ns, project);
  const commitUrl = commitWebUrl(urls.web_url, commit.sha);
  return {
    object_kind: 'note',
    user: { name: user.name, username: user.username, avatar_url: avatarUrl(user, hc.gravatar) },
    project_id: project.id,
    project: projectHookAttrs(ns, project, urls),
    repository: repositoryHookAttrs(project, urls),
    object_attributes: {
      id: note.id, note: note.note, noteable_type: 'Commit', author_id: note.authorId, created_at: note.createdAt, updated_at: note.updatedAt,
      project_id: project.id, attachment: null, line_code: null, commit_id: commit.sha, noteable_id: null, system: false, st_diff: null,
      path: note.path, line: note.line, line_type: note.lineType, url: `${commitUrl}#note_${note.id}`,
    },
    commit: {
      id: commit.sha, message: commit.message, timestamp: isoDate(commit.committer).replace(/\.\d{3}(?=[+-])/, ''), url: commitUrl,
      author: { name: commit.author.name, email: commit.author.email },
    },
  };
}

/** Record the `commented on` event and queue the note hooks of a new commit comment (call inside its transaction). */
export async function afterCommitNote(
  tx: Queries, ctx: AppContext, project: ProjectRow, hc: CommitNoteHookContext, user: UserRow, commit: CommitInfo, note: CommitNoteRow,
): Promise<void> {
  await recordEvent(tx, { projectId: project.id, authorId: user.id, action: 'commented', targetId: note.id, targetType: 'Note', targetTitle: messageTitle(commit.message) });
  await queueHookDeliveries(tx, project.id, 'note', commitNoteHookData(ctx, project, hc, user, commit, note));
}
