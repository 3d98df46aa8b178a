/**
 * Project milestones.
 * OWNER: labels/milestones engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import { and, desc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { issues, milestones, type IssueRow, type MilestoneRow } from '../../db/schema-collaboration.js';
import { badRequest, badRequestMessage } from '../../errors.js';
import { recordEvent } from '../events.js';
import type { Tx } from './tx.js';
import { statement } from '../../db/statements.js';
import { IN_IDS, idList } from '../../db/sql.js';
import { toMilestone } from '../../db/rows.js';
import { validDate } from '../../dates.js';

/** Longest milestone title and description. */
export const MILESTONE_TITLE_MAX = 255;
export const MILESTONE_DESCRIPTION_MAX = 65535;

/** A milestone of the project by id, or null. */
export function findProjectMilestone(ctx: AppContext, projectId: number, milestoneId: number): MilestoneRow | null {
  if (!Number.isSafeInteger(milestoneId)) return null;
  return ctx.db.select().from(milestones).where(and(eq(milestones.projectId, projectId), eq(milestones.id, milestoneId))).get() ?? null;
}

/** A milestone of the project by title, or null (issue move assigns the same-titled milestone in the target). */
export function findMilestoneByTitle(ctx: AppContext, projectId: number, title: string): MilestoneRow | null {
  return ctx.db.select().from(milestones).where(and(eq(milestones.projectId, projectId), eq(milestones.title, title))).get() ?? null;
}

/** Milestones by id, for presenters (one query for a page). */
export function milestonesById(ctx: AppContext, ids: number[]): Map<number, MilestoneRow> {
  const out = new Map<number, MilestoneRow>();
  if (ids.length === 0) return out;
  // one cached statement whatever the number of ids (a hot path of every issue list)
  for (const m of statement(ctx, `SELECT * FROM milestones WHERE id IN ${IN_IDS}`).all(idList([...new Set(ids)])) as Record<string, unknown>[]) {
    out.set(m.id as number, toMilestone(m));
  }
  return out;
}

/** Filters of GET /projects/:id/milestones: state `active`/`closed` (anything else: all) and iids. */
export interface MilestoneListFilter {
  state?: string;
  iids?: number[];
}

function listWhere(projectId: number, f: MilestoneListFilter): SQL {
  const conds: SQL[] = [eq(milestones.projectId, projectId)];
  if (f.state === 'active' || f.state === 'closed') conds.push(eq(milestones.state, f.state));
  if (f.iids) conds.push(f.iids.length ? inArray(milestones.iid, f.iids) : sql`0`);
  return and(...conds)!;
}

/** Number of the project's milestones matching a filter. */
export function countProjectMilestones(ctx: AppContext, projectId: number, f: MilestoneListFilter): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(milestones).where(listWhere(projectId, f)).get()!.n;
}

/** One page of the project's milestones matching a filter, newest first (8.x orders by id desc). */
export function listProjectMilestones(ctx: AppContext, projectId: number, f: MilestoneListFilter, limit = -1, offset = 0): MilestoneRow[] {
  return ctx.db.select().from(milestones).where(listWhere(projectId, f)).orderBy(desc(milestones.id)).limit(limit).offset(offset).all();
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

function validate(tx: Tx, projectId: number, p: MilestoneParams, selfId: number | null): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (p.title !== undefined) {
    const t: string[] = [];
    if (p.title.trim() === '') t.push("can't be blank");
    if (p.title.length > MILESTONE_TITLE_MAX) t.push(`is too long (maximum is ${MILESTONE_TITLE_MAX} characters)`);
    const other = tx.select({ id: milestones.id }).from(milestones).where(and(eq(milestones.projectId, projectId), eq(milestones.title, p.title))).get();
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
  for (const k of ['title', 'description', 'due_date', 'state_event'] as const) if (p[k] !== undefined && p[k] !== '') out[k] = p[k];
  return out;
}

/**
 * Create a milestone with the project's next iid and record its `created` event (shown as "opened", as 8.x):
 * 400 `"title"` not given; 400 `Failed to create milestone {...}` for a duplicate title or a bad date (nothing written).
 */
export function createMilestone(ctx: AppContext, actorId: number, projectId: number, params: MilestoneParams): MilestoneRow {
  if (params.title === undefined || params.title.trim() === '') throw badRequest('title');
  const p = present({ ...params, state_event: undefined });
  return ctx.db.transaction((tx) => {
    const errors = validate(tx, projectId, p, null);
    if (Object.keys(errors).length) throw badRequestMessage(`Failed to create milestone ${rubyErrors(errors)}`);
    const iid = (tx.select({ n: sql<number | null>`max(${milestones.iid})` }).from(milestones).where(eq(milestones.projectId, projectId)).get()?.n ?? 0) + 1;
    const t = now();
    const row = tx.insert(milestones).values({
      projectId, iid, title: p.title!, description: p.description ?? '', dueDate: p.due_date ?? null, createdAt: t, updatedAt: t,
    }).returning().get();
    recordEvent(tx, { projectId, authorId: actorId, action: 'created', targetId: row.id, targetType: 'Milestone', targetTitle: row.title });
    return row;
  });
}

/**
 * Update a milestone (title, description, due_date) and close or activate it with state_event, recording the
 * closed/reopened event as 8.x: 400 `Failed to update milestone {...}` on bad values (nothing written).
 */
export function updateMilestone(ctx: AppContext, actorId: number, milestone: MilestoneRow, params: MilestoneParams): MilestoneRow {
  const p = present(params);
  return ctx.db.transaction((tx) => {
    const errors = validate(tx, milestone.projectId, p, milestone.id);
    if (Object.keys(errors).length) throw badRequestMessage(`Failed to update milestone ${rubyErrors(errors)}`);
    const set: Partial<MilestoneRow> = {};
    if (p.title !== undefined) set.title = p.title;
    if (p.description !== undefined) set.description = p.description;
    if (p.due_date !== undefined) set.dueDate = p.due_date;
    const nextState = p.state_event === 'close' ? 'closed' : p.state_event === 'activate' ? 'active' : milestone.state;
    if (nextState !== milestone.state) set.state = nextState;
    if (Object.keys(set).length === 0) return milestone;
    set.updatedAt = now();
    const row = tx.update(milestones).set(set).where(eq(milestones.id, milestone.id)).returning().get()!;
    if (nextState !== milestone.state) {
      recordEvent(tx, {
        projectId: row.projectId, authorId: actorId, action: nextState === 'closed' ? 'closed' : 'reopened',
        targetId: row.id, targetType: 'Milestone', targetTitle: row.title,
      });
    }
    return row;
  });
}

/** Number of the live issues of a milestone that pass `issueFilter` (a policy SQL condition over `issues i`). */
export function countMilestoneIssues(ctx: AppContext, milestone: MilestoneRow, issueFilter: string): number {
  return ctx.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM issues i
    WHERE i.milestone_id = ${milestone.id} AND i.project_id = ${milestone.projectId} AND i.deleted_at IS NULL AND ${sql.raw(issueFilter)}`).n;
}

/** One page of the live issues of a milestone in every state, newest first, that pass `issueFilter`. */
export function listMilestoneIssues(ctx: AppContext, milestone: MilestoneRow, issueFilter: string, limit = -1, offset = 0): IssueRow[] {
  const i = alias(issues, 'i');
  return ctx.db.select().from(i)
    .where(and(eq(i.milestoneId, milestone.id), eq(i.projectId, milestone.projectId), isNull(i.deletedAt), sql.raw(issueFilter)))
    .orderBy(desc(i.createdAt), desc(i.id)).limit(limit).offset(offset).all();
}
