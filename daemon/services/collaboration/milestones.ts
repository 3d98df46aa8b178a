/**
 * Project milestones.
 * OWNER: labels/milestones engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { MilestoneRow } from '../../db/schema-collaboration.js';
import { badRequest, badRequestMessage, notFound, notFoundMessage } from '../../errors.js';
import { recordEvent } from '../instance/events.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import { findMilestoneByTitle, insertMilestone, milestoneState, updateMilestoneRow } from '../../db/collaboration/milestones.js';
import { validDate } from '../../dates.js';

export {
  countMilestoneIssues, countProjectMilestones, findMilestoneByTitle, findProjectMilestone, listMilestoneIssues, listProjectMilestones,
  milestonesById, type MilestoneListFilter,
} from '../../db/collaboration/milestones.js';

/** Longest milestone title and description. */
export const MILESTONE_TITLE_MAX = 255;
export const MILESTONE_DESCRIPTION_MAX = 65535;

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
    const other = await findMilestoneByTitle(q, projectId, p.title);
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
        const row = await insertMilestone(tx, { projectId, title: p.title!, description: p.description ?? '', dueDate: p.due_date ?? null, at: now() });
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
  const nextState = p.state_event === 'close' ? 'closed' : p.state_event === 'activate' ? 'active' : milestone.state;
  const set = { title: p.title, description: p.description, dueDate: p.due_date, state: nextState !== milestone.state ? nextState : undefined };
  if (Object.values(set).every((v) => v === undefined)) return milestone;
  try {
    return await ctx.data.transaction(async (tx) => {
      // the state as it is now: of two closes at once, only the one that changes it records the event
      const before = await milestoneState(tx, milestone.id);
      if (before === undefined) throw notFoundMessage('404 Not found');
      const row = await updateMilestoneRow(tx, milestone.id, { ...set, at: now() });
      if (!row) throw notFoundMessage('404 Not found');
      if (row.state !== before) {
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
