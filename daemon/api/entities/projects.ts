/** Project presenters (GitLab v3 Project / ProjectWithAccess / BasicProjectDetails), batched for lists. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { toNamespace } from '../../db/rows.js';
import type { NamespaceRow, ProjectRow, UserRow } from '../../db/schema.js';
import { projectAbilityAtLevel, projectAbilityWithoutLevel, projectAccessLevelAsync } from '../../policy/permissions.js';
import type { Queries } from '../../db/layer/types.js';
import { namespacesByIds, namespacesWithOwners, projectPageNumbers, projectPathsByIds } from '../../db/projects.js';
import { Nullable } from '../params.js';
import { gravatarEnabledAsync, userBasic, UserBasicSchema } from './users.js';
import { projectUrls } from '../../web-urls.js';

/** What a project presentation adds beyond the Project entity. */
export interface PresentOptions {
  /** Add `permissions` (ProjectWithAccess). */
  withAccess?: boolean;
  /** Add `runners_token` when the viewer may admin the project (single-project responses). */
  withRunnersToken?: boolean;
}

type Rec = Record<string, unknown>;

/** The raw namespace record, as GitLab 8.x sent it inside a project. */
export function namespaceRecord(ns: NamespaceRow) {
  return {
    id: ns.id, name: ns.name, path: ns.path, owner_id: ns.kind === 'user' ? ns.ownerId : null, created_at: ns.createdAt,
    updated_at: ns.updatedAt, description: ns.description, avatar: { url: null as string | null },
    share_with_group_lock: ns.shareWithGroupLock, visibility_level: ns.visibilityLevel,
    request_access_enabled: ns.requestAccessEnabled, deleted_at: null as string | null, lfs_enabled: ns.lfsEnabled,
    kind: ns.kind,
  };
}

/** web_url, http and ssh clone URLs of a project. */
export { projectUrls };

/** What the presenters looked up for one project. */
interface ProjectParts {
  ns: NamespaceRow;
  owner: Rec | undefined;
  forkedFrom: Rec | undefined;
  stars: number;
  forks: number;
  openIssues: number;
  links: { group_id: number; group_name: string; group_access: number }[];
  runnersToken: boolean;
  projectAccess: number | undefined;
  groupAccess: number | undefined;
}

/** The Project entity of one row. */
function projectEntity(ctx: AppContext, p: ProjectRow, opts: PresentOptions, r: ProjectParts): Rec {
  const ns = r.ns;
  const urls = projectUrls(ctx, ns, p);
  // One literal of one shape, the absent optional fields undefined (neither the response schema's serializer nor
  // JSON.stringify writes them): V8 builds it from its boilerplate. With spreads, the properties after them were
  // defined one by one in V8's runtime once a memory-reducing collection had dropped their maps (daemon/idle-memory.ts).
  return {
    id: p.id,
    description: p.description,
    default_branch: p.defaultBranch,
    tag_list: JSON.parse(p.tagList) as string[],
    public: p.visibilityLevel === 20,
    archived: p.archived,
    visibility_level: p.visibilityLevel,
    web_url: urls.web_url,
    http_url_to_repo: urls.http_url_to_repo,
    ssh_url_to_repo: urls.ssh_url_to_repo,
    owner: r.owner,
    name: p.name,
    name_with_namespace: `${ns.name} / ${p.name}`,
    path: p.path,
    path_with_namespace: `${ns.path}/${p.path}`,
    container_registry_enabled: p.containerRegistryEnabled,
    issues_enabled: p.issuesEnabled,
    merge_requests_enabled: p.mergeRequestsEnabled,
    wiki_enabled: p.wikiEnabled,
    builds_enabled: p.buildsEnabled,
    snippets_enabled: p.snippetsEnabled,
    created_at: p.createdAt,
    last_activity_at: p.lastActivityAt,
    shared_runners_enabled: p.sharedRunnersEnabled,
    lfs_enabled: p.lfsEnabled,
    creator_id: p.creatorId,
    namespace: namespaceRecord(ns),
    forked_from_project: r.forkedFrom ? basicFromRaw(ctx, r.forkedFrom) : undefined,
    avatar_url: null,
    star_count: r.stars,
    forks_count: r.forks,
    open_issues_count: p.issuesEnabled ? r.openIssues : undefined,
    public_builds: p.publicBuilds,
    shared_with_groups: r.links.map((l) => ({ group_id: l.group_id, group_name: l.group_name, group_access_level: l.group_access })),
    only_allow_merge_if_build_succeeds: p.onlyAllowMergeIfBuildSucceeds,
    request_access_enabled: p.requestAccessEnabled,
    runners_token: r.runnersToken ? ctx.secrets.derive('runners', p.runnersTokenSalt) : undefined,
    permissions: opts.withAccess
      ? {
          project_access: r.projectAccess !== undefined ? { access_level: r.projectAccess, notification_level: 3 } : null,
          group_access: r.groupAccess !== undefined ? { access_level: r.groupAccess, notification_level: 3 } : null,
        }
      : undefined,
  };
}

