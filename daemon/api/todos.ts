/** /api/v3/todos: the caller's todos (list with filters, mark one or all done). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TodoAction } from '../db/schema-collaboration.js';
import { invalidParam, notFound } from '../errors.js';
import { countTodos, listTodos, markAllTodosDone, markTodoDone, todoListWhere, type TodoFilters } from '../services/collaboration/todos.js';
import { presentTodo, presentTodos, TodoSchema } from './entities/todos.js';
import { paginate } from './pagination.js';
import { Int, PageParams } from './params.js';
import { callerOf } from './project-scope.js';

const ACTIONS: readonly TodoAction[] = ['assigned', 'mentioned', 'build_failed', 'marked', 'approval_required'];
const STATES = ['pending', 'done'] as const;
const TYPES = ['Issue', 'MergeRequest'] as const;

const ListQuery = Type.Object({
  ...PageParams,
  action: Type.Optional(Type.String({ description: ACTIONS.join(', ') })),
  author_id: Type.Optional(Int({ description: 'todos caused by this user' })),
  project_id: Type.Optional(Int({ description: 'todos on this project (none when the caller cannot read it)' })),
  state: Type.Optional(Type.String({ description: 'pending (default) or done' })),
  type: Type.Optional(Type.String({ description: 'Issue or MergeRequest' })),
});
const TodoParams = Type.Object({ id: Int() });
const tags = ['todos'];

/** One of `allowed`, or 400 `"<name>" does not have a valid value` (as an unknown visibility filter). */
function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw invalidParam(name, 'does not have a valid value');
  return value as T;
}

/** Registers the todo routes. */
export default async function todoRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  api.get('/todos', {
    schema: { tags, summary: "The caller's todos, newest first (pending unless state=done)", querystring: ListQuery, response: { 200: Type.Array(TodoSchema) } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const q = request.query as Static<typeof ListQuery>;
    const filters: TodoFilters = {
      action: oneOf('action', q.action, ACTIONS), authorId: q.author_id, projectId: q.project_id,
      state: oneOf('state', q.state, STATES), type: oneOf('type', q.type, TYPES),
    };
    const where = await todoListWhere(ctx, user, filters);
    const rows = await paginate(request, reply, ctx.data, (q) => countTodos(q, where), (q, limit, offset, total) => listTodos(ctx, q, where, limit, offset, total));
    return presentTodos(ctx, user, rows);
  });

  api.delete('/todos/:id', {
    schema: { tags, summary: 'Mark one of the caller\'s todos done (404 for another user\'s)', params: TodoParams, response: { 200: TodoSchema } },
  }, async (request) => {
    const user = callerOf(request);
    const row = await markTodoDone(ctx, user, (request.params as Static<typeof TodoParams>).id);
    const todo = row && (await presentTodo(ctx, user, row));
    if (!todo) throw notFound('Todo');
    return todo;
  });

  api.delete('/todos', {
    schema: { tags, summary: "Mark every pending todo of the caller done; answers how many", response: { 200: Type.Integer() } },
  }, async (request) => markAllTodosDone(ctx, callerOf(request)));
}
