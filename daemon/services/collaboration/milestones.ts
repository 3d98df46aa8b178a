/**
 * Project milestones.
 * OWNER: labels/milestones engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { IssueRow, MilestoneRow } from '../../db/schema-collaboration.js';
import { badRequest, badRequestMessage, notFound, notFoundMessage } from '../../errors.js';
import { recordEvent } from '../events.js';
import { placeholders } from '../../db/sql.js';
import { toIssue, toMilestone } from '../../db/rows.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import type { SqlCondition } from '../../policy/permissions.js';
import { INT_MAX, MAX_ROWS } from './tx.js';

type Rec = Record<string, unknown>;
import { validDate } from '../../dates.js';

/** Longest milestone title and description. */
export const MILESTONE_TITLE_MAX = 255;
export const MILESTONE_DESCRIPTION_MAX = 65535;

/** A milestone of the project by id, or null. */
export async function findProjectMilestone(q: Queries, projectId: number, milestoneId: number): Promise<MilestoneRow | null> {
  if (!Number.isSafeInteger(milestoneId) || Math.abs(milestoneId) > INT_MAX) return null;
  const row = await q.get<Rec>(`SELECT * FROM milestones WHERE project_id = ? AND id = ?`, [projectId, milestoneId]);
  return row ? toMilestone(row) : null;
}

/** A milestone of the project by title, or null (issue move assigns the same-titled milestone in the target). */
export async function findMilestoneByTitle(q: Queries, projectId: number, title: string): Promise<MilestoneRow | null> {
  const row = await q.get<Rec>(`SELECT * FROM milestones WHERE project_id = ? AND title = ?`, [projectId, title]);
  return row ? toMilestone(row) : null;
}

/** Milestones by id, for presenters (one query for a page). */
export async function milestonesById(q: Queries, ids: number[]): Promise<Map<number, MilestoneRow>> {
  const out = new Map<number, MilestoneRow>();
  if (ids.length === 0) return out;
  for (const m of await q.all<Rec>(`SELECT * FROM milestones WHERE id IN ${q.dialect.inIds}`, [q.dialect.ids([...new Set(ids)])])) {
    out.set(m.id as number, toMilestone(m));
  }
  return out;
}

/** Filters of GET /projects/:id/milestones: state `active`/`closed` (anything else: all) and iids. */
export interface MilestoneListFilter {
  state?: string;
  iids?: number[];
}

function listWhere(projectId: number, f: MilestoneListFilter): { sql: string; args: unknown[] } {
  const conds = ['project_id = ?'];
  const args: unknown[] = [projectId];
  if (f.state === 'active' || f.state === 'closed') conds.push('state = ?'), args.push(f.state);
  if (f.iids) {
    const iids = f.iids.filter((i) => Math.abs(i) <= INT_MAX);
    conds.push(iids.length ? `iid IN (${placeholders(iids)})` : 'FALSE');
    args.push(...iids);
  }
  return { sql: conds.join(' AND '), args };
}

/** Number of the project's milestones matching a filter. */
export async function countProjectMilestones(q: Queries, projectId: number, f: MilestoneListFilter): Promise<number> {
  const w = listWhere(projectId, f);
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM milestones WHERE ${w.sql}`, w.args))!.n);
}

/** One page of the project's milestones matching a filter, newest first (8.x orders by id desc). */
export async function listProjectMilestones(q: Queries, projectId: number, f: MilestoneListFilter, limit = -1, offset = 0): Promise<MilestoneRow[]> {
  const w = listWhere(projectId, f);
  return (await q.all<Rec>(`SELECT * FROM milestones WHERE ${w.sql} ORDER BY id DESC LIMIT ? OFFSET ?`, [...w.args, limit < 0 ? MAX_ROWS : limit, offset]))
    .map(toMilestone);
}

/** Parameters of POST and PUT /projects/:id/milestones. */
export interface MilestoneParams {
  title?: string;
  description?: string;
  due_date?: string;
  state_event?: string;
}

/** Ruby's inspect of an errors hash, as 8.x's `Failed to create milestone {:title=>["has already been taken"]}`. */
function rubyErrors(errors: Record<string, string[]>): string {
  return `{${Object.entries(errors).map(([k, v]) => `:${k}=>[${v.map((m) => JSON.stringify(m)).join(', ')}]`).join(', ')}}`;
}

async function validate(q: Queries, projectId: number, p: MilestoneParams, selfId: number | null): Promise<Record<string, string[]>> {
  const errors: Record<string, string[]> = {};
  if (p.title !== undefined) {
    const t: string[] = [];
    if (p.title.trim() === '') t.push("can't be blank");
    if (p.title.length > MILESTONE_TITLE_MAX) t.push(`is too long (maximum is ${MILESTONE_TITLE_MAX} characters)`);
    const other = await q.get<{ id: number }>(`SELECT id FROM milestones WHERE project_id = ? AND title = ?`, [projectId, p.title]);
    if (other && other.id !== selfId) t.push('has already been taken');
    if (t.length) errors.title = t;
  }
  if (p.description !== undefined && p.description.length > MILESTONE_DESCRIPTION_MAX) {
    errors.description = [`is too long (maximum is ${MILESTONE_DESCRIPTION_MAX} characters)`];
  }
  if (p.due_date !== undefined && !validDate(p.due_date)) errors.due_date = ['is invalid'];
  if (p.state_event !== undefined && p.state_event !== 'close' && p.state_event !== 'activate') errors.state_event = ['is invalid'];
  return errors;
}

/** 8.x's attributes_for_keys: empty values are dropped (an optional field cannot be cleared with ''). */
function present(p: MilestoneParams): MilestoneParams {
  const out: MilestoneParams = {};
  for (const k of ['description', 'due_date', 'state_event'] as const) if (p[k] !== undefined && p[k] !== '') out[k] = p[k];
  // A blank title stays, to be refused (`can't be blank`): an update never erases it.
  if (p.title !== undefined) out.title = p.title;
  return out;
}

