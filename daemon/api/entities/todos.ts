/**
 * Todo presenter (GitLab v3 Todo, lib/api/entities.rb @ 8.13), batched: a fixed number of queries for a page
 * (projects, authors, notes, and one presenter call per target type), never one per row.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { type IssueRow, type TodoRow, type TodoTargetType } from '../../db/schema-collaboration.js';
import type { UserRow } from '../../db/schema.js';
import { liveIssuesByIds } from '../../db/issues.js';
import { noteTextsByIds } from '../../db/notes.js';
import { projectsByIds } from '../../db/projects.js';
import { usersByIds } from '../../db/users.js';
import { Nullable } from '../params.js';
import { IssueSchema, presentIssues } from './issues.js';
import { MergeRequestSchema } from './merge-requests.js';
import { BasicProjectSchema, presentBasicProjects } from './projects.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';

type Rec = Record<string, unknown>;

/**
 * How one kind of target is loaded and presented: its rows by id, the presented entities (one batch per page), its
 * title for `body` and its path segment in `target_url`. Merge requests register theirs with setTodoTargetKind.
 */
export interface TodoTargetKind<Row = unknown> {
  title(row: Row): string;
  /** `issues/3`, `merge_requests/7`: appended to the project's web URL. */
  webPath(row: Row): string;
  /** Its live rows by id, and the presented entities of a page, on the data layer (either engine). */
  loadAsync(ctx: AppContext, ids: number[]): Promise<Map<number, Row>>;
  presentAsync(ctx: AppContext, viewer: UserRow, rows: Row[]): Promise<Map<number, Rec>>;
}

const issueKind: TodoTargetKind<IssueRow> = {
  title: (row) => row.title,
  webPath: (row) => `issues/${row.iid}`,
  // a deleted issue takes its todos out of sight (8.x destroyed them with it)
  loadAsync: (ctx, ids) => liveIssuesByIds(ctx.data, ids),
  presentAsync: async (ctx, viewer, rows) => {
    const presented = await presentIssues(ctx, viewer, rows);
    return new Map(rows.map((r, i) => [r.id, presented[i]!]));
  },
};

const kinds: Partial<Record<TodoTargetType, TodoTargetKind<any>>> = { Issue: issueKind }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Install how todos present another target type (merge requests). */
export function setTodoTargetKind<Row>(type: TodoTargetType, kind: TodoTargetKind<Row>): void {
  kinds[type] = kind;
}

const S = Type.String();
const I = Type.Integer();
/**
 * Response schema of Todo. `target` is the Issue or the MergeRequest entity (by target_type). `author` is null only when the author's account was deleted.
 */
export const TodoSchema = Type.Object({
  id: I, project: BasicProjectSchema, author: Nullable(UserBasicSchema), action_name: S, target_type: S,
  target: Type.Union([IssueSchema, MergeRequestSchema]), target_url: S, body: S, state: S, created_at: S,
});

/**
 * Present a page of the viewer's todos (either engine): a fixed number of queries for a page. body is the note's text
 * when a note caused the todo, otherwise the target's title; target_url is the target's web page, with `#note_<id>`
 * for a note.
 */
export async function presentTodos(ctx: AppContext, viewer: UserRow, rows: TodoRow[]): Promise<Rec[]> {
  if (rows.length === 0) return [];
  const q = ctx.data;
  const projects = await projectsByIds(q, [...new Set(rows.map((r) => r.projectId))]);
  const basic = new Map((await presentBasicProjects(ctx, projects)).map((p) => [p.id as number, p]));
  const authors = await usersByIds(q, rows.map((r) => r.authorId));
  const notes = await noteTextsByIds(q, rows.map((r) => r.noteId));
  const gravatar = await gravatarEnabledAsync(ctx);
  const targets = new Map<TodoTargetType, { rows: Map<number, unknown>; presented: Map<number, Rec> }>();
  for (const type of new Set(rows.map((r) => r.targetType))) {
    const kind = kinds[type];
    if (!kind) continue;
    const ids = [...new Set(rows.filter((r) => r.targetType === type).map((r) => r.targetId))];
    const loaded = await kind.loadAsync(ctx, ids);
    targets.set(type, { rows: loaded, presented: await kind.presentAsync(ctx, viewer, [...loaded.values()]) });
  }
  return rows.flatMap((t) => {
    const kind = kinds[t.targetType];
    const target = targets.get(t.targetType);
    const row = target?.rows.get(t.targetId);
    const project = basic.get(t.projectId);
    if (!kind || !target || row === undefined || !project) return []; // its target is gone: nothing to show
    const author = t.authorId !== null ? authors.get(t.authorId) : undefined;
    const note = t.noteId !== null ? notes.get(t.noteId) : undefined;
    return [{
      id: t.id,
      project,
      author: author ? userBasic(ctx, author, gravatar) : null,
      action_name: t.action,
      target_type: t.targetType,
      target: target.presented.get(t.targetId)!,
      target_url: `${project.web_url as string}/${kind.webPath(row)}${t.noteId !== null ? `#note_${t.noteId}` : ''}`,
      body: note ?? kind.title(row),
      state: t.state,
      created_at: t.createdAt,
    }];
  });
}

/** Present one todo (DELETE /todos/:id, POST .../todo). */
export async function presentTodo(ctx: AppContext, viewer: UserRow, row: TodoRow): Promise<Rec | undefined> {
  return (await presentTodos(ctx, viewer, [row]))[0];
}
