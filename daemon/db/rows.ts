/** Raw snake_case rows (from cached prepared statements) mapped to the row types of db/schema*.ts. */
import type { ApplicationSettingsRow, MemberRow, NamespaceRow, PersonalAccessTokenRow, ProjectEventFlags, ProjectRow, UserRow } from './schema.js';
import type { RunnerRow } from './schema-ci.js';
import type { AwardEmojiRow, IssueRow, LabelRow, MilestoneRow, NoteRow, TodoRow } from './schema-collaboration.js';
import type { ProtectedBranchRow } from './schema-git.js';
import type { MergeRequestDiffRow, MergeRequestRow } from './schema-merge-requests.js';
import type { CommitNoteRow, ReleaseRow } from './schema-notes.js';

type Rec = Record<string, unknown>;

/** Map a raw `namespaces` row (snake_case) to its row type. */
export function toNamespace(n: Rec): NamespaceRow {
  return {
    id: n.id as number, name: n.name as string, path: n.path as string, kind: n.kind as 'user' | 'group', ownerId: n.owner_id as number | null,
    description: n.description as string, visibilityLevel: n.visibility_level as number, shareWithGroupLock: !!n.share_with_group_lock,
    requestAccessEnabled: !!n.request_access_enabled, lfsEnabled: !!n.lfs_enabled, createdAt: n.created_at as string, updatedAt: n.updated_at as string,
  };
}

/** Map a raw `users` row (snake_case) to its row type. */
export function toUser(u: Rec): UserRow {
  return {
    id: u.id as number, username: u.username as string, email: u.email as string, name: u.name as string, passwordHash: u.password_hash as string,
    privateTokenSalt: u.private_token_salt as string, privateTokenHash: u.private_token_hash as string, state: u.state as string,
    isAdmin: !!u.is_admin, bio: u.bio as string | null, location: u.location as string | null, skype: u.skype as string, linkedin: u.linkedin as string,
    twitter: u.twitter as string, websiteUrl: u.website_url as string, organization: u.organization as string | null, projectsLimit: u.projects_limit as number,
    canCreateGroup: !!u.can_create_group, external: !!u.external, confirmedAt: u.confirmed_at as string | null, lastSignInAt: u.last_sign_in_at as string | null,
    currentSignInAt: u.current_sign_in_at as string | null, createdAt: u.created_at as string, updatedAt: u.updated_at as string,
  };
}

/** Map a raw `projects` row (snake_case) to its row type. */
export function toProject(p: Record<string, unknown>): ProjectRow {
  return {
    id: p.id as number, name: p.name as string, path: p.path as string, namespaceId: p.namespace_id as number,
    description: p.description as string | null, defaultBranch: p.default_branch as string, visibilityLevel: p.visibility_level as number,
    issuesEnabled: !!p.issues_enabled, mergeRequestsEnabled: !!p.merge_requests_enabled, buildsEnabled: !!p.builds_enabled,
    wikiEnabled: !!p.wiki_enabled, snippetsEnabled: !!p.snippets_enabled, containerRegistryEnabled: !!p.container_registry_enabled,
    sharedRunnersEnabled: !!p.shared_runners_enabled, publicBuilds: !!p.public_builds, lfsEnabled: !!p.lfs_enabled,
    requestAccessEnabled: !!p.request_access_enabled, onlyAllowMergeIfBuildSucceeds: !!p.only_allow_merge_if_build_succeeds,
    archived: !!p.archived, importUrl: p.import_url as string | null, tagList: p.tag_list as string, creatorId: p.creator_id as number | null,
    forkedFromId: p.forked_from_id as number | null, runnersTokenSalt: p.runners_token_salt as string, runnersTokenHash: p.runners_token_hash as string,
    lastActivityAt: p.last_activity_at as string, createdAt: p.created_at as string, updatedAt: p.updated_at as string,
  };
}