/** Options of the data-layer presenter. */
export interface PresentOptionsAsync extends PresentOptions {
  /** The viewer's access level on the (single) project when the caller already read it: the runners token check reuses it. */
  level?: number;
}

/**
 * The presenter (both engines): the Project entities of a page in two statements (the numbers and
 * group shares of every project, the namespaces with their owners), a third only when a project is a fork, run side
 * by side; the viewer's access level for the runners token only when not given (`opts.level`) and needed.
 */
export async function presentProjects(
  ctx: AppContext, viewer: UserRow | null, rows: ProjectRow[], opts: PresentOptionsAsync = {}, q: Queries = ctx.data,
): Promise<Rec[]> {
  if (rows.length === 0) return [];
  const nsIdList = [...new Set(rows.map((r) => r.namespaceId))];
  const withAccess = !!opts.withAccess && !!viewer;
  const forkedFromIds = [...new Set(rows.map((r) => r.forkedFromId).filter((x): x is number => x !== null))];
  // Independent reads, side by side: on PostgreSQL their round trips overlap (the gravatar setting is cached on SQLite).
  const [numbers, nsRows, forkedFromRows, gravatar] = await Promise.all([
    projectPageNumbers(q, rows.map((r) => r.id), nsIdList, withAccess ? viewer!.id : null),
    namespacesWithOwners(q, nsIdList),
    forkedFromIds.length ? projectPathsByIds(q, forkedFromIds) : Promise.resolve([]),
    gravatarEnabledAsync(ctx, q),
  ]);
  const forkedFrom = new Map(forkedFromRows.map((p) => [p.id as number, p]));

  const nsById = new Map<number, { ns: NamespaceRow; owner: Rec | undefined }>();
  for (const n of nsRows) {
    const ns = toNamespace(n);
    const owner = ns.kind === 'user' && ns.ownerId && n.owner_user_id != null
      ? {
        ...userBasic(ctx, { id: n.owner_user_id as number, username: n.owner_username as string, name: n.owner_name as string, state: n.owner_state as string,
          email: n.owner_email as string } as UserRow, gravatar),
        created_at: n.owner_created_at as string,
      }
      : undefined;
    nsById.set(ns.id, { ns, owner });
  }
  const stars = new Map<number, number>();
  const forks = new Map<number, number>();
  const issues = new Map<number, number>();
  const pa = new Map<number, number>();
  const ga = new Map<number, number>();
  const links: { project_id: number; group_id: number; group_name: string; group_access: number; o: number }[] = [];
  const maps: Record<string, Map<number, number>> = { stars, forks, issues, pa, ga };
  for (const r of numbers) {
    if (r.k === 'links') links.push({ project_id: r.id, group_id: r.g!, group_name: r.name!, group_access: Number(r.n), o: r.o! });
    else maps[r.k]!.set(r.id, Number(r.n));
  }
  links.sort((a, b) => a.o - b.o);

  const out: Rec[] = [];
  for (const p of rows) {
    const { ns, owner } = nsById.get(p.namespaceId)!;
    let runnersToken = false;
    if (opts.withRunnersToken) {
      const decided = projectAbilityWithoutLevel(viewer, 'admin_project', p);
      runnersToken = decided ?? projectAbilityAtLevel(viewer!, 'admin_project', p, opts.level ?? (await projectAccessLevelAsync(ctx, viewer, p, q)));
    }
    out.push(projectEntity(ctx, p, opts, {
      ns, owner, forkedFrom: p.forkedFromId !== null ? forkedFrom.get(p.forkedFromId) : undefined,
      stars: stars.get(p.id) ?? 0, forks: forks.get(p.id) ?? 0, openIssues: issues.get(p.id) ?? 0,
      links: links.filter((l) => l.project_id === p.id), runnersToken, projectAccess: pa.get(p.id), groupAccess: ga.get(p.namespaceId),
    }));
  }
  return out;
}

