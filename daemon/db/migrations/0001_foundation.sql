-- Foundation: users, tokens, namespaces (users and groups), projects, members, stars,
-- group shares, hooks, events, application settings.

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username TEXT NOT NULL COLLATE NOCASE UNIQUE,
  email TEXT NOT NULL COLLATE NOCASE UNIQUE,
  name TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  -- the private token is derived from the server secret and this salt; only its SHA-256 is stored
  private_token_salt TEXT NOT NULL,
  private_token_hash TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL DEFAULT 'active',
  is_admin INTEGER NOT NULL DEFAULT 0,
  bio TEXT,
  location TEXT,
  skype TEXT NOT NULL DEFAULT '',
  linkedin TEXT NOT NULL DEFAULT '',
  twitter TEXT NOT NULL DEFAULT '',
  website_url TEXT NOT NULL DEFAULT '',
  organization TEXT,
  projects_limit INTEGER NOT NULL DEFAULT 10,
  can_create_group INTEGER NOT NULL DEFAULT 1,
  external INTEGER NOT NULL DEFAULT 0,
  confirmed_at TEXT,
  last_sign_in_at TEXT,
  current_sign_in_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE personal_access_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  expires_at TEXT,
  revoked INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX personal_access_tokens_user ON personal_access_tokens(user_id);

CREATE TABLE namespaces (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  path TEXT NOT NULL COLLATE NOCASE UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('user', 'group')),
  owner_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
  description TEXT NOT NULL DEFAULT '',
  visibility_level INTEGER NOT NULL DEFAULT 0,
  share_with_group_lock INTEGER NOT NULL DEFAULT 0,
  request_access_enabled INTEGER NOT NULL DEFAULT 0,
  lfs_enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX namespaces_owner ON namespaces(owner_id);

CREATE TABLE projects (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  path TEXT NOT NULL COLLATE NOCASE,
  namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
  description TEXT,
  default_branch TEXT NOT NULL DEFAULT 'master',
  visibility_level INTEGER NOT NULL DEFAULT 0,
  issues_enabled INTEGER NOT NULL DEFAULT 1,
  merge_requests_enabled INTEGER NOT NULL DEFAULT 1,
  builds_enabled INTEGER NOT NULL DEFAULT 1,
  wiki_enabled INTEGER NOT NULL DEFAULT 1,
  snippets_enabled INTEGER NOT NULL DEFAULT 0,
  container_registry_enabled INTEGER NOT NULL DEFAULT 0,
  shared_runners_enabled INTEGER NOT NULL DEFAULT 1,
  public_builds INTEGER NOT NULL DEFAULT 1,
  lfs_enabled INTEGER NOT NULL DEFAULT 1,
  request_access_enabled INTEGER NOT NULL DEFAULT 0,
  only_allow_merge_if_build_succeeds INTEGER NOT NULL DEFAULT 0,
  archived INTEGER NOT NULL DEFAULT 0,
  import_url TEXT,
  tag_list TEXT NOT NULL DEFAULT '[]',
  creator_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  forked_from_id INTEGER REFERENCES projects(id) ON DELETE SET NULL,
  -- the runners token is derived from the server secret and this salt; only its SHA-256 is stored
  runners_token_salt TEXT NOT NULL,
  runners_token_hash TEXT NOT NULL UNIQUE,
  last_activity_at TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (namespace_id, path)
);
CREATE INDEX projects_namespace ON projects(namespace_id);
CREATE INDEX projects_visibility ON projects(visibility_level);
CREATE INDEX projects_created ON projects(created_at);

CREATE TABLE members (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source_type TEXT NOT NULL CHECK (source_type IN ('Project', 'Namespace')),
  source_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  access_level INTEGER NOT NULL,
  expires_at TEXT,
  created_by_id INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (source_type, source_id, user_id)
);
CREATE INDEX members_user ON members(user_id, source_type);

CREATE TABLE project_group_links (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  group_id INTEGER NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
  group_access INTEGER NOT NULL,
  expires_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, group_id)
);
CREATE INDEX project_group_links_group ON project_group_links(group_id);

CREATE TABLE stars (
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY (user_id, project_id)
);
CREATE INDEX stars_project ON stars(project_id);

CREATE TABLE project_hooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  token TEXT,
  push_events INTEGER NOT NULL DEFAULT 1,
  issues_events INTEGER NOT NULL DEFAULT 0,
  merge_requests_events INTEGER NOT NULL DEFAULT 0,
  tag_push_events INTEGER NOT NULL DEFAULT 0,
  note_events INTEGER NOT NULL DEFAULT 0,
  build_events INTEGER NOT NULL DEFAULT 0,
  pipeline_events INTEGER NOT NULL DEFAULT 0,
  wiki_page_events INTEGER NOT NULL DEFAULT 0,
  enable_ssl_verification INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL
);
CREATE INDEX project_hooks_project ON project_hooks(project_id);

CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
  author_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  action TEXT NOT NULL,
  target_id INTEGER,
  target_type TEXT,
  target_title TEXT,
  title TEXT,
  data TEXT,
  note_id INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX events_project ON events(project_id, id);

CREATE TABLE uploads (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  uploader_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
  secret TEXT NOT NULL,
  filename TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX uploads_project ON uploads(project_id, secret);

CREATE TABLE application_settings (
  id INTEGER PRIMARY KEY,
  default_projects_limit INTEGER NOT NULL DEFAULT 10,
  signup_enabled INTEGER NOT NULL DEFAULT 1,
  signin_enabled INTEGER NOT NULL DEFAULT 1,
  gravatar_enabled INTEGER NOT NULL DEFAULT 1,
  sign_in_text TEXT,
  after_sign_up_text TEXT,
  home_page_url TEXT,
  default_branch_protection INTEGER NOT NULL DEFAULT 2,
  restricted_visibility_levels TEXT,
  max_attachment_size INTEGER NOT NULL DEFAULT 10,
  session_expire_delay INTEGER NOT NULL DEFAULT 10080,
  default_project_visibility INTEGER NOT NULL DEFAULT 0,
  default_snippet_visibility INTEGER NOT NULL DEFAULT 0,
  default_group_visibility INTEGER NOT NULL DEFAULT 0,
  domain_whitelist TEXT,
  domain_blacklist_enabled INTEGER NOT NULL DEFAULT 0,
  domain_blacklist TEXT,
  user_oauth_applications INTEGER NOT NULL DEFAULT 1,
  after_sign_out_path TEXT,
  container_registry_token_expire_delay INTEGER NOT NULL DEFAULT 5,
  repository_storage TEXT NOT NULL DEFAULT 'default',
  enabled_git_access_protocol TEXT,
  runners_registration_token TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