/** Map a raw `runners` row (snake_case) to its row type. */
export function toRunner(raw: Record<string, unknown>): RunnerRow {
  return {
    id: raw.id as number, tokenHash: raw.token_hash as string, description: raw.description as string | null, name: raw.name as string | null,
    version: raw.version as string | null, revision: raw.revision as string | null, platform: raw.platform as string | null,
    architecture: raw.architecture as string | null, active: !!raw.active, isShared: !!raw.is_shared, locked: !!raw.locked,
    runUntagged: !!raw.run_untagged, tagList: raw.tag_list as string, contactedAt: raw.contacted_at as string | null,
    createdAt: raw.created_at as string, updatedAt: raw.updated_at as string,
  };
}

/** Map a raw `issues` row (snake_case) to its row type. */
export function toIssue(i: Rec): IssueRow {
  return {
    id: i.id as number, projectId: i.project_id as number, iid: i.iid as number, title: i.title as string, description: i.description as string | null,
    state: i.state as IssueRow['state'], confidential: !!i.confidential, authorId: i.author_id as number | null, assigneeId: i.assignee_id as number | null,
    milestoneId: i.milestone_id as number | null, dueDate: i.due_date as string | null, movedToId: i.moved_to_id as number | null,
    updatedById: i.updated_by_id as number | null, closedAt: i.closed_at as string | null, deletedAt: i.deleted_at as string | null,
    createdAt: i.created_at as string, updatedAt: i.updated_at as string,
  };
}

/** Map a raw `milestones` row (snake_case) to its row type. */
export function toMilestone(m: Rec): MilestoneRow {
  return {
    id: m.id as number, projectId: m.project_id as number, iid: m.iid as number, title: m.title as string, description: m.description as string,
    state: m.state as MilestoneRow['state'], dueDate: m.due_date as string | null, startDate: m.start_date as string | null,
    createdAt: m.created_at as string, updatedAt: m.updated_at as string,
  };
}

/** Map a raw `application_settings` row (snake_case) to its row type. */
export function toSettings(s: Rec): ApplicationSettingsRow {
  return {
    id: s.id as number, defaultProjectsLimit: s.default_projects_limit as number, signupEnabled: !!s.signup_enabled,
    signinEnabled: !!s.signin_enabled, gravatarEnabled: !!s.gravatar_enabled, signInText: s.sign_in_text as string | null,
    afterSignUpText: s.after_sign_up_text as string | null, homePageUrl: s.home_page_url as string | null,
    defaultBranchProtection: s.default_branch_protection as number, restrictedVisibilityLevels: s.restricted_visibility_levels as string | null,
    maxAttachmentSize: s.max_attachment_size as number, maxArtifactsSize: s.max_artifacts_size as number, sessionExpireDelay: s.session_expire_delay as number,
    defaultProjectVisibility: s.default_project_visibility as number, defaultSnippetVisibility: s.default_snippet_visibility as number,
    defaultGroupVisibility: s.default_group_visibility as number, domainWhitelist: s.domain_whitelist as string | null,
    domainBlacklistEnabled: !!s.domain_blacklist_enabled, domainBlacklist: s.domain_blacklist as string | null,
    userOauthApplications: !!s.user_oauth_applications, afterSignOutPath: s.after_sign_out_path as string | null,
    containerRegistryTokenExpireDelay: s.container_registry_token_expire_delay as number, repositoryStorage: s.repository_storage as string,
    enabledGitAccessProtocol: s.enabled_git_access_protocol as string | null, runnersRegistrationToken: s.runners_registration_token as string,
    createdAt: s.created_at as string, updatedAt: s.updated_at as string,
  };
}

/** Map a raw `personal_access_tokens` row (snake_case) to its row type. */
export function toPersonalAccessToken(t: Rec): PersonalAccessTokenRow {
  return {
    id: t.id as number, userId: t.user_id as number, name: t.name as string, tokenHash: t.token_hash as string,
    expiresAt: t.expires_at as string | null, revoked: !!t.revoked, createdAt: t.created_at as string,
  };
}