/**
 * Create a milestone with the project's next iid and record its `created` event (shown as "opened", as 8.x):
 * 400 `"title"` not given; 400 `Failed to create milestone {...}` for a duplicate title or a bad date (nothing written).
 * Two creates at once: the same title answers the duplicate's 400 for one of them (the unique index), two titles
 * both succeed (the one that lost the race for an iid takes the next).
 */
export async function createMilestone(ctx: AppContext, actorId: number, projectId: number, params: MilestoneParams): Promise<MilestoneRow> {
  if (params.title === undefined || params.title.trim() === '') throw badRequest('title');
  const p = present({ ...params, state_event: undefined });
  const failed = (errors: Record<string, string[]>) => badRequestMessage(`Failed to create milestone ${rubyErrors(errors)}`);
  for (let attempt = 0; ; attempt++) {
    const errors = await validate(ctx.data, projectId, p, null);
    if (Object.keys(errors).length) throw failed(errors);
    try {
      return await ctx.data.transaction(async (tx) => {
        const iid = Number((await tx.get<{ n: number | null }>(`SELECT MAX(iid) AS n FROM milestones WHERE project_id = ?`, [projectId]))?.n ?? 0) + 1;
        const t = now();
        const row = toMilestone((await tx.get<Rec>(
          `INSERT INTO milestones (project_id, iid, title, description, due_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          [projectId, iid, p.title!, p.description ?? '', p.due_date ?? null, t, t],
        ))!);
        await recordEvent(tx, { projectId, authorId: actorId, action: 'created', targetId: row.id, targetType: 'Milestone', targetTitle: row.title });
        return row;
      });
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound('Project'); // the project was deleted meanwhile
      // the title (answered by validate on the next round) or the iid was taken by another request meanwhile
      if (!isUniqueViolation(e) || attempt >= 5) throw e;
    }
  }
}

/**
 * Update a milestone (title, description, due_date) and close or activate it with state_event, recording the
 * closed/reopened event as 8.x: 400 `Failed to update milestone {...}` on bad values (nothing written); 404 when the
 * milestone was deleted meanwhile.
 */
export async function updateMilestone(ctx: AppContext, actorId: number, milestone: MilestoneRow, params: MilestoneParams): Promise<MilestoneRow> {
  const p = present(params);
  const failed = (errors: Record<string, string[]>) => badRequestMessage(`Failed to update milestone ${rubyErrors(errors)}`);
  const errors = await validate(ctx.data, milestone.projectId, p, milestone.id);
  if (Object.keys(errors).length) throw failed(errors);
  const sets: string[] = [];
  const args: unknown[] = [];
  if (p.title !== undefined) sets.push('title = ?'), args.push(p.title);
  if (p.description !== undefined) sets.push('description = ?'), args.push(p.description);
  if (p.due_date !== undefined) sets.push('due_date = ?'), args.push(p.due_date);
  const nextState = p.state_event === 'close' ? 'closed' : p.state_event === 'activate' ? 'active' : milestone.state;
  if (nextState !== milestone.state) sets.push('state = ?'), args.push(nextState);
  if (sets.length === 0) return milestone;
  sets.push('updated_at = ?'), args.push(now());
  try {
    return await ctx.data.transaction(async (tx) => {
      // the state as it is now: of two closes at once, only the one that changes it records the event
      const before = await tx.get<{ state: string }>(`SELECT state FROM milestones WHERE id = ?`, [milestone.id]);
      if (!before) throw notFoundMessage('404 Not found');
      const raw = await tx.get<Rec>(`UPDATE milestones SET ${sets.join(', ')} WHERE id = ? RETURNING *`, [...args, milestone.id]);
      if (!raw) throw notFoundMessage('404 Not found');
      const row = toMilestone(raw);
      if (row.state !== before.state) {
        await recordEvent(tx, {
          projectId: row.projectId, authorId: actorId, action: row.state === 'closed' ? 'closed' : 'reopened',
          targetId: row.id, targetType: 'Milestone', targetTitle: row.title,
        });
      }
      return row;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw failed({ title: ['has already been taken'] }); // the title was taken meanwhile
    throw e;
  }
}

/** Number of the live issues of a milestone that pass `issueFilter` (a policy condition over `issues i`). */
export async function countMilestoneIssues(q: Queries, milestone: MilestoneRow, issueFilter: SqlCondition): Promise<number> {
  return Number((await q.get<{ n: number }>(`SELECT COUNT(*) AS n FROM issues i
    WHERE i.milestone_id = ? AND i.project_id = ? AND i.deleted_at IS NULL AND ${issueFilter.sql}`, [milestone.id, milestone.projectId, ...issueFilter.args]))!.n);
}

/** One page of the live issues of a milestone in every state, newest first, that pass `issueFilter`. */
export async function listMilestoneIssues(q: Queries, milestone: MilestoneRow, issueFilter: SqlCondition, limit = -1, offset = 0): Promise<IssueRow[]> {
  return (await q.all<Rec>(`SELECT i.* FROM issues i
    WHERE i.milestone_id = ? AND i.project_id = ? AND i.deleted_at IS NULL AND ${issueFilter.sql}
    ORDER BY i.created_at DESC, i.id DESC LIMIT ? OFFSET ?`, [milestone.id, milestone.projectId, ...issueFilter.args, limit < 0 ? MAX_ROWS : limit, offset]))
    .map(toIssue);
}
