/**
 * Project hooks storage: list, find, create, update, delete, on the data layer (SQLite and PostgreSQL). Delivery
 * (posting payloads to the URLs) is built on top of this by services/hooks/deliveries.ts; the secret `token` is stored
 * here but never presented.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ProjectHookRow } from '../../db/schema.js';
import type { Queries } from '../../db/layer/types.js';
import {
  countProjectHooks as countHookRows, deleteProjectHookRow, insertProjectHook, projectHookOf, projectHooksPage, updateProjectHookRow,
  type HookFlagColumn,
} from '../../db/hooks.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { notFound, unprocessable } from '../../errors.js';

/** Parameters of POST/PUT /projects/:id/hooks. */
export interface ProjectHookParams {
  url: string;
  token?: string;
  push_events?: boolean;
  issues_events?: boolean;
  merge_requests_events?: boolean;
  tag_push_events?: boolean;
  note_events?: boolean;
  build_events?: boolean;
  pipeline_events?: boolean;
  wiki_page_events?: boolean;
  enable_ssl_verification?: boolean;
}

/** The event kinds a hook can subscribe to (column names of project_hooks). */
export type HookEventKind = HookFlagColumn;

/** The switches a request may set: parameter name = column name. */
const SWITCHES = [
  'push_events', 'issues_events', 'merge_requests_events', 'tag_push_events', 'note_events', 'build_events', 'pipeline_events',
  'wiki_page_events', 'enable_ssl_verification',
] as const;

/** Ids beyond PostgreSQL's integer column never name a hook (and must not reach a query there). */
const isRowId = (id: number) => Number.isSafeInteger(id) && id > 0 && id <= 2147483647;

/** Whether a hook URL is an absolute http(s) URL with a host. */
export function validHookUrl(url: string): boolean {
  if (/\s/.test(url)) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** The columns a request sets (its switches and token), with their values, in a fixed order. */
function fields(p: Partial<ProjectHookParams>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const column of SWITCHES) {
    const v = p[column];
    if (v !== undefined) out.push([column, !!v]);
  }
  if (p.token !== undefined) out.push(['token', p.token === '' ? null : p.token]);
  return out;
}

/** Number of hooks of a project. */
export async function countProjectHooks(ctx: AppContext, projectId: number, q: Queries = ctx.data): Promise<number> {
  return countHookRows(q, projectId);
}

/** One page of a project's hooks, oldest first (`limit` -1: all). */
export async function listProjectHooks(ctx: AppContext, projectId: number, limit = -1, offset = 0, q: Queries = ctx.data): Promise<ProjectHookRow[]> {
  return projectHooksPage(q, projectId, limit, offset);
}

/** Hooks of a project subscribed to an event kind (for delivery). */
export async function projectHooksFor(ctx: AppContext, projectId: number, kind: HookEventKind): Promise<ProjectHookRow[]> {
  return (await listProjectHooks(ctx, projectId)).filter((h) => toColumns(h)[kind]);
}

const toColumns = (h: ProjectHookRow): Record<HookEventKind, boolean> => ({
  push_events: h.pushEvents, issues_events: h.issuesEvents, merge_requests_events: h.mergeRequestsEvents, tag_push_events: h.tagPushEvents,
  note_events: h.noteEvents, build_events: h.buildEvents, pipeline_events: h.pipelineEvents, wiki_page_events: h.wikiPageEvents,
});

/** A hook of a project, or null. */
export async function findProjectHook(ctx: AppContext, projectId: number, hookId: number): Promise<ProjectHookRow | null> {
  if (!isRowId(hookId)) return null;
  return projectHookOf(ctx.data, projectId, hookId);
}

/** Add a hook; 422 `Invalid url given` unless the URL is http(s). A project deleted meanwhile answers 404. */
export async function createProjectHook(ctx: AppContext, projectId: number, p: ProjectHookParams): Promise<ProjectHookRow> {
  if (!validHookUrl(p.url)) throw unprocessable('Invalid url given');
  let row;
  try {
    row = await insertProjectHook(ctx.data, [['project_id', projectId], ['url', p.url], ['created_at', now()], ...fields(p)]);
  } catch (e) {
    // the project was deleted after the lookup
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
  if (!row) throw notFound('Project');
  return row;
}

/** Edit a hook (the url is always given); 422 on a bad URL; null when the hook was deleted meanwhile. */
export async function updateProjectHook(ctx: AppContext, hook: ProjectHookRow, p: ProjectHookParams): Promise<ProjectHookRow | null> {
  if (!validHookUrl(p.url)) throw unprocessable('Invalid url given');
  const set: [string, unknown][] = [['url', p.url], ...fields(p)];
  return updateProjectHookRow(ctx.data, hook.projectId, hook.id, set);
}

/** Delete a hook; returns the deleted row, or null when there was none (deleting is idempotent). */
export async function deleteProjectHook(ctx: AppContext, projectId: number, hookId: number): Promise<ProjectHookRow | null> {
  if (!isRowId(hookId)) return null;
  return deleteProjectHookRow(ctx.data, projectId, hookId);
}