/**
 * Map a raw `members` row (snake_case) to its row type; `prefix` for a row joined with others whose member columns
 * were selected as `m.id AS <prefix>id, ...` (see MEMBER_COLUMNS in services/projects/members.ts).
 */
export function toMember(m: Rec, prefix = ''): MemberRow {
  const v = (k: string) => m[prefix + k];
  return {
    id: v('id') as number, sourceType: v('source_type') as MemberRow['sourceType'], sourceId: v('source_id') as number, userId: v('user_id') as number,
    accessLevel: v('access_level') as number, expiresAt: v('expires_at') as string | null, createdById: v('created_by_id') as number | null,
    createdAt: v('created_at') as string, updatedAt: v('updated_at') as string,
  };
}

/** Map a raw `keys` row (snake_case) to its row type (SSH keys of users and deploy keys). */
export function toKey(k: Rec): import('./schema-keys.js').KeyRow {
  return {
    id: k.id as number, type: k.type as 'Key' | 'DeployKey', userId: k.user_id as number | null, title: k.title as string, key: k.key as string,
    keyType: k.key_type as string, fingerprint: k.fingerprint as string, fingerprintSha256: k.fingerprint_sha256 as string, canPush: !!k.can_push,
    lastUsedAt: k.last_used_at as string | null, createdAt: k.created_at as string, updatedAt: k.updated_at as string,
  };
}

/** Map a raw `oauth_applications` row (snake_case) to its row type. */
export function toOauthApplication(a: Rec): import('./schema-oauth.js').OauthApplicationRow {
  return {
    id: a.id as number, name: a.name as string, uid: a.uid as string, secretHash: a.secret_hash as string | null, redirectUri: a.redirect_uri as string,
    scopes: a.scopes as string, ownerId: a.owner_id as number | null, builtin: !!a.builtin, createdAt: a.created_at as string, updatedAt: a.updated_at as string,
  };
}

/** Map a raw `oauth_access_grants` row (snake_case) to its row type. */
export function toOauthAccessGrant(g: Rec): import('./schema-oauth.js').OauthAccessGrantRow {
  return {
    id: g.id as number, resourceOwnerId: g.resource_owner_id as number, applicationId: g.application_id as number, tokenHash: g.token_hash as string,
    expiresIn: g.expires_in as number, redirectUri: g.redirect_uri as string, scopes: g.scopes as string, codeChallenge: g.code_challenge as string | null,
    codeChallengeMethod: g.code_challenge_method as string | null, createdAt: g.created_at as string, revokedAt: g.revoked_at as string | null,
  };
}

/** Map a raw `oauth_access_tokens` row (snake_case) to its row type. */
export function toOauthAccessToken(t: Rec): import('./schema-oauth.js').OauthAccessTokenRow {
  return {
    id: t.id as number, resourceOwnerId: t.resource_owner_id as number, applicationId: t.application_id as number | null, grantId: t.grant_id as number | null,
    tokenHash: t.token_hash as string, refreshTokenHash: t.refresh_token_hash as string | null, expiresIn: t.expires_in as number,
    scopes: t.scopes as string, createdAt: t.created_at as string, revokedAt: t.revoked_at as string | null,
  };
}

/** Map a raw `project_group_links` row (snake_case) to its row type. */
export function toProjectGroupLink(l: Rec): import('./schema.js').ProjectGroupLinkRow {
  return {
    id: l.id as number, projectId: l.project_id as number, groupId: l.group_id as number, groupAccess: l.group_access as number,
    expiresAt: l.expires_at as string | null, createdAt: l.created_at as string, updatedAt: l.updated_at as string,
  };
}

/** Map a raw `project_hooks` row (snake_case) to its row type. */
export function toProjectHook(h: Rec): import('./schema.js').ProjectHookRow {
  return {
    id: h.id as number, projectId: h.project_id as number, url: h.url as string, token: h.token as string | null,
    ...toProjectEventFlags(h),
    wikiPageEvents: !!h.wiki_page_events, enableSslVerification: !!h.enable_ssl_verification, createdAt: h.created_at as string,
  };
}

