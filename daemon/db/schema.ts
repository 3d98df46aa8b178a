/**
 * Row types, one per table: the camelCase shape the converters of db/rows.ts return. They mirror the SQL migrations in
 * migrations/ and migrations-postgres/ (the migrations are the source of truth).
 */

/** A row of `users`. */
export interface UserRow {
  id: number;
  username: string;
  email: string;
  name: string;
  passwordHash: string;
  privateTokenSalt: string;
  privateTokenHash: string;
  state: string;
  isAdmin: boolean;
  bio: string | null;
  location: string | null;
  skype: string;
  linkedin: string;
  twitter: string;
  websiteUrl: string;
  organization: string | null;
  projectsLimit: number;
  canCreateGroup: boolean;
  external: boolean;
  confirmedAt: string | null;
  lastSignInAt: string | null;
  currentSignInAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `personal_access_tokens`. */
export interface PersonalAccessTokenRow {
  id: number;
  userId: number;
  name: string;
  tokenHash: string;
  expiresAt: string | null;
  revoked: boolean;
  createdAt: string;
}

/** A row of `namespaces`. */
export interface NamespaceRow {
  id: number;
  name: string;
  path: string;
  kind: 'user' | 'group';
  ownerId: number | null;
  description: string;
  visibilityLevel: number;
  shareWithGroupLock: boolean;
  requestAccessEnabled: boolean;
  lfsEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A row of `projects`. */
export interface ProjectRow {
  id: number;
  name: string;
  path: string;
  namespaceId: number;
  description: string | null;
  defaultBranch: string;
  visibilityLevel: number;
  issuesEnabled: boolean;
  mergeRequestsEnabled: boolean;
  buildsEnabled: boolean;
  wikiEnabled: boolean;
  snippetsEnabled: boolean;
  containerRegistryEnabled: boolean;
  sharedRunnersEnabled: boolean;
  publicBuilds: boolean;
  lfsEnabled: boolean;
  requestAccessEnabled: boolean;
  onlyAllowMergeIfBuildSucceeds: boolean;
  archived: boolean;
  importUrl: string | null;
  tagList: string;
  creatorId: number | null;
  forkedFromId: number | null;
  runnersTokenSalt: string;
  runnersTokenHash: string;
  lastActivityAt: string;
  createdAt: string;
  updatedAt: string;
}

/** A row of `members`. */
export interface MemberRow {
  id: number;
  sourceType: 'Project' | 'Namespace';
  sourceId: number;
  userId: number;
  accessLevel: number;
  expiresAt: string | null;
  createdById: number | null;
  createdAt: string;
  updatedAt: string;
}

/** A row of `project_group_links`. */
export interface ProjectGroupLinkRow {
  id: number;
  projectId: number;
  groupId: number;
  groupAccess: number;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The events a project's hook or service is sent (their `*_events` columns, alike in `project_hooks` and `project_services`). */
export interface ProjectEventFlags {
  pushEvents: boolean;
  issuesEvents: boolean;
  mergeRequestsEvents: boolean;
  tagPushEvents: boolean;
  noteEvents: boolean;
  buildEvents: boolean;
  pipelineEvents: boolean;
}

/** A row of `project_hooks`. */
export interface ProjectHookRow extends ProjectEventFlags {
  id: number;
  projectId: number;
  url: string;
  token: string | null;
  wikiPageEvents: boolean;
  enableSslVerification: boolean;
  createdAt: string;
}

/** A row of `events`. */
export interface EventRow {
  id: number;
  projectId: number | null;
  authorId: number | null;
  action: string;
  targetId: number | null;
  targetType: string | null;
  targetTitle: string | null;
  title: string | null;
  /** JSON text (push data) or null. */
  data: string | null;
  noteId: number | null;
  createdAt: string;
}

/** A row of `application_settings`. */
export interface ApplicationSettingsRow {
  id: number;
  defaultProjectsLimit: number;
  signupEnabled: boolean;
  signinEnabled: boolean;
  gravatarEnabled: boolean;
  signInText: string | null;
  afterSignUpText: string | null;
  homePageUrl: string | null;
  defaultBranchProtection: number;
  /** JSON array text or null. */
  restrictedVisibilityLevels: string | null;
  maxAttachmentSize: number;
  /** MB; runner artifacts must be smaller (8.x's max_artifacts_size: settable with PUT, not shown by GET). */
  maxArtifactsSize: number;
  sessionExpireDelay: number;
  defaultProjectVisibility: number;
  defaultSnippetVisibility: number;
  defaultGroupVisibility: number;
  /** JSON array text or null. */
  domainWhitelist: string | null;
  domainBlacklistEnabled: boolean;
  /** JSON array text or null. */
  domainBlacklist: string | null;
  userOauthApplications: boolean;
  afterSignOutPath: string | null;
  containerRegistryTokenExpireDelay: number;
  repositoryStorage: string;
  enabledGitAccessProtocol: string | null;
  /** Sealed (AES-256-GCM with the server secret), never plain text. */
  runnersRegistrationToken: string;
  createdAt: string;
  updatedAt: string;
}
