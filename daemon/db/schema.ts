/** Drizzle table definitions; they mirror the SQL migrations in migrations/ (the migrations are the source of truth). */
import { sqliteTable, integer, text, primaryKey } from 'drizzle-orm/sqlite-core';

const bool = (name: string) => integer(name, { mode: 'boolean' });

export const users = sqliteTable('users', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  username: text('username').notNull(),
  email: text('email').notNull(),
  name: text('name').notNull(),
  passwordHash: text('password_hash').notNull(),
  privateTokenSalt: text('private_token_salt').notNull(),
  privateTokenHash: text('private_token_hash').notNull(),
  state: text('state').notNull().default('active'),
  isAdmin: bool('is_admin').notNull().default(false),
  bio: text('bio'),
  location: text('location'),
  skype: text('skype').notNull().default(''),
  linkedin: text('linkedin').notNull().default(''),
  twitter: text('twitter').notNull().default(''),
  websiteUrl: text('website_url').notNull().default(''),
  organization: text('organization'),
  projectsLimit: integer('projects_limit').notNull().default(10),
  canCreateGroup: bool('can_create_group').notNull().default(true),
  external: bool('external').notNull().default(false),
  confirmedAt: text('confirmed_at'),
  lastSignInAt: text('last_sign_in_at'),
  currentSignInAt: text('current_sign_in_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type UserRow = typeof users.$inferSelect;

export const personalAccessTokens = sqliteTable('personal_access_tokens', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: integer('user_id').notNull(),
  name: text('name').notNull(),
  tokenHash: text('token_hash').notNull(),
  expiresAt: text('expires_at'),
  revoked: bool('revoked').notNull().default(false),
  createdAt: text('created_at').notNull(),
});
export type PersonalAccessTokenRow = typeof personalAccessTokens.$inferSelect;

export const namespaces = sqliteTable('namespaces', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  path: text('path').notNull(),
  kind: text('kind', { enum: ['user', 'group'] }).notNull(),
  ownerId: integer('owner_id'),
  description: text('description').notNull().default(''),
  visibilityLevel: integer('visibility_level').notNull().default(0),
  shareWithGroupLock: bool('share_with_group_lock').notNull().default(false),
  requestAccessEnabled: bool('request_access_enabled').notNull().default(false),
  lfsEnabled: bool('lfs_enabled').notNull().default(true),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type NamespaceRow = typeof namespaces.$inferSelect;

export const projects = sqliteTable('projects', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  path: text('path').notNull(),
  namespaceId: integer('namespace_id').notNull(),
  description: text('description'),
  defaultBranch: text('default_branch').notNull().default('master'),
  visibilityLevel: integer('visibility_level').notNull().default(0),
  issuesEnabled: bool('issues_enabled').notNull().default(true),
  mergeRequestsEnabled: bool('merge_requests_enabled').notNull().default(true),
  buildsEnabled: bool('builds_enabled').notNull().default(true),
  wikiEnabled: bool('wiki_enabled').notNull().default(true),
  snippetsEnabled: bool('snippets_enabled').notNull().default(false),
  containerRegistryEnabled: bool('container_registry_enabled').notNull().default(false),
  sharedRunnersEnabled: bool('shared_runners_enabled').notNull().default(true),
  publicBuilds: bool('public_builds').notNull().default(true),
  lfsEnabled: bool('lfs_enabled').notNull().default(true),
  requestAccessEnabled: bool('request_access_enabled').notNull().default(false),
  onlyAllowMergeIfBuildSucceeds: bool('only_allow_merge_if_build_succeeds').notNull().default(false),
  archived: bool('archived').notNull().default(false),
  importUrl: text('import_url'),
  tagList: text('tag_list').notNull().default('[]'),
  creatorId: integer('creator_id'),
  forkedFromId: integer('forked_from_id'),
  runnersTokenSalt: text('runners_token_salt').notNull(),
  runnersTokenHash: text('runners_token_hash').notNull(),
  lastActivityAt: text('last_activity_at').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type ProjectRow = typeof projects.$inferSelect;

export const members = sqliteTable('members', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  sourceType: text('source_type', { enum: ['Project', 'Namespace'] }).notNull(),
  sourceId: integer('source_id').notNull(),
  userId: integer('user_id').notNull(),
  accessLevel: integer('access_level').notNull(),
  expiresAt: text('expires_at'),
  createdById: integer('created_by_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type MemberRow = typeof members.$inferSelect;

export const projectGroupLinks = sqliteTable('project_group_links', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  groupId: integer('group_id').notNull(),
  groupAccess: integer('group_access').notNull(),
  expiresAt: text('expires_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type ProjectGroupLinkRow = typeof projectGroupLinks.$inferSelect;

export const stars = sqliteTable(
  'stars',
  {
    userId: integer('user_id').notNull(),
    projectId: integer('project_id').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.projectId] })],
);

export const projectHooks = sqliteTable('project_hooks', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  url: text('url').notNull(),
  token: text('token'),
  pushEvents: bool('push_events').notNull().default(true),
  issuesEvents: bool('issues_events').notNull().default(false),
  mergeRequestsEvents: bool('merge_requests_events').notNull().default(false),
  tagPushEvents: bool('tag_push_events').notNull().default(false),
  noteEvents: bool('note_events').notNull().default(false),
  buildEvents: bool('build_events').notNull().default(false),
  pipelineEvents: bool('pipeline_events').notNull().default(false),
  wikiPageEvents: bool('wiki_page_events').notNull().default(false),
  enableSslVerification: bool('enable_ssl_verification').notNull().default(true),
  createdAt: text('created_at').notNull(),
});
export type ProjectHookRow = typeof projectHooks.$inferSelect;

export const events = sqliteTable('events', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id'),
  authorId: integer('author_id'),
  action: text('action').notNull(),
  targetId: integer('target_id'),
  targetType: text('target_type'),
  targetTitle: text('target_title'),
  title: text('title'),
  /** JSON text (push data) or null. */
  data: text('data'),
  noteId: integer('note_id'),
  createdAt: text('created_at').notNull(),
});
export type EventRow = typeof events.$inferSelect;

export const uploads = sqliteTable('uploads', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  projectId: integer('project_id').notNull(),
  uploaderId: integer('uploader_id'),
  secret: text('secret').notNull(),
  filename: text('filename').notNull(),
  size: integer('size').notNull(),
  createdAt: text('created_at').notNull(),
});

export const applicationSettings = sqliteTable('application_settings', {
  id: integer('id').primaryKey(),
  defaultProjectsLimit: integer('default_projects_limit').notNull(),
  signupEnabled: bool('signup_enabled').notNull(),
  signinEnabled: bool('signin_enabled').notNull(),
  gravatarEnabled: bool('gravatar_enabled').notNull(),
  signInText: text('sign_in_text'),
  afterSignUpText: text('after_sign_up_text'),
  homePageUrl: text('home_page_url'),
  defaultBranchProtection: integer('default_branch_protection').notNull(),
  /** JSON array text or null. */
  restrictedVisibilityLevels: text('restricted_visibility_levels'),
  maxAttachmentSize: integer('max_attachment_size').notNull(),
  /** MB; runner artifacts must be smaller (8.x's max_artifacts_size: settable with PUT, not shown by GET). */
  maxArtifactsSize: integer('max_artifacts_size').notNull().default(100),
  sessionExpireDelay: integer('session_expire_delay').notNull(),
  defaultProjectVisibility: integer('default_project_visibility').notNull(),
  defaultSnippetVisibility: integer('default_snippet_visibility').notNull(),
  defaultGroupVisibility: integer('default_group_visibility').notNull(),
  /** JSON array text or null. */
  domainWhitelist: text('domain_whitelist'),
  domainBlacklistEnabled: bool('domain_blacklist_enabled').notNull(),
  /** JSON array text or null. */
  domainBlacklist: text('domain_blacklist'),
  userOauthApplications: bool('user_oauth_applications').notNull(),
  afterSignOutPath: text('after_sign_out_path'),
  containerRegistryTokenExpireDelay: integer('container_registry_token_expire_delay').notNull(),
  repositoryStorage: text('repository_storage').notNull(),
  enabledGitAccessProtocol: text('enabled_git_access_protocol'),
  /** Sealed (AES-256-GCM with the server secret), never plain text. */
  runnersRegistrationToken: text('runners_registration_token').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});
export type ApplicationSettingsRow = typeof applicationSettings.$inferSelect;
