/**
 * The routes issues and merge requests have alike, written once (as 8.13's lib/api/subscriptions.rb and todos.rb serve
 * both from one table): `DELETE /projects/:id/<segment>/:<idParam>` (owners and admins; 404 for anyone else, as for an
 * absent one) answers the deleted issuable with its raw columns, `POST|DELETE .../subscription` the issuable (304 when
 * the caller already was, or was not, subscribed) and `POST .../todo` the new todo (304 when the caller already has a
 * pending one for it). Also the labels parameter both take.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, preValidationAsyncHookHandler, preValidationHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import type { TodoRow } from '../db/schema-collaboration.js';
import { notFoundMessage, notModified } from '../errors.js';
import { canProjectAsync, type ProjectAbility } from '../policy/permissions.js';
import { presentTodo, TodoSchema } from './entities/todos.js';
import { callerOf, dropBlankParams, projectLevelOf, projectOf } from './project-scope.js';

/** The labels param: comma-separated titles, or an array of them. */
export const Labels = Type.Union([Type.String(), Type.Array(Type.String())], { description: 'comma-separated label titles (or an array)' });

/** Labels as one comma-separated string, whichever form they came in. */
export const labelsParam = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);

/** dropBlankParams, but `labels=` stays: an empty labels param removes every label (8.x). */
export const dropBlankKeepLabels: preValidationAsyncHookHandler = async function (request, reply) {
  const b = request.body;
  const clear = !!b && typeof b === 'object' && !Buffer.isBuffer(b) && (b as Record<string, unknown>).labels === '';
  await dropBlankParams.call(this, request, reply);
  if (clear) (request.body as Record<string, unknown>).labels = '';
};

/** An issuable kind as these routes need it. */
export interface IssuableKind<Row> {
  /** URL segment, id param and what one is called: `issues`/`issue_id`/`issue`, `merge_requests`/`merge_request_id`/`merge request`. */
  segment: string;
  idParam: string;
  noun: string;
  /** OpenAPI tags and the issuable's response schema. */
  tags: string[];
  schema: TSchema;
  /** The preValidation of the kind's routes (loadProject with its read ability). */
  read: preValidationHookHandler;
  /** The issuable of the request's id param the caller may read (404 otherwise). */
  load(request: FastifyRequest): Promise<Row>;
  subscribe(ctx: AppContext, user: UserRow, row: Row): Promise<boolean>;
  unsubscribe(ctx: AppContext, user: UserRow, row: Row): Promise<boolean>;
  markTodo(ctx: AppContext, user: UserRow, project: ProjectRow, row: Row): Promise<TodoRow | null>;
  present(ctx: AppContext, user: UserRow, row: Row): Promise<Record<string, unknown>>;
  /** Deleting one: who may, the service, the raw columns the answer adds (8.x sent the destroyed record) and its schema. */
  destroyAbility: ProjectAbility;
  remove(ctx: AppContext, user: UserRow, row: Row): Promise<Row>;
  columns(ctx: AppContext, row: Row): Record<string, unknown>;
  deletedSchema: TSchema;
}

/** Registers the delete, subscription and todo routes of one kind. */
export function issuableRoutes<Row>(kind: IssuableKind<Row>): FastifyPluginAsync {
  return async function (api: FastifyInstance): Promise<void> {
    const { ctx } = api;
    const { tags, read } = kind;
    const base = `/projects/:id/${kind.segment}/:${kind.idParam}`;
    const params = Type.Object({ id: Type.String(), [kind.idParam]: Type.String({ description: `${kind.noun} ID (global)` }) });

    api.delete(base, {
      preValidation: read,
      schema: { tags, params, response: { 200: kind.deletedSchema } },
    }, async (request) => {
      const user = callerOf(request);
      const project = projectOf(request);
      const row = await kind.load(request);
      if (!(await canProjectAsync(ctx, user, kind.destroyAbility, project, projectLevelOf(request)))) throw notFoundMessage('404 Not found');
      const deleted = await kind.remove(ctx, user, row);
      return { ...kind.columns(ctx, deleted), ...(await kind.present(ctx, user, deleted)) };
    });

    api.post(`${base}/subscription`, {
      preValidation: read,
      schema: { tags, params, response: { 201: kind.schema } },
    }, async (request, reply) => {
      const user = callerOf(request);
      const row = await kind.load(request);
      if (!(await kind.subscribe(ctx, user, row))) throw notModified();
      return reply.code(201).send(await kind.present(ctx, user, row));
    });

    api.delete(`${base}/subscription`, {
      preValidation: read,
      schema: { tags, params, response: { 200: kind.schema } },
    }, async (request) => {
      const user = callerOf(request);
      const row = await kind.load(request);
      if (!(await kind.unsubscribe(ctx, user, row))) throw notModified();
      return kind.present(ctx, user, row);
    });

    api.post(`${base}/todo`, {
      preValidation: read,
      schema: { tags, params, response: { 201: TodoSchema } },
    }, async (request, reply) => {
      const user = callerOf(request);
      const row = await kind.load(request);
      const todo = await kind.markTodo(ctx, user, projectOf(request), row);
      if (!todo) throw notModified();
      return reply.code(201).send(await presentTodo(ctx, user, todo));
    });
  };
}