/** Present one project (the data-layer presenter of one row). */
export async function presentProject(ctx: AppContext, viewer: UserRow | null, row: ProjectRow, opts: PresentOptionsAsync = {}): Promise<Rec> {
  return (await presentProjects(ctx, viewer, [row], opts))[0]!;
}

/** BasicProjectDetails for many projects, with one namespace statement. */
export async function presentBasicProjects(ctx: AppContext, rows: ProjectRow[], q: Queries = ctx.data): Promise<Rec[]> {
  if (rows.length === 0) return [];
  const nsById = await namespacesByIds(q, [...new Set(rows.map((r) => r.namespaceId))]);
  return rows.map((p) => basicProject(ctx, p, nsById.get(p.namespaceId)!));
}

/** BasicProjectDetails: id, http_url_to_repo, web_url, name, name_with_namespace, path, path_with_namespace. */
export function basicProject(ctx: AppContext, p: ProjectRow, ns: NamespaceRow) {
  return { id: p.id, ...pick(projectUrls(ctx, ns, p)), name: p.name, name_with_namespace: `${ns.name} / ${p.name}`, path: p.path, path_with_namespace: `${ns.path}/${p.path}` };
}
const pick = (u: ReturnType<typeof projectUrls>) => ({ http_url_to_repo: u.http_url_to_repo, web_url: u.web_url });
function basicFromRaw(ctx: AppContext, raw: Rec) {
  const ns = { path: raw.ns_path as string, name: raw.ns_name as string };
  const p = { path: raw.path as string };
  return { id: raw.id, ...pick(projectUrls(ctx, ns, p)), name: raw.name, name_with_namespace: `${ns.name} / ${raw.name}`, path: p.path, path_with_namespace: `${ns.path}/${p.path}` };
}



const S = Type.String();
const B = Type.Boolean();
const I = Type.Integer();
const Access = Nullable(Type.Object({ access_level: I, notification_level: I }));
/** Response schema of BasicProjectDetails. */
export const BasicProjectSchema = Type.Object({ id: I, http_url_to_repo: S, web_url: S, name: S, name_with_namespace: S, path: S, path_with_namespace: S });
/** Response schema of a raw namespace record inside a project. */
export const NamespaceRecordSchema = Type.Object({
  id: I, name: S, path: S, owner_id: Nullable(I), created_at: S, updated_at: S, description: S, avatar: Type.Object({ url: Nullable(S) }),
  share_with_group_lock: B, visibility_level: I, request_access_enabled: B, deleted_at: Nullable(S), lfs_enabled: B, kind: S,
});
/** Response schema of Project (with the optional parts of ProjectWithAccess). */
export const ProjectSchema = Type.Object({
  id: I, description: Nullable(S), default_branch: S, tag_list: Type.Array(S), public: B, archived: B, visibility_level: I,
  ssh_url_to_repo: S, http_url_to_repo: S, web_url: S,
  owner: Type.Optional(Type.Object({ ...UserBasicSchema.properties, created_at: S })),
  name: S, name_with_namespace: S, path: S, path_with_namespace: S, container_registry_enabled: B, issues_enabled: B,
  merge_requests_enabled: B, wiki_enabled: B, builds_enabled: B, snippets_enabled: B, created_at: S, last_activity_at: S,
  shared_runners_enabled: B, lfs_enabled: B, creator_id: Nullable(I), namespace: NamespaceRecordSchema,
  forked_from_project: Type.Optional(BasicProjectSchema), avatar_url: Nullable(S), star_count: I, forks_count: I,
  open_issues_count: Type.Optional(I), runners_token: Type.Optional(S), public_builds: B,
  shared_with_groups: Type.Array(Type.Object({ group_id: I, group_name: S, group_access_level: I })),
  only_allow_merge_if_build_succeeds: B, request_access_enabled: B,
  permissions: Type.Optional(Type.Object({ project_access: Access, group_access: Access })),
});

/** Response schema of a project list: Project (with access where the route adds it) or, with `simple=true`, BasicProjectDetails. */
export const ProjectListSchema = Type.Array(Type.Union([ProjectSchema, BasicProjectSchema]));

/** ProjectGroupLink: the answer of POST /projects/:id/share. */
export function projectGroupLink(l: { id: number; projectId: number; groupId: number; groupAccess: number; expiresAt: string | null }) {
  return { id: l.id, project_id: l.projectId, group_id: l.groupId, group_access: l.groupAccess, expires_at: l.expiresAt };
}
/** Response schema of ProjectGroupLink. */
export const ProjectGroupLinkSchema = Type.Object({ id: I, project_id: I, group_id: I, group_access: I, expires_at: Nullable(S) });
