/**
 * Project labels and their links to issues and merge requests.
 * OWNER: labels/milestones engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { labelLinks, labels, subscriptions, type LabelRow } from '../../db/schema-collaboration.js';
import { badRequest, badRequestMessage, conflict, notFound, validationError } from '../../errors.js';
import { chunks, subscribe, unsubscribe } from './subscriptions.js';
import type { Target, Tx } from './tx.js';
import { statement } from '../../db/statements.js';
import { IN_IDS, idList } from '../../db/sql.js';

/** Colour of labels created on the fly (8.x Label::DEFAULT_COLOR). */
export const DEFAULT_LABEL_COLOR = '#428BCA';
/** Longest label title and description (8.x's string columns). */
export const LABEL_TITLE_MAX = 255;
export const LABEL_DESCRIPTION_MAX = 255;

const COLOR = /^#[0-9A-Fa-f]{6}$/;
/** 8.x Label title format: no `,` (the list separator), `&` or `?`. */
const TITLE = /^[^,&?]+$/;

/** Validation errors of a label title (8.x messages), empty when valid. */
export function labelTitleErrors(title: string): string[] {
  const out: string[] = [];
  if (title.trim() === '') out.push("can't be blank");
  else if (!TITLE.test(title)) out.push('is invalid');
  if (title.length > LABEL_TITLE_MAX) out.push(`is too long (maximum is ${LABEL_TITLE_MAX} characters)`);
  return out;
}

/** Validation errors of a label colour (`#` and 6 hex digits, as the spec), empty when valid. */
export function labelColorErrors(color: string): string[] {
  if (color.trim() === '') return ["can't be blank", 'must be a valid color code'];
  return COLOR.test(color) ? [] : ['must be a valid color code'];
}

/** Trimmed, non-blank, distinct titles in the given order. */
function cleanTitles(titles: string[]): string[] {
  return [...new Set(titles.map((t) => t.trim()).filter((t) => t !== ''))];
}

/**
 * The project's labels with these titles (case-sensitive, as 8.x), creating the missing ones with a default color
 * when `create` (labels given on issue/MR create and update are created on the fly, as 8.x's find_or_create).
 * Blank and duplicate titles are dropped. A title that cannot be a label (`&`, `?`, too long) answers 400 with the
 * 8.x body `{"message":{"labels":{"<title>":{"title":[...]}}}}` when it would be created.
 */
export function findOrCreateLabels(tx: Tx, projectId: number, titles: string[], create: boolean): LabelRow[] {
  const wanted = cleanTitles(titles);
  if (wanted.length === 0) return [];
  const found = new Map<string, LabelRow>();
  for (const part of chunks(wanted)) {
    for (const l of tx.select().from(labels).where(and(eq(labels.projectId, projectId), inArray(labels.title, part))).all()) found.set(l.title, l);
  }
  if (create) {
    const missing = wanted.filter((t) => !found.has(t));
    const invalid: Record<string, { title: string[] }> = {};
    for (const t of missing) {
      const errs = labelTitleErrors(t);
      if (errs.length) invalid[t] = { title: errs };
    }
    if (Object.keys(invalid).length) throw validationError({ labels: invalid });
    const t = now();
    for (const title of missing) {
      found.set(title, tx.insert(labels).values({ projectId, title, color: DEFAULT_LABEL_COLOR, createdAt: t, updatedAt: t }).returning().get());
    }
  }
  return wanted.flatMap((t) => found.get(t) ?? []);
}

/** Replace the labels of a target; answers the titles added and removed (for the system note). */
export function setTargetLabels(tx: Tx, target: Target, labelIds: number[]): { added: LabelRow[]; removed: LabelRow[] } {
  const want = new Set(labelIds);
  const current = tx.select({ label: labels }).from(labelLinks).innerJoin(labels, eq(labels.id, labelLinks.labelId))
    .where(and(eq(labelLinks.targetType, target.type), eq(labelLinks.targetId, target.id))).all().map((r) => r.label);
  const have = new Set(current.map((l) => l.id));
  const removed = current.filter((l) => !want.has(l.id));
  const addIds = [...want].filter((id) => !have.has(id));
  if (removed.length) {
    for (const part of chunks(removed.map((l) => l.id))) {
      tx.delete(labelLinks).where(and(eq(labelLinks.targetType, target.type), eq(labelLinks.targetId, target.id), inArray(labelLinks.labelId, part))).run();
    }
  }
  const added: LabelRow[] = [];
  if (addIds.length) {
    for (const part of chunks(addIds)) added.push(...tx.select().from(labels).where(inArray(labels.id, part)).all());
    const t = now();
    for (const l of added) tx.insert(labelLinks).values({ labelId: l.id, targetType: target.type, targetId: target.id, createdAt: t }).run();
  }
  const byTitle = (a: LabelRow, b: LabelRow) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0);
  return { added: added.sort(byTitle), removed: removed.sort(byTitle) };
}