/** Map a raw `events` row (snake_case) to its row type. */
export function toEvent(e: Rec): import('./schema.js').EventRow {
  return {
    id: e.id as number, projectId: e.project_id as number | null, authorId: e.author_id as number | null, action: e.action as string,
    targetId: e.target_id as number | null, targetType: e.target_type as string | null, targetTitle: e.target_title as string | null,
    title: e.title as string | null, data: e.data as string | null, noteId: e.note_id as number | null, createdAt: e.created_at as string,
  };
}

/** Map a raw `labels` row (snake_case) to its row type. */
export function toLabel(l: Rec): LabelRow {
  return {
    id: l.id as number, projectId: l.project_id as number, title: l.title as string, color: l.color as string,
    description: l.description as string | null, template: !!l.template, createdAt: l.created_at as string, updatedAt: l.updated_at as string,
  };
}

/** Map a raw `notes` row (snake_case) to its row type. */
export function toNote(n: Rec): NoteRow {
  return {
    id: n.id as number, projectId: n.project_id as number, noteableType: n.noteable_type as NoteRow['noteableType'], noteableId: n.noteable_id as number,
    note: n.note as string, authorId: n.author_id as number | null, system: !!n.system, attachment: n.attachment as string | null,
    updatedById: n.updated_by_id as number | null, createdAt: n.created_at as string, updatedAt: n.updated_at as string,
  };
}

/** Map a raw `award_emoji` row (snake_case) to its row type. */
export function toAwardEmoji(a: Rec): AwardEmojiRow {
  return {
    id: a.id as number, name: a.name as string, userId: a.user_id as number, awardableType: a.awardable_type as AwardEmojiRow['awardableType'],
    awardableId: a.awardable_id as number, createdAt: a.created_at as string, updatedAt: a.updated_at as string,
  };
}

/** Map a raw `todos` row (snake_case) to its row type. */
export function toTodo(t: Rec): TodoRow {
  return {
    id: t.id as number, userId: t.user_id as number, projectId: t.project_id as number, authorId: t.author_id as number | null,
    targetType: t.target_type as TodoRow['targetType'], targetId: t.target_id as number, action: t.action as TodoRow['action'],
    state: t.state as TodoRow['state'], noteId: t.note_id as number | null, commitId: t.commit_id as string | null,
    createdAt: t.created_at as string, updatedAt: t.updated_at as string,
  };
}

