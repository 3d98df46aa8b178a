/** Group presenters (GitLab v3 Group, GroupDetail, Namespace) and their response schemas. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import { groupProjects, sharedProjects } from '../../services/users/groups.js';
import { Nullable } from '../params.js';
import { presentProjects, ProjectSchema } from './projects.js';

/** Group: id, name, path, description, visibility_level, lfs_enabled, avatar_url, web_url, request_access_enabled. */
export function groupEntity(ctx: AppContext, g: NamespaceRow) {
  return {
    id: g.id,
    name: g.name,
    path: g.path,
    description: g.description,
    visibility_level: g.visibilityLevel,
    lfs_enabled: g.lfsEnabled,
    avatar_url: null as string | null,
    web_url: `${ctx.externalUrl()}/groups/${g.path}`,
    request_access_enabled: g.requestAccessEnabled,
  };
}

/** Projects as a group's responses show them (GroupDetail, GET /groups/:id/projects): the project presenter. */
export async function presentGroupProjects(ctx: AppContext, viewer: UserRow, rows: ProjectRow[]) {
  return presentProjects(ctx, viewer, rows);
}

/** GroupDetail: Group plus the group's projects and the projects shared with it, limited to what the viewer can see. */
export async function groupDetail(ctx: AppContext, viewer: UserRow, g: NamespaceRow) {
  // side by side: on PostgreSQL their round trips overlap (on SQLite the same statements, one after the other)
  const [own, shared] = await Promise.all([groupProjects(ctx, viewer, g), sharedProjects(ctx, viewer, g)]);
  const [projects, sharedPresented] = await Promise.all([presentGroupProjects(ctx, viewer, own), presentGroupProjects(ctx, viewer, shared)]);
  return { ...groupEntity(ctx, g), projects, shared_projects: sharedPresented };
}

/** Namespace (GET /namespaces): id, path, kind. */
export function namespaceEntity(ns: NamespaceRow) {
  return { id: ns.id, path: ns.path, kind: ns.kind };
}

const S = Type.String();
const B = Type.Boolean();
const I = Type.Integer();
/** Response schema of Group. */
export const GroupSchema = Type.Object({
  id: I, name: S, path: S, description: S, visibility_level: I, lfs_enabled: B, avatar_url: Nullable(S), web_url: S, request_access_enabled: B,
});
/** Response schema of GroupDetail. */
export const GroupDetailSchema = Type.Object({
  ...GroupSchema.properties,
  projects: Type.Array(ProjectSchema),
  shared_projects: Type.Array(ProjectSchema),
});
/** Response schema of Namespace (GET /namespaces). */
export const NamespaceSchema = Type.Object({ id: I, path: S, kind: Type.Union([Type.Literal('user'), Type.Literal('group')]) });