/** Label titles of each target (sorted by title), for presenters: one query for a page. */
export function labelTitlesOf(ctx: AppContext, type: Target['type'], ids: number[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const id of ids) out.set(id, []);
  if (ids.length === 0) return out;
  // one cached statement whatever the number of ids (a hot path of every issue list)
  const rows = statement(ctx, `SELECT ll.target_id AS targetId, l.title AS title FROM label_links ll JOIN labels l ON l.id = ll.label_id
    WHERE ll.target_type = ? AND ll.target_id IN ${IN_IDS} ORDER BY l.title`).all(type, idList([...new Set(ids)])) as { targetId: number; title: string }[];
  for (const r of rows) out.get(r.targetId)!.push(r.title);
  return out;
}

/** Labels of one project with one of these titles (no creation). */
export function labelsByTitle(ctx: AppContext, projectId: number, titles: string[]): LabelRow[] {
  const wanted = cleanTitles(titles);
  if (wanted.length === 0) return [];
  const out: LabelRow[] = [];
  for (const part of chunks(wanted)) out.push(...ctx.db.select().from(labels).where(and(eq(labels.projectId, projectId), inArray(labels.title, part))).all());
  return out;
}

/** A project's labels, by title (GET /projects/:id/labels is not paginated in 8.x; the route pages it). */
export function listProjectLabels(ctx: AppContext, projectId: number, limit = -1, offset = 0): LabelRow[] {
  return ctx.db.select().from(labels).where(eq(labels.projectId, projectId)).orderBy(asc(labels.title), asc(labels.id)).limit(limit).offset(offset).all();
}

/** Number of labels of a project. */
export function countProjectLabels(ctx: AppContext, projectId: number): number {
  return ctx.db.select({ n: sql<number>`count(*)` }).from(labels).where(eq(labels.projectId, projectId)).get()!.n;
}

/** A project label by exact title, or null. */
export function findLabelByTitle(ctx: AppContext, projectId: number, title: string): LabelRow | null {
  return ctx.db.select().from(labels).where(and(eq(labels.projectId, projectId), eq(labels.title, title))).get() ?? null;
}

/** A project label by id (digits) or else by title, as 8.x's find_project_label; null when neither matches. */
export function findLabelByIdOrTitle(ctx: AppContext, projectId: number, idOrTitle: string): LabelRow | null {
  if (/^\d+$/.test(idOrTitle)) {
    const id = Number(idOrTitle);
    if (Number.isSafeInteger(id)) {
      const byId = ctx.db.select().from(labels).where(and(eq(labels.projectId, projectId), eq(labels.id, id))).get();
      if (byId) return byId;
    }
  }
  return findLabelByTitle(ctx, projectId, idOrTitle);
}

/** Parameters of POST /projects/:id/labels. */
export interface CreateLabelParams {
  name?: string;
  color?: string;
  description?: string;
}

/** Parameters of PUT /projects/:id/labels. */
export interface UpdateLabelParams {
  name?: string;
  new_name?: string;
  color?: string;
  description?: string;
}

function checkDescription(errors: Record<string, string[]>, description: string | undefined): void {
  if (description !== undefined && description.length > LABEL_DESCRIPTION_MAX) {
    errors.description = [`is too long (maximum is ${LABEL_DESCRIPTION_MAX} characters)`];
  }
}

/**
 * Create a label: 400 `"name"`/`"color"` not given, 409 `Label already exists`, 400 with the validation hash for a
 * bad title, colour or description (nothing written).
 */
export function createLabel(ctx: AppContext, projectId: number, p: CreateLabelParams): LabelRow {
  if (p.name === undefined || p.name === '') throw badRequest('name');
  if (p.color === undefined || p.color === '') throw badRequest('color');
  const title = p.name.trim();
  return ctx.db.transaction((tx) => {
    if (tx.select({ id: labels.id }).from(labels).where(and(eq(labels.projectId, projectId), eq(labels.title, title))).get()) {
      throw conflict('Label already exists');
    }
    const errors: Record<string, string[]> = {};
    const te = labelTitleErrors(title);
    if (te.length) errors.title = te;
    const ce = labelColorErrors(p.color!);
    if (ce.length) errors.color = ce;
    checkDescription(errors, p.description);
    if (Object.keys(errors).length) throw validationError(errors);
    const t = now();
    return tx.insert(labels).values({
      projectId, title, color: p.color!, description: p.description === '' ? null : p.description ?? null, createdAt: t, updatedAt: t,
    }).returning().get();
  });
}

/**
 * Update a label found by name: 400 `"name"` not given, 404 when absent, 400 when neither new_name nor color is given,
 * 409 when new_name belongs to another label, 400 with the validation hash for bad values (nothing written).
 */
