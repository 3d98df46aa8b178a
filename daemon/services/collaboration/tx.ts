/** The database handle collaboration services write with: the caller's transaction (`tx`), or ctx.db outside one. */
import type { AppContext } from '../../context.js';

/** Drizzle query builders of a transaction (or of ctx.db); every write of one request goes through one of these. */
export type Tx = Pick<AppContext['db'], 'select' | 'insert' | 'update' | 'delete'>;

/** What an issue, merge request or note is, by GitLab's polymorphic (type, id) pair. */
export interface Target<T extends string = 'Issue' | 'MergeRequest'> {
  type: T;
  id: number;
}
