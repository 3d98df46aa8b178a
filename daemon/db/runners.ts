/** The runners' data module: runners by id and the filtered pages of the runner lists. `q`: the database or a transaction. */
import type { Dialect, Queries } from './layer/types.js';
import { toRunner } from './rows.js';
import type { RunnerRow } from './schema-ci.js';

/** Runner rows of `ids` (repeats skipped; ids that are gone are absent). */
export async function runnersByIds(q: Queries, ids: readonly (number | null)[]): Promise<Map<number, RunnerRow>> {
  const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
  if (!wanted.length) return new Map();
  return new Map((await q.all(`SELECT * FROM runners WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids(wanted)])).map((r) => [r.id as number, toRunner(r)]));
}

/** The scopes of the runner lists (GitLab 8.13's Ci::Runner scopes). */
export type RunnerScope = 'specific' | 'shared' | 'active' | 'paused' | 'online';

/**
 * Which runners a list shows: `scope` (`online`: contacted after `onlineSince`), only `ids` when given, and for
 * `project` its specific runners plus the shared ones.
 */
export interface RunnerListFilter {
  scope?: RunnerScope;
  onlineSince?: string;
  ids?: readonly number[];
  project?: number;
}

function runnerWhere(d: Dialect, f: RunnerListFilter): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  if (f.ids) {
    if (!f.ids.length) return { sql: '1 = 0', args: [] };
    parts.push(`r.id IN ${d.inIds}`);
    args.push(d.ids(f.ids));
  }
  if (f.project !== undefined) {
    parts.push('(r.is_shared = TRUE OR r.id IN (SELECT runner_id FROM runner_projects WHERE project_id = ?))');
    args.push(f.project);
  }
  switch (f.scope) {
    case 'specific': parts.push('r.is_shared = FALSE'); break;
    case 'shared': parts.push('r.is_shared = TRUE'); break;
    case 'active': parts.push('r.active = TRUE'); break;
    case 'paused': parts.push('r.active = FALSE'); break;
    case 'online': parts.push('r.contacted_at > ?'); args.push(f.onlineSince ?? new Date().toISOString()); break;
    default: break;
  }
  return { sql: parts.length ? parts.join(' AND ') : '1 = 1', args };
}

/** The number of runners a list shows. */
export async function countRunners(q: Queries, f: RunnerListFilter): Promise<number> {
  const w = runnerWhere(q.dialect, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM runners r WHERE ${w.sql}`, w.args))?.n ?? 0);
}

/** One page of the runners a list shows, by id. */
export async function runnersPage(q: Queries, f: RunnerListFilter, limit: number, offset: number): Promise<RunnerRow[]> {
  const w = runnerWhere(q.dialect, f);
  return (await q.all(`SELECT * FROM runners r WHERE ${w.sql} ORDER BY r.id LIMIT ? OFFSET ?`, [...w.args, limit, offset])).map(toRunner);
}