export function updateLabel(ctx: AppContext, projectId: number, p: UpdateLabelParams): LabelRow {
  if (p.name === undefined || p.name === '') throw badRequest('name');
  const newName = p.new_name === '' ? undefined : p.new_name?.trim();
  const color = p.color === '' ? undefined : p.color;
  return ctx.db.transaction((tx) => {
    // 8.x looked the label up first (404), then asked for new_name or color (400).
    const label = tx.select().from(labels).where(and(eq(labels.projectId, projectId), eq(labels.title, p.name!))).get();
    if (!label) throw notFound('Label not found');
    if (newName === undefined && color === undefined) throw badRequestMessage('Required parameters "new_name" or "color" missing');
    if (newName !== undefined && newName !== label.title) {
      if (tx.select({ id: labels.id }).from(labels).where(and(eq(labels.projectId, projectId), eq(labels.title, newName))).get()) {
        throw conflict('Label already exists');
      }
    }
    const errors: Record<string, string[]> = {};
    if (newName !== undefined) {
      const te = labelTitleErrors(newName);
      if (te.length) errors.title = te;
    }
    if (color !== undefined) {
      const ce = labelColorErrors(color);
      if (ce.length) errors.color = ce;
    }
    checkDescription(errors, p.description);
    if (Object.keys(errors).length) throw validationError(errors);
    const set: Partial<LabelRow> = { updatedAt: now() };
    if (newName !== undefined) set.title = newName;
    if (color !== undefined) set.color = color;
    if (p.description !== undefined && p.description !== '') set.description = p.description;
    return tx.update(labels).set(set).where(eq(labels.id, label.id)).returning().get()!;
  });
}

/** Delete a label found by name with its links and subscriptions: 400 `"name"` not given, 404 `Label` when absent. */
export function deleteLabel(ctx: AppContext, projectId: number, name: string | undefined): LabelRow {
  if (name === undefined || name === '') throw badRequest('name');
  return ctx.db.transaction((tx) => {
    const label = tx.select().from(labels).where(and(eq(labels.projectId, projectId), eq(labels.title, name))).get();
    if (!label) throw notFound('Label');
    tx.delete(labelLinks).where(eq(labelLinks.labelId, label.id)).run();
    tx.delete(subscriptions).where(and(eq(subscriptions.subscribableType, 'Label'), eq(subscriptions.subscribableId, label.id))).run();
    tx.delete(labels).where(eq(labels.id, label.id)).run();
    return label;
  });
}

/** Subscribe a user to a label (POST .../labels/:label_id/subscription); false when already subscribed (304). */
export function subscribeToLabel(ctx: AppContext, userId: number, label: LabelRow): boolean {
  return ctx.db.transaction((tx) => subscribe(tx, userId, 'Label', label.id));
}

/** Unsubscribe a user from a label; false when not subscribed (304). */
export function unsubscribeFromLabel(ctx: AppContext, userId: number, label: LabelRow): boolean {
  return ctx.db.transaction((tx) => unsubscribe(tx, userId, 'Label', label.id));
}

/**
 * Issue and merge request counts per label by state, for the Label entity: two queries for a list. `issueFilter` is
 * a policy SQL condition over `issues i` (the confidential issues the viewer may not read are not counted, as 8.x's
 * IssuesFinder for the viewer).
 */
export function labelCounts(ctx: AppContext, labelIds: number[], issueFilter = '1'): Map<number, { openIssues: number; closedIssues: number; openMergeRequests: number }> {
  const out = new Map<number, { openIssues: number; closedIssues: number; openMergeRequests: number }>();
  for (const id of labelIds) out.set(id, { openIssues: 0, closedIssues: 0, openMergeRequests: 0 });
  if (labelIds.length === 0) return out;
  for (const part of chunks([...new Set(labelIds)])) {
    const list = sql.join(part.map((id) => sql`${id}`), sql`, `);
    const issueRows = ctx.db.all<{ label_id: number; state: string; n: number }>(sql`
      SELECT ll.label_id, i.state, count(*) AS n FROM label_links ll JOIN issues i ON i.id = ll.target_id
      WHERE ll.target_type = 'Issue' AND ll.label_id IN (${list}) AND i.deleted_at IS NULL AND ${sql.raw(issueFilter)}
      GROUP BY ll.label_id, i.state`);
    for (const r of issueRows) {
      const c = out.get(r.label_id)!;
      if (r.state === 'closed') c.closedIssues += r.n;
      else c.openIssues += r.n;
    }
    {
      const mrRows = ctx.db.all<{ label_id: number; n: number }>(sql`
        SELECT ll.label_id, count(*) AS n FROM label_links ll JOIN merge_requests m ON m.id = ll.target_id
        WHERE ll.target_type = 'MergeRequest' AND ll.label_id IN (${list}) AND m.state IN ('opened', 'reopened') AND m.deleted_at IS NULL
        GROUP BY ll.label_id`);
      for (const r of mrRows) out.get(r.label_id)!.openMergeRequests += r.n;
    }
  }
  return out;
}
