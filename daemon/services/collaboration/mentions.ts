/**
 * `@username` mentions in descriptions and notes.
 * OWNER: todos engineer.
 */
import type { AppContext } from '../../context.js';
import type { UserRow } from '../../db/schema.js';

/** Active users named by `@username` in the text (unknown names are plain text; code spans and emails ignored). */
export function mentionedUsers(ctx: AppContext, text: string | null | undefined): UserRow[] {
  throw new Error('not implemented');
}
