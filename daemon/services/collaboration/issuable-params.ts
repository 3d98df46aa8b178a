/** Parameters that issues and merge requests take alike (labels, assignee_id). */
import { validationError } from '../../errors.js';
import type { Queries } from '../../db/layer/types.js';
import { userById } from '../../db/users.js';

/** Split a comma-separated labels param into trimmed titles (blank ones dropped). */
export function labelTitles(labels: string | undefined): string[] {
  return labels === undefined ? [] : labels.split(',').map((l) => l.trim()).filter((l) => l !== '');
}

/** The assignee id to store: 0 means none; an unknown user is a validation error. */
export async function assigneeOf(tx: Queries, id: number | undefined): Promise<number | null | undefined> {
  if (id === undefined) return undefined;
  if (id === 0) return null;
  const u = Number.isSafeInteger(id) && Math.abs(id) <= 2147483647 ? await userById(tx, id) : null;
  if (!u) throw validationError({ assignee_id: ['is invalid'] });
  return u.id;
}
