/**
 * /api/v3/projects/:id/<noteables>/:<noteable_id>/notes (reference 2.5): list, get, create, update and delete notes.
 * `noteRoutes(kind)` builds the routes for one kind of noteable (merge requests mount it in their room); the default
 * export mounts them for issues and snippets and installs the note presenter of comment events.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import type { NoteRow } from '../db/schema-collaboration.js';
import { badRequest, forbidden, notFound, notFoundMessage, validationError } from '../errors.js';
import { canProjectAsync } from '../policy/permissions.js';
import { AwardError } from '../services/collaboration/award-emoji.js';
import {
  countNotes, createNote, deleteNote, findNote, listNotes, notesByIds, updateNote, type Noteable,
} from '../services/collaboration/notes.js';
import { lookupProjectAsync } from '../services/projects/projects.js';
import { presentAward, AwardEmojiSchema } from './entities/award-emoji.js';
import { setEventNotePresenter } from './entities/events.js';
import { NoteSchema, presentNote, presentNotes } from './entities/notes.js';
import { ISSUE_NOTEABLES, loadNoteable, noteableOf, SNIPPET_NOTEABLES, type NoteableKind } from './noteables.js';
import { paginate } from './pagination.js';
import { PageParams } from './params.js';
import { callerOf, dropBlankParams, loadProject, projectLevelOf, projectOf } from './project-scope.js';

const O = Type.Optional;
const NoteBody = Type.Object({
  body: O(Type.String({ description: 'the note text (required); a body that is only an emoji (`:+1:`) awards it instead' })),
  created_at: O(Type.String({ description: 'ISO 8601 time; applied for admins and project owners only' })),
});
const UpdateBody = Type.Object({ body: O(Type.String({ description: 'the new note text (required)' })) });

/** An ISO 8601 time as the API's UTC form, or null when it is not one. */
function isoTime(s: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s.trim())) return null;
  const ms = Date.parse(s.trim());
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** The required `body` param: 400 `"body" not given` when missing or blank (8.x required_attributes!). */
function requiredBody(body: { body?: unknown } | undefined): string {
  const b = body?.body;
  if (typeof b !== 'string' || b.trim() === '') throw badRequest('body');
  return b;
}

/** Whether `user` may edit or delete `note` (8.x admin_note: its author, or master and up / admin). */
async function canAdminNote(
  ctx: AppContext, user: UserRow, project: ProjectRow, note: { authorId: number | null }, level?: number,
): Promise<boolean> {
  return (note.authorId === user.id && user.state === 'active') || canProjectAsync(ctx, user, 'admin_note', project, level);
}

/** Builds the note routes of one kind of noteable. */
export function noteRoutes(kind: NoteableKind): FastifyPluginAsync {
  return async function (api: FastifyInstance): Promise<void> {
    const { ctx } = api;
    const base = `/projects/:id/${kind.segment}/:${kind.idParam}/notes`;
    const tags = [kind.tag, 'notes'];
    const Params = Type.Object({ id: Type.String(), [kind.idParam]: Type.String() });
    const NoteParams = Type.Object({ id: Type.String(), [kind.idParam]: Type.String(), note_id: Type.Integer() });
    const read = [loadProject('read_project'), loadNoteable(kind)];

    api.get(base, {
      preValidation: read,
      schema: { tags, params: Params, querystring: Type.Object(PageParams), response: { 200: Type.Array(NoteSchema) } },
    }, async (request, reply) => {
      const noteable = noteableOf(request);
      const rows = await paginate(request, reply, ctx.data, (q) => countNotes(q, noteable), (q, limit, offset, total) => listNotes(ctx, q, noteable, limit, offset, total));
      return presentNotes(ctx, rows);
    });

    api.get(`${base}/:note_id`, {
      preValidation: read,
      schema: { tags, params: NoteParams, response: { 200: NoteSchema } },
    }, async (request) => {
      const note = await findNote(ctx.data, noteableOf(request), (request.params as { note_id: number }).note_id);
      if (!note) throw notFound('Note');
      return presentNote(ctx, note);
    });

    api.post(base, {
      preValidation: [...read, dropBlankParams],
      schema: { tags, params: Params, body: NoteBody, response: { 201: Type.Union([NoteSchema, AwardEmojiSchema]) } },
    }, async (request, reply) => {
      const user = callerOf(request);
      const project = projectOf(request);
      const level = projectLevelOf(request);
      if (!(await canProjectAsync(ctx, user, 'create_note', project, level))) throw forbidden();
      const params = request.body as { body?: string; created_at?: string };
      const body = requiredBody(params);
      let createdAt: string | null = null;
      if (params.created_at !== undefined && (await canProjectAsync(ctx, user, 'set_issuable_timestamps', project, level))) {
        createdAt = isoTime(params.created_at);
        if (createdAt === null) throw validationError({ created_at: ['is invalid'] });
      }
      try {
        const made = await createNote(ctx, user, project, noteableOf(request), { body, createdAt });
        return reply.code(201).send(made.kind === 'note' ? await presentNote(ctx, made.note) : await presentAward(ctx, made.award));
      } catch (e) {
        // 8.x: a note that fails to save (here: the same award twice) answers 404 "Note {errors} Not Found".
        if (e instanceof AwardError) throw notFound(`Note ${e.message}`);
        throw e;
      }
    });

    api.put(`${base}/:note_id`, {
      preValidation: [...read, dropBlankParams],
      schema: { tags, params: NoteParams, body: UpdateBody, response: { 200: NoteSchema } },
    }, async (request) => {
      const user = callerOf(request);
      const project = projectOf(request);
      const noteable = noteableOf(request);
      const note = await findNote(ctx.data, noteable, (request.params as { note_id: number }).note_id);
      if (!note) throw notFoundMessage('404 Not found');
      if (!(await canAdminNote(ctx, user, project, note, projectLevelOf(request)))) throw forbidden();
      const body = requiredBody(request.body as { body?: string });
      return presentNote(ctx, await updateNote(ctx, user, project, noteable, note, body));
    });

    api.delete(`${base}/:note_id`, {
      preValidation: read,
      schema: { tags, params: NoteParams, response: { 200: NoteSchema } },
    }, async (request) => {
      const user = callerOf(request);
      const note = await findNote(ctx.data, noteableOf(request), (request.params as { note_id: number }).note_id);
      if (!note) throw notFoundMessage('404 Not found');
      if (!(await canAdminNote(ctx, user, projectOf(request), note, projectLevelOf(request)))) throw forbidden();
      const shown = await presentNote(ctx, note);
      await deleteNote(ctx, note);
      return shown;
    });
  };
}

