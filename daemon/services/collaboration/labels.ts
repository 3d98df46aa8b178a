/**
 * Project labels and their links to issues and merge requests.
 * OWNER: labels/milestones engineer. The exported signatures below are a contract used by issues and merge requests.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { LabelRow } from '../../db/schema-collaboration.js';
import { badRequest, badRequestMessage, conflict, notFound, validationError } from '../../errors.js';
import { chunks, subscribe, unsubscribe } from './subscriptions.js';
import type { Target } from './tx.js';
import { INT_MAX, LOCKS, lockAsync } from './tx.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/layer/errors.js';
import {
  deleteLabelRow, findLabelByTitle, findProjectLabel, insertLabel, insertLabelIfAbsent, labelExists, labelsByIds, labelsOfTarget,
  labelsWithTitles, linkLabel, unlinkLabels, updateLabelRow,
} from '../../db/labels.js';

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

/** Labels of one project with one of these titles (no creation). */
export async function labelsByTitle(q: Queries, projectId: number, titles: string[]): Promise<LabelRow[]> {
  const wanted = cleanTitles(titles);
  if (wanted.length === 0) return [];
  const out: LabelRow[] = [];
  for (const part of chunks(wanted)) {
    out.push(...await labelsWithTitles(q, projectId, part));
  }
  return out;
}

/**
 * The async twin of findOrCreateLabels, in the caller's transaction. A label created by another request meanwhile is
 * taken as found (`ON CONFLICT DO NOTHING`, then read), never a unique violation.
 */
export async function findOrCreateLabels(tx: Queries, projectId: number, titles: string[], create: boolean): Promise<LabelRow[]> {
  const wanted = cleanTitles(titles);
  if (wanted.length === 0) return [];
  const found = new Map<string, LabelRow>();
  for (const l of await labelsByTitle(tx, projectId, wanted)) found.set(l.title, l);
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
      const row = await insertLabelIfAbsent(tx, projectId, title, DEFAULT_LABEL_COLOR, t);
      if (row) found.set(title, row);
    }
  }
  return wanted.flatMap((t) => found.get(t) ?? []);
}

/** Replace the labels of a target; answers the titles added and removed (for the system note). */
export async function setTargetLabels(tx: Queries, target: Target, labelIds: number[]): Promise<{ added: LabelRow[]; removed: LabelRow[] }> {
  const want = new Set(labelIds);
  const current = await labelsOfTarget(tx, target.type, target.id);
  const have = new Set(current.map((l) => l.id));
  const removed = current.filter((l) => !want.has(l.id));
  const addIds = [...want].filter((id) => !have.has(id));
  await unlinkLabels(tx, target.type, target.id, removed.map((l) => l.id));
  const added: LabelRow[] = [];
  if (addIds.length) {
    const t = now();
    for (const l of await labelsByIds(tx, addIds)) {
      if (await linkLabel(tx, l.id, target.type, target.id, t)) added.push(l);
    }
  }
  const byTitle = (a: LabelRow, b: LabelRow) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0);
  return { added: added.sort(byTitle), removed: removed.sort(byTitle) };
}

