/** Notes' data module (the reads presenters need beside the note lists). `q`: the database or a transaction. */
import type { Queries } from './layer/types.js';

/** The text of the notes of `ids` (repeats skipped; notes that are gone are absent). */
export async function noteTextsByIds(q: Queries, ids: readonly (number | null)[]): Promise<Map<number, string>> {
  const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
  if (!wanted.length) return new Map();
  return new Map((await q.all<{ id: number; note: string }>(`SELECT id, note FROM notes WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(wanted)])).map((n) => [n.id, n.note]));
}
