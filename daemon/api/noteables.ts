/**
 * The kinds of things notes and award emoji hang on (issues and snippets here; merge requests in their room): the path segment, the id param, how to load one in a project and who may read it. Shared by the route
 * factories of notes (api/notes.ts) and award emoji (api/award-emoji.ts).
 */
import type { preValidationAsyncHookHandler, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { notFoundMessage } from '../errors.js';
import { canReadIssuable } from '../policy/permissions.js';
import { findProjectIssue } from '../services/collaboration/issues.js';
import { findProjectSnippet, snippetNoteable, snippetNoteablesByIds } from '../services/projects/snippets.js';
import { canReadSnippet } from '../policy/snippets.js';
import type { SnippetRow } from '../db/rows.js';
import { issueNoteable, issueNoteablesByIds, type Noteable } from '../services/collaboration/notes.js';
import { projectLevelOf, projectOf } from './project-scope.js';

/** A kind of noteable, as routes address it: `/projects/:id/<segment>/:<idParam>/...`. */
export interface NoteableKind {
  /** URL segment: `issues`, `merge_requests`, `snippets`. */
  segment: string;
  /** Name of the id path param: `issue_id`, `merge_request_id`, `snippet_id` (global ids, as 8.x). */
  idParam: string;
  /** OpenAPI tag of the routes. */
  tag: string;
  /** Several by global id, any project, in one query (comment events of a page). */
  loadManyAsync(ctx: AppContext, ids: number[]): Promise<Map<number, Noteable>>;
  /** The noteable of the project with this global id, or null when absent (or deleted). */
  loadAsync(ctx: AppContext, project: ProjectRow, id: number): Promise<Noteable | null>;
  /**
   * Whether `user` may read it (and so its notes and awards): project feature, visibility, confidentiality; `level`:
   * the user's access level on the project when known.
   */
  canReadAsync(ctx: AppContext, user: UserRow | null, project: ProjectRow, noteable: Noteable, level?: number): Promise<boolean>;
}

/** Issues: `/projects/:id/issues/:issue_id`; confidential issues only for those who may read them. */
export const ISSUE_NOTEABLES: NoteableKind = {
  segment: 'issues',
  idParam: 'issue_id',
  tag: 'issues',
  loadAsync: async (ctx, project, id) => {
    const row = await findProjectIssue(ctx.data, project.id, id);
    return row ? issueNoteable(row) : null;
  },
  loadManyAsync: (ctx, ids) => issueNoteablesByIds(ctx.data, ids),
  canReadAsync: (ctx, user, project, n, level) =>
    canReadIssuable(ctx, user, project, { type: 'Issue', confidential: n.confidential, authorId: n.authorId, assigneeId: n.assigneeId }, level),
};

/** Project snippets: `/projects/:id/snippets/:snippet_id`; readable as their project's snippets feature and own visibility say. */
export const SNIPPET_NOTEABLES: NoteableKind = {
  segment: 'snippets',
  idParam: 'snippet_id',
  tag: 'snippets',
  loadAsync: async (ctx, project, id) => {
    const row = await findProjectSnippet(ctx.data, project.id, id);
    return row ? snippetNoteable(row) : null;
  },
  loadManyAsync: (ctx, ids) => snippetNoteablesByIds(ctx.data, ids),
  canReadAsync: (ctx, user, project, n, level) => canReadSnippet(ctx, user, project, n.row as SnippetRow, level),
};

const resolved = new WeakMap<FastifyRequest, Noteable>();

/**
 * preValidation hook (after loadProject): resolve the noteable of the kind's id param. Absent: 404 `404 Not found`
 * (8.x's `find`); present but not readable: 404 with `hiddenMessage` (the route's 8.x message), so a confidential
 * issue never shows.
 */
export function loadNoteable(kind: NoteableKind, hiddenMessage = '404 Not found'): preValidationAsyncHookHandler {
  return async function (request) {
    const ctx = request.server.ctx;
    const project = projectOf(request);
    const raw = (request.params as Record<string, unknown>)[kind.idParam];
    const id = Number(raw);
    const valid = /^\d+$/.test(String(raw)) && Number.isSafeInteger(id);
    const noteable = !valid ? null : await kind.loadAsync(ctx, project, id);
    if (!noteable) throw notFoundMessage('404 Not found');
    const user = request.user ?? null;
    const readable = await kind.canReadAsync(ctx, user, project, noteable, projectLevelOf(request));
    if (!readable) throw notFoundMessage(hiddenMessage);
    resolved.set(request, noteable);
  };
}

/** The noteable resolved by loadNoteable for this request. */
export function noteableOf(request: FastifyRequest): Noteable {
  const n = resolved.get(request);
  if (!n) throw new Error('noteableOf() without the loadNoteable() hook on the route');
  return n;
}
