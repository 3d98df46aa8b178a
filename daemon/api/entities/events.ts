/** Event presenter (GitLab v3 Event, GET /projects/:id/events), batched for lists. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { EventRow, UserRow } from '../../db/schema.js';
import { Nullable } from '../params.js';
import { usersByIds } from '../../db/users.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

const ZEROS = /^0+$/;

/** GitLab's action_name for a stored event (Event#action_name in 8.12). */
export function actionName(e: Pick<EventRow, 'action' | 'targetId' | 'targetType'>, data: unknown): string {
  switch (e.action) {
    case 'pushed': {
      const d = (data && typeof data === 'object' ? data : {}) as { before?: unknown; after?: unknown };
      if (typeof d.before === 'string' && ZEROS.test(d.before)) return 'pushed new';
      if (typeof d.after === 'string' && ZEROS.test(d.after)) return 'deleted';
      return 'pushed to';
    }
    case 'closed': return 'closed';
    case 'merged': return 'accepted';
    case 'joined': return 'joined';
    case 'left': return 'left';
    case 'expired': return 'removed due to membership expiration from';
    case 'destroyed': return 'destroyed';
    case 'commented': return 'commented on';
    case 'updated': return 'updated';
    // A project creation has no target; creating an issue or MR reads "opened", as in 8.x.
    case 'created': return e.targetType ? 'opened' : 'created';
    default: return 'opened';
  }
}

/** Presents the notes of comment events (installed by the notes module; until then no note is shown). */
export type EventNotePresenterAsync = (ctx: AppContext, noteIds: number[], viewer: UserRow | null) => Promise<Map<number, Record<string, unknown>>>;
let notePresenterAsync: EventNotePresenterAsync | null = null;
/** Install the presenter of `note` on comment events (the notes module); returns the one it replaces. */
export function setEventNotePresenter(fn: EventNotePresenterAsync | null): EventNotePresenterAsync | null {
  const before = notePresenterAsync;
  notePresenterAsync = fn;
  return before;
}

function parseData(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** One event as the API shows it, given its author and note. */
function eventEntity(ctx: AppContext, e: EventRow, author: UserRow | undefined, note: Record<string, unknown> | undefined, gravatar: boolean) {
  const data = parseData(e.data);
  return {
    title: e.title,
    project_id: e.projectId,
    action_name: actionName(e, data),
    target_id: e.targetId,
    target_type: e.targetType,
    author_id: e.authorId,
    data,
    target_title: e.targetTitle,
    created_at: e.createdAt,
    ...(note ? { note } : {}),
    ...(author ? { author: userBasic(ctx, author, gravatar) } : {}),
    author_username: author ? author.username : null,
  };
}

/**
 * Present events on the data layer (either engine): one query for their authors, one call for their notes (the
 * note presenter the notes module installed).
 */
export async function presentEvents(ctx: AppContext, viewer: UserRow | null, rows: EventRow[]): Promise<Record<string, unknown>[]> {
  if (rows.length === 0) return [];
  const authors = await usersByIds(ctx.data, rows.map((r) => r.authorId));
  const noteIds = rows.map((r) => r.noteId).filter((x): x is number => x !== null);
  let notes = new Map<number, Record<string, unknown>>();
  if (noteIds.length) {
    if (notePresenterAsync) notes = await notePresenterAsync(ctx, noteIds, viewer);
  }
  const gravatar = authors.size ? await gravatarEnabledAsync(ctx) : false;
  return rows.map((e) => eventEntity(ctx, e, e.authorId !== null ? authors.get(e.authorId) : undefined, e.noteId !== null ? notes.get(e.noteId) : undefined, gravatar));
}

const S = Type.String();
const NS = Nullable(S);
const NI = Nullable(Type.Integer());
/** Response schema of the Note inside a comment event. */
export const EventNoteSchema = Type.Object({
  id: Type.Integer(), body: S, attachment: NS, author: UserBasicSchema, created_at: S, updated_at: S, system: Type.Boolean(),
  noteable_id: NI, noteable_type: NS, upvote: Type.Boolean(), downvote: Type.Boolean(),
});
/** Response schema of Event. */
export const EventSchema = Type.Object({
  title: NS, project_id: NI, action_name: S, target_id: NI, target_type: NS, author_id: NI,
  data: Type.Unknown({ description: 'push data object, or null' }), target_title: NS, created_at: S,
  note: Type.Optional(EventNoteSchema), author: Type.Optional(UserBasicSchema), author_username: NS,
});
