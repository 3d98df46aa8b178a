/**
 * Project hooks storage: list, find, create, update, delete. Delivery (posting payloads to the URLs) is built on
 * top of this by the hooks delivery module; the secret `token` is stored here but never presented.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import { projectHooks, type ProjectHookRow } from '../db/schema.js';
import { unprocessable } from '../errors.js';

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
export type HookEventKind =
  | 'push_events' | 'issues_events' | 'merge_requests_events' | 'tag_push_events' | 'note_events' | 'build_events' | 'pipeline_events' | 'wiki_page_events';

const FLAGS = {
  push_events: 'pushEvents', issues_events: 'issuesEvents', merge_requests_events: 'mergeRequestsEvents', tag_push_events: 'tagPushEvents',
  note_events: 'noteEvents', build_events: 'buildEvents', pipeline_events: 'pipelineEvents', wiki_page_events: 'wikiPageEvents',
  enable_ssl_verification: 'enableSslVerification',
} as const;

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

function fields(p: Partial<ProjectHookParams>): Partial<ProjectHookRow> {
  const out: Partial<ProjectHookRow> = {};
  for (const [param, column] of Object.entries(FLAGS) as [keyof typeof FLAGS, (typeof FLAGS)[keyof typeof FLAGS]][]) {
    const v = p[param];
    if (v !== undefined) out[column] = v;
  }
  if (p.token !== undefined) out.token = p.token === '' ? null : p.token;
  return out;
}

/** Number of hooks of a project. */
export function countProjectHooks(ctx: AppContext, projectId: number): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(projectHooks).where(eq(projectHooks.projectId, projectId)).get()!.n;
}

/** One page of a project's hooks, oldest first. */
export function listProjectHooks(ctx: AppContext, projectId: number, limit = -1, offset = 0): ProjectHookRow[] {
  return ctx.db.select().from(projectHooks).where(eq(projectHooks.projectId, projectId)).orderBy(asc(projectHooks.id)).limit(limit).offset(offset).all();
}

/** Hooks of a project subscribed to an event kind (for delivery). */
export function projectHooksFor(ctx: AppContext, projectId: number, kind: HookEventKind): ProjectHookRow[] {
  return listProjectHooks(ctx, projectId).filter((h) => h[FLAGS[kind]]);
}

/** A hook of a project, or null. */
export function findProjectHook(ctx: AppContext, projectId: number, hookId: number): ProjectHookRow | null {
  return ctx.db.select().from(projectHooks).where(and(eq(projectHooks.projectId, projectId), eq(projectHooks.id, hookId))).get() ?? null;
}

/** Add a hook; 422 `Invalid url given` unless the URL is http(s). */
export function createProjectHook(ctx: AppContext, projectId: number, p: ProjectHookParams): ProjectHookRow {
  if (!validHookUrl(p.url)) throw unprocessable('Invalid url given');
  return ctx.db.insert(projectHooks).values({ projectId, url: p.url, createdAt: now(), ...fields(p) }).returning().get();
}

/** Edit a hook (the url is always given); 422 on a bad URL. */
export function updateProjectHook(ctx: AppContext, hook: ProjectHookRow, p: ProjectHookParams): ProjectHookRow {
  if (!validHookUrl(p.url)) throw unprocessable('Invalid url given');
  return ctx.db.update(projectHooks).set({ url: p.url, ...fields(p) }).where(eq(projectHooks.id, hook.id)).returning().get()!;
}

/** Delete a hook; returns the deleted row, or null when there was none (deleting is idempotent). */
export function deleteProjectHook(ctx: AppContext, projectId: number, hookId: number): ProjectHookRow | null {
  return ctx.db.delete(projectHooks).where(and(eq(projectHooks.projectId, projectId), eq(projectHooks.id, hookId))).returning().get() ?? null;
}