/** A project label by id (digits) or else by title, as 8.x's find_project_label; null when neither matches. */
export async function findLabelByIdOrTitle(q: Queries, projectId: number, idOrTitle: string): Promise<LabelRow | null> {
  if (/^\d+$/.test(idOrTitle)) {
    const id = Number(idOrTitle);
    if (Number.isSafeInteger(id) && id <= INT_MAX) {
      const byId = await findProjectLabel(q, projectId, id);
      if (byId) return byId;
    }
  }
  return findLabelByTitle(q, projectId, idOrTitle);
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
 * bad title, colour or description (nothing written). Two creates of one name at once: one 201, one 409 (the unique
 * index answers for the check).
 */
export async function createLabel(ctx: AppContext, projectId: number, p: CreateLabelParams): Promise<LabelRow> {
  if (p.name === undefined || p.name === '') throw badRequest('name');
  if (p.color === undefined || p.color === '') throw badRequest('color');
  const title = p.name.trim();
  if (await findLabelByTitle(ctx.data, projectId, title)) throw conflict('Label already exists');
  const errors: Record<string, string[]> = {};
  const te = labelTitleErrors(title);
  if (te.length) errors.title = te;
  const ce = labelColorErrors(p.color);
  if (ce.length) errors.color = ce;
  checkDescription(errors, p.description);
  if (Object.keys(errors).length) throw validationError(errors);
  const t = now();
  try {
    return await insertLabel(ctx.data, { projectId, title, color: p.color, description: p.description === '' ? null : p.description ?? null, at: t });
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict('Label already exists');
    if (isForeignKeyViolation(e)) throw notFound('Project'); // the project was deleted meanwhile
    throw e;
  }
}

/**
 * Update a label found by name: 400 `"name"` not given, 404 when absent, 400 when neither new_name nor color is given,
 * 409 when new_name belongs to another label, 400 with the validation hash for bad values (nothing written).
 */
export async function updateLabel(ctx: AppContext, projectId: number, p: UpdateLabelParams): Promise<LabelRow> {
  if (p.name === undefined || p.name === '') throw badRequest('name');
  // A blank new_name or color reaches here only when the caller gave it (the route drops absent ones): refused, never erased.
  const newName = p.new_name?.trim();
  const color = p.color;
  // 8.x looked the label up first (404), then asked for new_name or color (400).
  const label = await findLabelByTitle(ctx.data, projectId, p.name);
  if (!label) throw notFound('Label not found');
  if (newName === undefined && color === undefined) throw badRequestMessage('Required parameters "new_name" or "color" missing');
  if (newName !== undefined && newName !== label.title && (await findLabelByTitle(ctx.data, projectId, newName))) throw conflict('Label already exists');
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
  try {
    const row = await updateLabelRow(ctx.data, label.id, {
      title: newName, color, description: p.description === '' ? undefined : p.description, at: now(),
    });
    if (!row) throw notFound('Label not found'); // deleted meanwhile
    return row;
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict('Label already exists'); // the new name taken meanwhile
    throw e;
  }
}

/** Delete a label found by name with its links and subscriptions: 400 `"name"` not given, 404 `Label` when absent. */
export async function deleteLabel(ctx: AppContext, projectId: number, name: string | undefined): Promise<LabelRow> {
  if (name === undefined || name === '') throw badRequest('name');
  const deleted = await ctx.data.transaction(async (tx) => {
    const found = await findLabelByTitle(tx, projectId, name);
    if (!found) return null;
    await lockAsync(tx, LOCKS.label, found.id); // no subscription lands on it while it goes
    const label = await findLabelByTitle(tx, projectId, name);
    if (!label) return null;
    // deleted by another request meanwhile: 404, as if not found
    return (await deleteLabelRow(tx, label.id)) ? label : null;
  });
  if (!deleted) throw notFound('Label');
  return deleted;
}

/**
 * Subscribe a user to a label (POST .../labels/:label_id/subscription); false when already subscribed (304); 404
 * `Label Not Found` when the label was deleted meanwhile (no subscription is left behind).
 */
export async function subscribeToLabel(ctx: AppContext, userId: number, label: LabelRow): Promise<boolean> {
  const done = await ctx.data.transaction(async (tx) => {
    await lockAsync(tx, LOCKS.label, label.id);
    if (!(await labelExists(tx, label.id))) return null;
    return subscribe(tx, userId, 'Label', label.id);
  });
  if (done === null) throw notFound('Label');
  return done;
}

/** Unsubscribe a user from a label; false when not subscribed (304). */
export function unsubscribeFromLabel(ctx: AppContext, userId: number, label: LabelRow): Promise<boolean> {
  return unsubscribe(ctx.data, userId, 'Label', label.id);
}
