/** /api/v3 routes of the projects resource: lists, get, create (also for a user), update and delete. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { normalizeBoolean } from './params.js';
import { countProjects, fetchProjects, projectListQueryAsync, type ProjectListFilters, type ProjectListScope } from '../services/projects/lists.js';
import { createProjectWithStorage, deleteProject, updateProjectWithStorage, type ProjectParams } from '../services/projects/projects.js';
import { findUser } from '../services/users/users.js';
import { presentBasicProjects, presentProject, presentProjects, ProjectListSchema, ProjectSchema } from './entities/projects.js';
import { pageOf, setPageHeaders } from './pagination.js';
import { ANSWER_BYTES, ResponseCache } from './response-cache.js';
import { Bool, Int, NotBlank, PageParams, ProjectIdParams, RequiredString } from './params.js';
import { adminOnly, callerOf, dropBlankParams, loadProject, projectAccessOf, projectLevelOf, projectOf } from './project-scope.js';
import projectActionRoutes from './project-actions.js';
import projectHookRoutes from './project-hooks.js';
import projectEventRoutes from './project-events.js';
import projectUploadRoutes from './project-uploads.js';

const O = Type.Optional;
const ListQuery = Type.Object({
  archived: O(Type.String({ description: 'true or false: limit by archived status' })),
  visibility: O(Type.String({ description: 'public, internal or private' })),
  order_by: O(Type.String({ description: 'id, name, path, created_at, updated_at or last_activity_at (default created_at)' })),
  sort: O(Type.String({ description: 'asc or desc (default desc)' })),
  search: O(Type.String({ description: 'substring of the path, name or description' })),
  simple: O(Type.String({ description: 'true: BasicProjectDetails only' })),
  ...PageParams,
});
type ListQueryT = Static<typeof ListQuery>;

/** Flags shared by create, create-for-user and update. */
const ProjectFlags = {
  description: O(Type.String()),
  issues_enabled: O(Bool()),
  merge_requests_enabled: O(Bool()),
  builds_enabled: O(Bool()),
  wiki_enabled: O(Bool()),
  snippets_enabled: O(Bool()),
  container_registry_enabled: O(Bool()),
  shared_runners_enabled: O(Bool()),
  lfs_enabled: O(Bool()),
  request_access_enabled: O(Bool()),
  only_allow_merge_if_build_succeeds: O(Bool()),
  public: O(Bool({ description: 'true equals visibility_level 20' })),
  visibility_level: O(Int({ description: '0 private, 10 internal, 20 public' })),
  public_builds: O(Bool()),
};
const CreateBody = Type.Object({ name: RequiredString(), path: O(Type.String()), namespace_id: O(Int()), import_url: O(Type.String()), ...ProjectFlags });
const CreateForUserBody = Type.Object({ name: RequiredString(), import_url: O(Type.String()), ...ProjectFlags });
const UpdateBody = Type.Object({ name: O(NotBlank({ description: 'blank: 400 can\'t be blank' })), path: O(NotBlank({ description: 'blank: 400 can\'t be blank' })), default_branch: O(Type.String()), ...ProjectFlags });
/** Serialized list pages and single projects, exact until the next database write (bounded: about 30 KB a page). */
const answers = new ResponseCache(200, ANSWER_BYTES);
const FLAG_KEYS = Object.keys(ProjectFlags) as (keyof typeof ProjectFlags)[];

/** Only the declared keys reach the service (GitLab's attributes_for_keys). */
function projectParams(body: Record<string, unknown>, extra: string[]): ProjectParams {
  const out: Record<string, unknown> = {};
  for (const k of [...FLAG_KEYS, ...extra]) if (body[k] !== undefined) out[k] = body[k];
  return out as ProjectParams;
}


