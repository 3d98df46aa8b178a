/** Event presenter (GitLab v3 Event, GET /projects/:id/events), batched for lists. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { EventRow, UserRow } from '../../db/schema.js';
import { Nullable } from '../params.js';
import { toUser } from '../../db/rows.js';
import { userBasic, UserBasicSchema } from './users.js';
import { placeholders } from '../../db/sql.js';

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
export type EventNotePresenter = (ctx: AppContext, noteIds: number[], viewer: UserRow | null) => Map<number, Record<string, unknown>>;
let notePresenter: EventNotePresenter = () => new Map();
/** Install the presenter of `note` on comment events (notes module). */
export function setEventNotePresenter(fn: EventNotePresenter): void {
  notePresenter = fn;
}

function parseData(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** Present events with one query for their authors and one call for their notes. */
export function presentEvents(ctx: AppContext, viewer: UserRow | null, rows: EventRow[]): Record<string, unknown>[] {
  if (rows.length === 0) return [];
  const authorIds = [...new Set(rows.map((r) => r.authorId).filter((x): x is number => x !== null))];
  const authors = new Map(
    authorIds.length
      ? (ctx.db.$client.prepare(`SELECT * FROM users WHERE id IN (${placeholders(authorIds)})`).all(...authorIds) as Record<string, unknown>[])
          .map((u) => [u.id as number, toUser(u)])
      : [],
  );
  const noteIds = rows.map((r) => r.noteId).filter((x): x is number => x !== null);
  const notes = noteIds.length ? notePresenter(ctx, noteIds, viewer) : new Map<number, Record<string, unknown>>();
  return rows.map((e) => {
    const data = parseData(e.data);
    const author = e.authorId !== null ? authors.get(e.authorId) : undefined;
    const note = e.noteId !== null ? notes.get(e.noteId) : undefined;
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
      ...(author ? { author: userBasic(ctx, author) } : {}),
      author_username: author ? author.username : null,
    };
  });
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
