/**
 * Who may read, create and change project snippets (GitLab 8.13 ProjectPolicy, ProjectSnippetPolicy and
 * SnippetsFinder#by_project). On the project: read_project_snippet for guests and for everyone who sees the project,
 * create_project_snippet for reporters and up; both gone for everyone, admins too, while the project's snippets
 * feature (`snippets_enabled`) is off. On one snippet: members and admins read every one, other users the public and
 * internal ones (internal not for external users); only its author and admins change or delete it (8.13 authorizes
 * update_project_snippet on the snippet, whose policy grants it to them alone: masters do not edit others' snippets).
 */
import type { AppContext } from '../context.js';
import type { Queries } from '../db/layer/types.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { GUEST, INTERNAL, PUBLIC, REPORTER, projectAbilityAtLevel, projectAbilityWithoutLevel, projectAccessLevelAsync } from './permissions.js';

/** The project-level snippet abilities. */
export type SnippetAbility = 'read_project_snippet' | 'create_project_snippet';

/** What the snippet rules need to know about one snippet. */
export interface SnippetSubject {
  authorId: number | null;
  visibilityLevel: number;
}

/**
 * Whether `user` may do `ability` on the snippets of `project` (`level`: the caller's access level when the route
 * already read it). An inactive user and a disabled feature settle it first; read needs read_project as well.
 */
export async function canProjectSnippets(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, ability: SnippetAbility, project: ProjectRow, level?: number, q: Queries = ctx.data,
): Promise<boolean> {
  if (!user || user.state !== 'active' || !project.snippetsEnabled) return false;
  const decided = projectAbilityWithoutLevel(user, 'read_project', project);
  if (decided !== undefined) return decided;
  const access = level ?? (await projectAccessLevelAsync(ctx, user, project, q));
  if (ability === 'create_project_snippet') return access >= REPORTER;
  return access >= GUEST || projectAbilityAtLevel(user, 'read_project', project, access);
}

/**
 * Whether a caller who may read the project's snippets (canProjectSnippets) also sees this one: admins and
 * members every one, others the public ones and, unless external, the internal ones.
 */
export function canReadSnippetAtLevel(user: UserRow, snippet: SnippetSubject, access: number): boolean {
  if (user.isAdmin || access >= GUEST) return true;
  return snippet.visibilityLevel === PUBLIC || (snippet.visibilityLevel === INTERNAL && !user.external);
}

/** The visibility levels of a project's snippets the caller lists (canReadSnippetAtLevel as a filter): null for all. */
export function visibleSnippetLevels(user: UserRow, access: number): number[] | null {
  if (user.isAdmin || access >= GUEST) return null;
  return user.external ? [PUBLIC] : [INTERNAL, PUBLIC];
}

/** Whether `user` (who can read it) may change or delete the snippet: its author or an admin (8.13 ProjectSnippetPolicy). */
export function canUpdateSnippet(user: UserRow, snippet: SnippetSubject): boolean {
  return user.state === 'active' && (user.isAdmin || (snippet.authorId !== null && snippet.authorId === user.id));
}

/**
 * Whether `user` may read one snippet of `project` (its notes and award emoji too): the project's snippets
 * (canProjectSnippets), then the snippet's own visibility (canReadSnippetAtLevel). `level` as there.
 */
export async function canReadSnippet(
  ctx: Pick<AppContext, 'data'>, user: UserRow | null, project: ProjectRow, snippet: SnippetSubject, level?: number,
): Promise<boolean> {
  if (!user || user.state !== 'active' || !project.snippetsEnabled) return false;
  if (user.isAdmin) return true;
  const access = level ?? (await projectAccessLevelAsync(ctx, user, project));
  return (await canProjectSnippets(ctx, user, 'read_project_snippet', project, access)) && canReadSnippetAtLevel(user, snippet, access);
}
