/** ProjectSnippet presenter (GitLab 8.13 Entities::ProjectSnippet), batched: one query for the authors of a page. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { SnippetRow } from '../../db/rows.js';
import type { ProjectRow } from '../../db/schema.js';
import { projectNamespace } from '../../services/projects/projects.js';
import { Nullable } from '../params.js';
import { usersByIds } from '../../db/users.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

/**
 * Snippets of one project: id, title, file_name, author, updated_at, created_at, expires_at (always null: 8.13
 * deprecated it) and web_url (`<project web_url>/snippets/<id>`, GitLab's project_snippet_url).
 */
export async function presentSnippets(ctx: AppContext, project: ProjectRow, rows: SnippetRow[]) {
  const users = await usersByIds(ctx.data, rows.map((r) => r.authorId));
  const gravatar = await gravatarEnabledAsync(ctx);
  const web = `${ctx.externalUrl()}/${(await projectNamespace(ctx, project)).path}/${project.path}/snippets`;
  return rows.map((s) => {
    const author = s.authorId !== null ? users.get(s.authorId) : undefined;
    return {
      id: s.id,
      title: s.title,
      file_name: s.fileName,
      author: author ? userBasic(ctx, author, gravatar) : null,
      updated_at: s.updatedAt,
      created_at: s.createdAt,
      expires_at: null,
      web_url: `${web}/${s.id}`,
    };
  });
}

/** One snippet (presentSnippets of one). */
export async function presentSnippet(ctx: AppContext, project: ProjectRow, row: SnippetRow) {
  return (await presentSnippets(ctx, project, [row]))[0]!;
}

const S = Type.String();
/** Response schema of ProjectSnippet. */
export const SnippetSchema = Type.Object({
  id: Type.Integer(), title: S, file_name: S, author: Nullable(UserBasicSchema), updated_at: S, created_at: S, expires_at: Type.Null(), web_url: S,
});

/**
 * What DELETE answers: the entity and the destroyed record's own columns (8.13 answered the record itself: content,
 * author_id, project_id, visibility_level, type).
 */
export const DeletedSnippetSchema = Type.Object({
  ...SnippetSchema.properties, content: S, author_id: Nullable(Type.Integer()), project_id: Type.Integer(), visibility_level: Type.Integer(), type: S,
});

/** The DELETE answer of a snippet. */
export async function presentDeletedSnippet(ctx: AppContext, project: ProjectRow, row: SnippetRow) {
  return {
    ...(await presentSnippet(ctx, project, row)), content: row.content, author_id: row.authorId, project_id: row.projectId,
    visibility_level: row.visibilityLevel, type: 'ProjectSnippet',
  };
}