/** Map a raw `protected_branches` row (snake_case) to its row type. */
export function toProtectedBranch(r: Rec): ProtectedBranchRow {
  return {
    id: r.id as number, projectId: r.project_id as number, name: r.name as string, developersCanPush: !!r.developers_can_push,
    developersCanMerge: !!r.developers_can_merge, createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** Map a raw `releases` row (snake_case) to its row type. */
export function toRelease(r: Rec): ReleaseRow {
  return {
    id: r.id as number, projectId: r.project_id as number, tagName: r.tag_name as string, description: r.description as string,
    createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** Map a raw `commit_notes` row (snake_case) to its row type. */
export function toCommitNote(r: Rec): CommitNoteRow {
  return {
    id: r.id as number, projectId: r.project_id as number, commitSha: r.commit_sha as string, note: r.note as string, path: r.path as string | null,
    line: r.line as number | null, lineType: r.line_type as CommitNoteRow['lineType'], authorId: r.author_id as number | null,
    createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** Map a raw `pipelines` row (snake_case) to its row type. */
export function toPipeline(p: Rec): import('./schema-ci.js').PipelineRow {
  return {
    id: p.id as number, projectId: p.project_id as number, ref: p.ref as string | null, sha: p.sha as string, beforeSha: p.before_sha as string | null,
    tag: !!p.tag, yamlErrors: p.yaml_errors as string | null, status: p.status as string, userId: p.user_id as number | null,
    duration: p.duration as number | null, startedAt: p.started_at as string | null, finishedAt: p.finished_at as string | null,
    committedAt: p.committed_at as string | null, commitMessage: p.commit_message as string | null, commitAuthorName: p.commit_author_name as string | null,
    commitAuthorEmail: p.commit_author_email as string | null, createdAt: p.created_at as string, updatedAt: p.updated_at as string,
  };
}

/** Map a raw `commit_statuses` row (snake_case) to its row type. */
export function toCommitStatus(c: Rec): import('./schema-ci.js').CommitStatusRow {
  return {
    id: c.id as number, type: c.type as 'build' | 'generic', projectId: c.project_id as number, pipelineId: c.pipeline_id as number,
    name: c.name as string, stage: c.stage as string | null, stageIdx: c.stage_idx as number, ref: c.ref as string | null, tag: !!c.tag,
    status: c.status as string, description: c.description as string | null, targetUrl: c.target_url as string | null,
    allowFailure: !!c.allow_failure, when: c.when as string, userId: c.user_id as number | null, runnerId: c.runner_id as number | null,
    commands: c.commands as string | null, options: c.options as string | null, yamlVariables: c.yaml_variables as string | null,
    tagList: c.tag_list as string, environment: c.environment as string | null, coverage: c.coverage as number | null,
    coverageRegex: c.coverage_regex as string | null, tokenHash: c.token_hash as string | null, tokenSealed: (c.token_sealed ?? null) as string | null,
    traceSize: Number(c.trace_size ?? 0), artifactsFile: c.artifacts_file as string | null,
    artifactsSize: c.artifacts_size === null || c.artifacts_size === undefined ? null : Number(c.artifacts_size),
    artifactsExpireAt: c.artifacts_expire_at as string | null, erasedAt: c.erased_at as string | null, erasedById: c.erased_by_id as number | null,
    queuedAt: c.queued_at as string | null, startedAt: c.started_at as string | null, finishedAt: c.finished_at as string | null,
    createdAt: c.created_at as string, updatedAt: c.updated_at as string,
  };
}

/** The snake_case column of each camelCase field of a commit_statuses row (for SET lists written from a partial row). */
export const COMMIT_STATUS_COLUMNS: Record<string, string> = {
  type: 'type', projectId: 'project_id', pipelineId: 'pipeline_id', name: 'name', stage: 'stage', stageIdx: 'stage_idx', ref: 'ref', tag: 'tag',
  status: 'status', description: 'description', targetUrl: 'target_url', allowFailure: 'allow_failure', when: '"when"', userId: 'user_id',
  runnerId: 'runner_id', commands: 'commands', options: 'options', yamlVariables: 'yaml_variables', tagList: 'tag_list', environment: 'environment',
  coverage: 'coverage', coverageRegex: 'coverage_regex', tokenHash: 'token_hash', tokenSealed: 'token_sealed', traceSize: 'trace_size',
  artifactsFile: 'artifacts_file', artifactsSize: 'artifacts_size', artifactsExpireAt: 'artifacts_expire_at', erasedAt: 'erased_at',
  erasedById: 'erased_by_id', queuedAt: 'queued_at', startedAt: 'started_at', finishedAt: 'finished_at', createdAt: 'created_at', updatedAt: 'updated_at',
};

/** The snake_case column of each camelCase field of a pipelines row. */
export const PIPELINE_COLUMNS: Record<string, string> = {
  projectId: 'project_id', ref: 'ref', sha: 'sha', beforeSha: 'before_sha', tag: 'tag', yamlErrors: 'yaml_errors', status: 'status', userId: 'user_id',
  duration: 'duration', startedAt: 'started_at', finishedAt: 'finished_at', committedAt: 'committed_at', commitMessage: 'commit_message',
  commitAuthorName: 'commit_author_name', commitAuthorEmail: 'commit_author_email', createdAt: 'created_at', updatedAt: 'updated_at',
};

/** A `snippets` row (project snippets, migration 0037). */
export interface SnippetRow {
  id: number;
  projectId: number;
  authorId: number | null;
  title: string;
  fileName: string;
  content: string;
  visibilityLevel: number;
  createdAt: string;
  updatedAt: string;
}

/** Map a raw `snippets` row (snake_case) to a SnippetRow. */
export function toSnippet(r: Record<string, unknown>): SnippetRow {
  return {
    id: r.id as number, projectId: r.project_id as number, authorId: r.author_id as number | null, title: r.title as string,
    fileName: r.file_name as string, content: r.content as string, visibilityLevel: Number(r.visibility_level), createdAt: r.created_at as string,
    updatedAt: r.updated_at as string,
  };
}

/** A `ci_triggers` row (migration 0035): a project's trigger, its token sealed; `lastUsed` when selected with it. */
export interface TriggerRow {
  id: number;
  projectId: number;
  tokenSealed: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
  lastUsed: string | null;
}

/** Map a raw `ci_triggers` row (with an optional `last_used` column) to TriggerRow. */
export function toTrigger(t: Rec): TriggerRow {
  return {
    id: t.id as number, projectId: t.project_id as number, tokenSealed: t.token_sealed as string, createdAt: t.created_at as string,
    updatedAt: t.updated_at as string, deletedAt: (t.deleted_at ?? null) as string | null, lastUsed: (t.last_used ?? null) as string | null,
  };
}

/** A `ci_trigger_requests` row (migration 0035): one use of a trigger, its pipeline and its variables (sealed JSON). */
export interface TriggerRequestRow {
  id: number;
  triggerId: number;
  pipelineId: number;
  variablesSealed: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Map a raw `ci_trigger_requests` row to TriggerRequestRow. */
export function toTriggerRequest(r: Rec): TriggerRequestRow {
  return {
    id: r.id as number, triggerId: r.trigger_id as number, pipelineId: r.pipeline_id as number,
    variablesSealed: (r.variables ?? null) as string | null, createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** An environments row (0036). */
export interface EnvironmentRow {
  id: number;
  projectId: number;
  name: string;
  externalUrl: string | null;
  environmentType: string | null;
  state: 'available' | 'stopped';
  createdAt: string;
  updatedAt: string;
}

/** An environments row from the database. */
export function toEnvironment(r: Rec): EnvironmentRow {
  return {
    id: r.id as number, projectId: r.project_id as number, name: r.name as string, externalUrl: (r.external_url ?? null) as string | null,
    environmentType: (r.environment_type ?? null) as string | null, state: r.state as EnvironmentRow['state'],
    createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** A deployments row (0036). */
export interface DeploymentRow {
  id: number;
  iid: number;
  projectId: number;
  environmentId: number;
  ref: string;
  tag: boolean;
  sha: string;
  userId: number | null;
  deployableId: number | null;
  onStop: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A deployments row from the database. */
export function toDeployment(r: Rec): DeploymentRow {
  return {
    id: r.id as number, iid: r.iid as number, projectId: r.project_id as number, environmentId: r.environment_id as number, ref: r.ref as string,
    tag: !!r.tag, sha: r.sha as string, userId: (r.user_id ?? null) as number | null, deployableId: (r.deployable_id ?? null) as number | null,
    onStop: (r.on_stop ?? null) as string | null, createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** A `project_services` row (0038): a project's settings of one service type. */
export interface ProjectServiceRow extends ProjectEventFlags {
  id: number;
  projectId: number;
  type: string;
  active: boolean;
  /** The settings as stored (JSON text). */
  properties: string;
  createdAt: string;
  updatedAt: string;
}

/** Map a raw `project_services` row to its shape. */
export function toProjectService(r: Rec): ProjectServiceRow {
  return {
    id: r.id as number, projectId: r.project_id as number, type: r.type as string, active: !!r.active, properties: r.properties as string,
    ...toProjectEventFlags(r),
    createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** A `system_hooks` row (0038). */
export interface SystemHookRow {
  id: number;
  url: string;
  token: string | null;
  pushEvents: boolean;
  tagPushEvents: boolean;
  enableSslVerification: boolean;
  createdAt: string;
}

/** Map a raw `system_hooks` row to its shape. */
export function toSystemHook(r: Rec): SystemHookRow {
  return {
    id: r.id as number, url: r.url as string, token: (r.token ?? null) as string | null, pushEvents: !!r.push_events, tagPushEvents: !!r.tag_push_events,
    enableSslVerification: !!r.enable_ssl_verification, createdAt: r.created_at as string,
  };
}

/** An access request (GitLab 8.13 Member with requested_at): who asked to join which project or group, and when. */
export interface AccessRequestRow {
  id: number;
  sourceType: 'Project' | 'Namespace';
  sourceId: number;
  userId: number;
  requestedAt: string;
}

/** An access_requests row from the database (`prefix`: its columns' prefix in a join). */
export function toAccessRequest(r: Rec, prefix = ''): AccessRequestRow {
  return {
    id: r[`${prefix}id`] as number, sourceType: r[`${prefix}source_type`] as 'Project' | 'Namespace', sourceId: r[`${prefix}source_id`] as number,
    userId: r[`${prefix}user_id`] as number, requestedAt: r[`${prefix}requested_at`] as string,
  };
}

/** A board list (GitLab 8.13 List): backlog and done have no label nor position; label lists have both. */
export interface BoardListRow {
  id: number;
  boardId: number;
  labelId: number | null;
  listType: 'backlog' | 'label' | 'done';
  position: number | null;
}

/** A board_lists row from the database. */
export function toBoardList(r: Rec): BoardListRow {
  return {
    id: r.id as number, boardId: r.board_id as number, labelId: (r.label_id ?? null) as number | null,
    listType: r.list_type as BoardListRow['listType'], position: (r.position ?? null) as number | null,
  };
}

/** Map a raw `merge_requests` row (snake_case) to its row type. */
export function toMergeRequest(r: Record<string, unknown>): MergeRequestRow {
  return {
    id: r.id as number, targetProjectId: r.target_project_id as number, iid: r.iid as number, sourceProjectId: r.source_project_id as number | null,
    sourceBranch: r.source_branch as string, targetBranch: r.target_branch as string, title: r.title as string,
    description: r.description as string | null, state: r.state as MergeRequestRow['state'], mergeStatus: r.merge_status as MergeRequestRow['mergeStatus'],
    authorId: r.author_id as number | null, assigneeId: r.assignee_id as number | null, milestoneId: r.milestone_id as number | null,
    mergeWhenBuildSucceeds: !!r.merge_when_build_succeeds, mergeUserId: r.merge_user_id as number | null, mergeParams: r.merge_params as string | null,
    mergeCommitSha: r.merge_commit_sha as string | null, mergeError: r.merge_error as string | null,
    shouldRemoveSourceBranch: !!r.should_remove_source_branch, forceRemoveSourceBranch: !!r.force_remove_source_branch,
    updatedById: r.updated_by_id as number | null, mergedAt: r.merged_at as string | null, closedAt: r.closed_at as string | null,
    deletedAt: r.deleted_at as string | null, createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

/** Map a raw `merge_request_diffs` row to its row type. */
export function toMergeRequestDiff(r: Record<string, unknown>): MergeRequestDiffRow {
  return {
    id: r.id as number, mergeRequestId: r.merge_request_id as number, state: r.state as MergeRequestDiffRow['state'],
    baseCommitSha: r.base_commit_sha as string | null, headCommitSha: r.head_commit_sha as string | null,
    startCommitSha: r.start_commit_sha as string | null, commits: r.commits as string, commitsCount: r.commits_count as number,
    realSize: r.real_size as string | null, createdAt: r.created_at as string,
  };
}

/** The `*_events` columns a project hook and a service share. */
export function toProjectEventFlags(r: Rec): ProjectEventFlags {
  return {
    pushEvents: !!r.push_events, issuesEvents: !!r.issues_events, mergeRequestsEvents: !!r.merge_requests_events, tagPushEvents: !!r.tag_push_events,
    noteEvents: !!r.note_events, buildEvents: !!r.build_events, pipelineEvents: !!r.pipeline_events,
  };
}