/** The kinds whose notes comment events may show, by noteable type (merge requests and snippets add theirs). */
const EVENT_NOTEABLES = new Map<string, NoteableKind>([['Issue', ISSUE_NOTEABLES], ['Snippet', SNIPPET_NOTEABLES]]);

/** Register a kind of noteable whose notes comment events show (merge requests, snippets). */
export function addEventNoteable(type: string, kind: NoteableKind): void {
  EVENT_NOTEABLES.set(type, kind);
}

/**
 * The `note` of comment events: the notes by id, left out when the viewer may not read their noteable (a
 * confidential issue) or it is gone. A fixed number of queries for a page: the notes, their noteables per kind,
 * their projects, their authors, and the viewer's access once per project and kind of check.
 */
async function eventNotes(ctx: AppContext, noteIds: number[], viewer: UserRow | null): Promise<Map<number, Record<string, unknown>>> {
  const rows = await notesByIds(ctx.data, noteIds);
  const noteables = new Map<string, Map<number, Noteable>>();
  for (const [type, kind] of EVENT_NOTEABLES) {
    const ids = rows.filter((n) => n.noteableType === type).map((n) => n.noteableId);
    if (!ids.length) continue;
    noteables.set(type, await kind.loadManyAsync(ctx, ids));
  }
  const projects = new Map<number, ProjectRow | null>();
  const decided = new Map<string, boolean>();
  const visible: NoteRow[] = [];
  for (const n of rows) {
    const kind = EVENT_NOTEABLES.get(n.noteableType);
    const noteable = noteables.get(n.noteableType)?.get(n.noteableId);
    if (!kind || !noteable || noteable.projectId !== n.projectId) continue;
    if (!projects.has(n.projectId)) projects.set(n.projectId, await lookupProjectAsync(ctx, n.projectId));
    const project = projects.get(n.projectId);
    if (!project) continue;
    // the answer depends only on the project, the kind, confidentiality and whether the viewer wrote or is assigned it
    const mine = viewer ? `${noteable.authorId === viewer.id}:${noteable.assigneeId === viewer.id}` : '-';
    const key = `${n.noteableType}:${n.projectId}:${noteable.confidential}:${noteable.visibilityLevel ?? ''}:${mine}`;
    let ok = decided.get(key);
    if (ok === undefined) {
      ok = await kind.canReadAsync(ctx, viewer, project, noteable);
      decided.set(key, ok);
    }
    if (ok) visible.push(n);
  }
  const shown = await presentNotes(ctx, visible);
  return new Map(visible.map((n, i) => [n.id, shown[i]! as Record<string, unknown>]));
}

/** Registers the note routes of issues and snippets and the note presenters of comment events. */
export default async function notesRoutes(api: FastifyInstance): Promise<void> {
  setEventNotePresenter(eventNotes);
  await api.register(noteRoutes(ISSUE_NOTEABLES));
  await api.register(noteRoutes(SNIPPET_NOTEABLES));
}
