/** Note presenter (GitLab v3 Note, lib/api/entities.rb @ 8.12), batched: one query for the authors of a page. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { NoteRow } from '../../db/schema-collaboration.js';
import type { UserRow } from '../../db/schema.js';
import { usersByIds } from '../../db/users.js';
import { Nullable } from '../params.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

/** A ghost author for notes whose author was deleted (8.x moved them to the ghost user). */
function ghost(ctx: AppContext): ReturnType<typeof userBasic> {
  return { name: 'Ghost User', username: 'ghost', id: 0, state: 'active', avatar_url: null, web_url: `${ctx.externalUrl()}/ghost` };
}

/** One note with its author already loaded. upvote and downvote are always false in 8.x (kept for old clients). */
export function noteEntity(ctx: AppContext, n: NoteRow, author: UserRow | undefined, gravatar: boolean) {
  return {
    id: n.id,
    body: n.note,
    attachment: n.attachment,
    author: author ? userBasic(ctx, author, gravatar) : ghost(ctx),
    created_at: n.createdAt,
    updated_at: n.updatedAt,
    system: n.system,
    noteable_id: n.noteableId,
    noteable_type: n.noteableType,
    upvote: false,
    downvote: false,
  };
}

/** Present a page of notes: one query for their authors. */
export async function presentNotes(ctx: AppContext, rows: NoteRow[]): Promise<ReturnType<typeof noteEntity>[]> {
  const users = await usersByIds(ctx.data, rows.map((r) => r.authorId));
  const gravatar = await gravatarEnabledAsync(ctx);
  return rows.map((n) => noteEntity(ctx, n, n.authorId !== null ? users.get(n.authorId) : undefined, gravatar));
}

/** Present one note. */
export async function presentNote(ctx: AppContext, row: NoteRow): Promise<ReturnType<typeof noteEntity>> {
  return (await presentNotes(ctx, [row]))[0]!;
}

const S = Type.String();
/** Response schema of Note. */
export const NoteSchema = Type.Object({
  id: Type.Integer(), body: S, attachment: Nullable(S), author: UserBasicSchema, created_at: S, updated_at: S, system: Type.Boolean(),
  noteable_id: Type.Integer(), noteable_type: S, upvote: Type.Boolean(), downvote: Type.Boolean(),
});