/** Registers the projects routes (and the project sub-resources). */
export default async function projectsRoutes(api: FastifyInstance): Promise<void> {
  const { ctx } = api;

  // A page depends only on the caller, the URL and the database: clients that poll a list (CLI views, dashboards,
  // CI tools) get the same page again without a query until something is written (on SQLite; db/read-cache.ts).
  // Every route here runs on the data layer, on either engine.
  const listKey = (request: FastifyRequest) => `${callerOf(request).id}\u0000${request.url}`;
  const keptList = answers.keptFirst(ctx, listKey);
  const list = (request: FastifyRequest, reply: FastifyReply, scope: ProjectListScope, withAccess: boolean, extraSearch?: string) => {
    return answers.sendAsync(ctx, request, reply, listKey(request), async () => {
      const page = pageOf(request);
      const q = request.query as ListQueryT;
      const filters: ProjectListFilters = { archived: q.archived, visibility: q.visibility, order_by: q.order_by, sort: q.sort, search: q.search };
      // the COUNT and the page agree (one snapshot)
      const { n, rows } = await ctx.data.snapshot(async (tx) => {
        const query = await projectListQueryAsync(ctx, tx, scope, filters, extraSearch);
        const total = await countProjects(ctx, tx, query);
        return { n: total, rows: total === 0 ? [] : await fetchProjects(ctx, tx, query, page.limit, page.offset, total) };
      });
      setPageHeaders(request, reply, page, n);
      return normalizeBoolean(q.simple) === true ? presentBasicProjects(ctx, rows) : presentProjects(ctx, callerOf(request), rows, { withAccess });
    });
  };
  const listSchema = (summary: string) => ({ tags: ['projects'], summary, querystring: ListQuery, response: { 200: ProjectListSchema } });

  api.get('/projects', { preValidation: keptList, schema: listSchema('Projects the caller is a member of (ProjectWithAccess)') }, (request, reply) =>
    list(request, reply, { kind: 'authorized', user: callerOf(request) }, true));
  api.get('/projects/owned', { preValidation: keptList, schema: listSchema('Projects in the caller\'s personal namespace') }, (request, reply) =>
    list(request, reply, { kind: 'owned', user: callerOf(request) }, true));
  api.get('/projects/starred', { preValidation: keptList, schema: listSchema('Visible projects the caller starred') }, (request, reply) =>
    list(request, reply, { kind: 'starred', user: callerOf(request) }, false));
  api.get('/projects/visible', { preValidation: keptList, schema: listSchema('Every project the caller can see') }, (request, reply) =>
    list(request, reply, { kind: 'visible', user: callerOf(request) }, true));
  api.get('/projects/all', { preValidation: [adminOnly, keptList], schema: listSchema('All projects (administrators only)') }, (request, reply) =>
    list(request, reply, { kind: 'all' }, true));
  api.get('/projects/search/:query', {
    preValidation: keptList,
    schema: { ...listSchema('Visible projects whose path, name or description contains :query'), params: Type.Object({ query: Type.String() }) },
  }, (request, reply) =>
    list(request, reply, { kind: 'visible', user: callerOf(request) }, false, (request.params as { query: string }).query));

  const projectKey = (request: FastifyRequest) => `${callerOf(request).id}\u0000project:${projectOf(request).id}`;
  api.get('/projects/:id', {
    preValidation: [loadProject('read_project'), answers.keptFirst(ctx, projectKey)],
    schema: { tags: ['projects'], params: ProjectIdParams, response: { 200: ProjectSchema } },
  }, (request, reply) => answers.sendAsync(ctx, request, reply, projectKey(request), async () => {
    // The project and the level were read once, by the hook (on PostgreSQL after the request's write version, which the
    // answer is kept under: never older than its version).
    const { project, level } = projectAccessOf(request);
    return presentProject(ctx, callerOf(request), project, { withAccess: true, withRunnersToken: true, level });
  }));

  api.post('/projects', {
    preValidation: dropBlankParams,
    schema: { tags: ['projects'], body: CreateBody, response: { 201: ProjectSchema } },
  }, async (request, reply) => {
    const user = callerOf(request);
    const body = request.body as Static<typeof CreateBody>;
    const project = await createProjectWithStorage(ctx, user, user, { ...projectParams(body, ['path', 'namespace_id', 'import_url']), name: body.name });
    return reply.code(201).send(await presentProject(ctx, user, project, { withRunnersToken: true }));
  });

  api.post('/projects/user/:user_id', {
    preValidation: [adminOnly, dropBlankParams],
    schema: { tags: ['projects'], params: Type.Object({ user_id: Type.Integer() }), body: CreateForUserBody, response: { 201: ProjectSchema } },
  }, async (request, reply) => {
    const admin = callerOf(request);
    const owner = await findUser(ctx, (request.params as { user_id: number }).user_id);
    const body = request.body as Static<typeof CreateForUserBody>;
    const project = await createProjectWithStorage(ctx, admin, owner, { ...projectParams(body, ['import_url']), name: body.name });
    return reply.code(201).send(await presentProject(ctx, admin, project, { withRunnersToken: true }));
  });

  api.put('/projects/:id', {
    preValidation: [loadProject('admin_project'), dropBlankParams],
    schema: { tags: ['projects'], params: ProjectIdParams, body: UpdateBody, response: { 200: ProjectSchema } },
  }, async (request) => {
    const user = callerOf(request);
    const params = projectParams((request.body ?? {}) as Record<string, unknown>, ['name', 'path', 'default_branch']);
    const level = projectLevelOf(request);
    const updated = await updateProjectWithStorage(ctx, user, projectOf(request), params, level);
    return presentProject(ctx, user, updated, { withAccess: true, withRunnersToken: true, level });
  });

  api.delete('/projects/:id', {
    preValidation: loadProject('remove_project'),
    schema: { tags: ['projects'], params: ProjectIdParams, response: { 200: Type.Boolean() } },
  }, async (request) => {
    await deleteProject(ctx, projectOf(request));
    return true;
  });

  await api.register(projectActionRoutes);
  await api.register(projectHookRoutes);
  await api.register(projectEventRoutes);
  await api.register(projectUploadRoutes);
}
