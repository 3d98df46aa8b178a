/**
 * The rules of the authorization matrix, written once as data from the sources and never from the code under test:
 * GitLab 8.12's abilities (../shared/docs/reference/api-v3-reference.md section 4: 4.2 project abilities by level,
 * 4.3 groups, 4.4 visibility; 2.x per-route notes), the spec's authentication section, and the rows of
 * docs/decisions.md where Gantry chose differently (cited where used). `expectedFor` turns a rule, a caller and a
 * visibility into the status class the cell must answer.
 */
import type { Caller } from './world.js';
import { LEVEL } from './world.js';

const GUEST = 10;
const REPORTER = 20;
const DEVELOPER = 30;
const MASTER = 40;
const OWNER = 50;

/** How a route is authorized. */
export type Rule =
  /**
   * A project ability: `level` and up; `visible`: also any signed-in user who sees the project by its visibility.
   * Visible callers without it get `denied` (403); `partly`: those from `partly.level` up get `partly.status` instead.
   */
  | { kind: 'project'; level: number; visible?: boolean; denied?: number; partly?: { level: number; status: number } }
  /** A group ability (4.3): `level` and up; `visible`: also anyone who sees the group by its visibility. */
  | { kind: 'group'; level: number; visible?: boolean }
  /** Any signed-in, active user. */
  | { kind: 'user' }
  /** Instance administrators only (403 for other users). */
  | { kind: 'admin' }
  /** A page only admins (or a scraper's own token) read; it does not exist for anyone else: 404, anonymous too. */
  | { kind: 'admin_page' }
  /** The account's own user or an admin (the cells' account is the owner's): CONTRACT.md step 4. */
  | { kind: 'self' }
  /** Objects only their owner (and, with `admin`, admins) reach: others 404, as 8.x /user/keys/:id. */
  | { kind: 'own'; admin?: boolean }
  /**
   * Routes with credentials of their own (OAuth clients, bearer tokens, a browser session): an API token is none of
   * them, so every caller gets `status` (and a refused write changes nothing).
   */
  | { kind: 'foreign'; status: number }
  /** No credentials needed (POST /session, /-/health): every caller gets the row's answer. */
  | { kind: 'public' }
  /** A specific runner of the project (8.12 runners.rb): admins and masters of its project; other users 403. */
  | { kind: 'runner'; level: number }
  /** The runner API (/ci/api/v1): runner, registration or build tokens only; a user's token is never one (403). */
  | { kind: 'ci'; anonymous?: number }
  /** Git over HTTP (decisions.md "git over HTTP refusals"): anonymous may read public code; 401 asks for credentials. */
  | { kind: 'git'; level: number; visible?: boolean; partly?: { level: number; status: number } }
  /** A web page of a project (uploads): anyone on public projects, else who may read the project; others 404. */
  | { kind: 'web'; level: number; visible?: boolean }
  /**
   * Asking to join a project or group (8.13 :request_access, with request_access_enabled on, as the world's are): a
   * signed-in user who sees it and is no member; members 403; admins 403 on projects (they count as owners), allowed
   * on public and internal groups they are not a member of (8.13 GroupPolicy).
   */
  | { kind: 'requester'; admin: boolean }
  /**
   * A web page (issue 24): its credential is the browser session, never an API token, so every caller of the matrix
   * (tokens) is a browser without one: what 8.13's anonymous_rules let anyone read of a public project answers 200
   * (`code`: its code, as git over HTTP's anonymous reads, and its issues, merge requests, pipelines, milestones and
   * labels; builds only when public, which the world's are not), anything else sends the browser to /users/sign_in
   * (302), existing or not. Pages with a session: test/web/pages.test.ts, test/web/repository-pages.test.ts.
   */
  | { kind: 'page'; code?: boolean };

/** The abilities of the reference, by name. */
export const ABILITIES = {
  // 4.2 Guest (10) and the public/internal "guest reads" of 4.4
  read_project: { kind: 'project', level: GUEST, visible: true },
  read_issue: { kind: 'project', level: GUEST, visible: true },
  read_label: { kind: 'project', level: GUEST, visible: true },
  read_milestone: { kind: 'project', level: GUEST, visible: true },
  read_project_member: { kind: 'project', level: GUEST, visible: true },
  read_merge_request: { kind: 'project', level: GUEST, visible: true },
  read_note: { kind: 'project', level: GUEST, visible: true },
  create_issue: { kind: 'project', level: GUEST, visible: true },
  create_note: { kind: 'project', level: GUEST, visible: true },
  upload_file: { kind: 'project', level: GUEST, visible: true },
  // 4.2 Reporter (20); 4.4: non-members of visible projects also get download_code, fork, read_pipeline, read_commit_status
  download_code: { kind: 'project', level: REPORTER, visible: true },
  fork_project: { kind: 'project', level: REPORTER, visible: true },
  read_commit_status: { kind: 'project', level: REPORTER, visible: true },
  read_pipeline: { kind: 'project', level: REPORTER, visible: true },
  /** read_build for non-members only with public_builds, which the world's projects turn off. */
  read_build: { kind: 'project', level: REPORTER },
  update_issue: { kind: 'project', level: REPORTER },
  /**
   * Issue move (8.x Issue#can_move?): admin_issue on the issue's project and on the target; the API turns the
   * service's refusal into 400 with its message (reference 2.x "Issue move error"; decisions.md issue move row).
   */
  move_issue: { kind: 'project', level: REPORTER, denied: 400 },
  admin_issue: { kind: 'project', level: REPORTER },
  admin_label: { kind: 'project', level: REPORTER },
  // 4.2 Developer (30)
  create_merge_request: { kind: 'project', level: DEVELOPER },
  update_merge_request: { kind: 'project', level: DEVELOPER },
  push_code: { kind: 'project', level: DEVELOPER },
  create_commit_status: { kind: 'project', level: DEVELOPER },
  update_build: { kind: 'project', level: DEVELOPER },
  update_pipeline: { kind: 'project', level: DEVELOPER },
  /** Merging into an unprotected branch: anyone who may push to it; others 401 (spec "Errors"; decisions.md merge row). */
  merge_unprotected: { kind: 'project', level: DEVELOPER, denied: 401 },
  /**
   * Cancel merge-when-build-succeeds: who may merge into the target (master, protected by default_branch_protection:
   * masters), or the author; others 401 (decisions.md "cancel merge-when-build-succeeds codes").
   */
  cancel_merge: { kind: 'project', level: MASTER, denied: 401 },
  // 4.2 Master (40)
  /**
   * A file written to a protected branch: push_code first (403 below developer), then the commit service refuses
   * developers with 400 "You are not allowed to push into this branch" (8.x files.rb render_api_error! 400; spec:
   * "Repository file create, update or delete failures return 400").
   */
  push_code_to_protected_branches: { kind: 'project', level: MASTER, partly: { level: DEVELOPER, status: 400 } },
  admin_project: { kind: 'project', level: MASTER },
  admin_project_member: { kind: 'project', level: MASTER },
  /**
   * Sharing with a group the caller cannot see: 8.12 saved the link without looking (so a private group's id could
   * be probed); decisions.md "project share with a group the caller cannot see": 404 `Group Not Found` for masters
   * and owners, who pass admin_project; admins see every group.
   */
  share_with_hidden_group: { kind: 'project', level: 1000, partly: { level: MASTER, status: 404 } },
  admin_milestone: { kind: 'project', level: MASTER },
  admin_note: { kind: 'project', level: MASTER },
  admin_build: { kind: 'project', level: MASTER },
  /** GitLab 8.13 ProjectPolicy: environments and deployments are read by reporters, created by developers, edited by masters. */
  read_environment: { kind: 'project', level: REPORTER },
  read_deployment: { kind: 'project', level: REPORTER },
  create_environment: { kind: 'project', level: DEVELOPER },
  update_environment: { kind: 'project', level: MASTER },
  // 4.2 Owner (50)
  remove_project: { kind: 'project', level: OWNER },
  archive_project: { kind: 'project', level: OWNER },
  remove_fork_project: { kind: 'project', level: OWNER },
  /** The spec's DELETE rows (explicit, so they win over 8.x's 403): "404 if it cannot be destroyed or is absent". */
  destroy_issue: { kind: 'project', level: OWNER, denied: 404 },
  destroy_merge_request: { kind: 'project', level: OWNER, denied: 404 },
  /** 2.11: only the awarder (root in the world) or an admin removes an award; others 401 `401 Unauthorized`. */
  destroy_award: { kind: 'project', level: 1000, denied: 401 },
  // project snippets (8.13 ProjectPolicy and ProjectSnippetPolicy; the world's snippets have their project's visibility)
  read_project_snippet: { kind: 'project', level: GUEST, visible: true },
  create_project_snippet: { kind: 'project', level: REPORTER },
  /** 8.13 ProjectSnippetPolicy: its author (root in the world) or an admin; masters and owners too are refused (403). */
  update_project_snippet: { kind: 'project', level: 1000 },
  /** create_note on a snippet the caller reads. */
  create_snippet_note: { kind: 'project', level: GUEST, visible: true },
  /** admin_note on a snippet's note (its author, masters and up). */
  admin_snippet_note: { kind: 'project', level: MASTER },
  /** destroy_award on a snippet or its note: the awarder (root) or an admin; others 401. */
  destroy_snippet_award: { kind: 'project', level: 1000, denied: 401 },
  /** GitLab 8.13 ProjectPolicy: boards and lists read by guests and whoever sees the project, lists written by reporters. */
  read_board: { kind: 'project', level: GUEST, visible: true },
  admin_list: { kind: 'project', level: REPORTER },
  /** 8.13 access_requests.rb: request access (see the rule); who reviews is admin_project_member / admin_group_member. */
  request_project_access: { kind: 'requester', admin: false },
  request_group_access: { kind: 'requester', admin: true },
  // 4.3 groups
  read_group: { kind: 'group', level: GUEST, visible: true },
  /** 4.3: read_group also for anyone who can see a project in the group (a public one here): every signed-in user. */
  read_group_via_project: { kind: 'user' },
  admin_group: { kind: 'group', level: OWNER },
  admin_group_member: { kind: 'group', level: OWNER },
  // global
  user: { kind: 'user' },
  admin: { kind: 'admin' },
  /** Issue 12 item 6: GET /-/metrics is not public by default (a --metrics-token scraper or an admin). */
  metrics: { kind: 'admin_page' },
  self: { kind: 'self' },
  own: { kind: 'own' },
  /** CONTRACT.md step 5: an application is its owner's; an admin manages every one. */
  own_or_admin: { kind: 'own', admin: true },
  /**
   * OAuth (RFC 6749 / 7009 / 7662 and Doorkeeper 4.2 as 8.x mounted it): the client, the bearer token or the
   * browser session is the credential, never PRIVATE-TOKEN. Without one: an authorization request with no client
   * is an error page (RFC 6749 4.1.2.1: not redirected), a token request is `invalid_request`/`invalid_client`,
   * token info is 401 `invalid_token`.
   */
  oauth_page: { kind: 'foreign', status: 400 },
  /**
   * A sign-in or consent form posted with none of its fields: 400, the "Unknown application" page. These forms name an
   * application, and it is checked before the CSRF token (decisions.md "CSRF on the OAuth pages"): a link naming no
   * registered application gets the page saying so, as GET /oauth/authorize does; with a registered one, a missing or
   * wrong token is 422 (test/api/oauth-authorize.test.ts), and a consent form whose session ended shows the sign-in page
   * again. Sign-out names no application, so its only check is the token: 422 (oauth_form_csrf). Rails checked the
   * token first for every form; the order here is a decision, not an inconsistency.
   */
  oauth_form: { kind: 'foreign', status: 400 },
  oauth_token: { kind: 'foreign', status: 400 },
  /** RFC 7009 2.2: revoking an unknown token answers 200 (and revokes nothing). */
  oauth_revoke: { kind: 'foreign', status: 200 },
  /** Rails' CSRF refusal (InvalidAuthenticityToken) of a form posted without the session's token: 422. */
  oauth_form_csrf: { kind: 'foreign', status: 422 },
  oauth_bearer: { kind: 'foreign', status: 401 },
  public: { kind: 'public' },
  read_runner: { kind: 'runner', level: MASTER },
  ci: { kind: 'ci' },
  /** runners/register and runners/delete check `required_attributes! [:token]` first: 400 without one. */
  ci_token_required: { kind: 'ci', anonymous: 400 },
  git_read: { kind: 'git', level: REPORTER, visible: true },
  git_push: { kind: 'git', level: DEVELOPER },
  /**
   * A push that creates a protected branch (8.12 GitAccess: push_code_to_protected_branches, masters): developers
   * pass the push check and see their ref refused in git's report (the HTTP answer is 200, the ref is not made).
   */
  git_push_protected: { kind: 'git', level: MASTER, partly: { level: DEVELOPER, status: 200 } },
  web_read_project: { kind: 'web', level: GUEST, visible: true },
  page_code: { kind: 'page', code: true },
  /** a page a public project shows anyone (8.13 anonymous_rules): the same answers as page_code */
  page_public: { kind: 'page', code: true },
  page: { kind: 'page' },
  /** A page's form posted without its CSRF token (sign-in, sign-out): 422, nothing done. */
  page_form: { kind: 'foreign', status: 422 },
} satisfies Record<string, Rule>;
export type Ability = keyof typeof ABILITIES;

/**
 * Abilities a disabled feature removes from everyone, admins included (reference 4.1: issues, merge requests,
 * builds with pipelines; labels and milestones when issues and merge requests are both off; snippets).
 */
export const FEATURE_ABILITIES = new Set<Ability>([
  'read_issue', 'create_issue', 'update_issue', 'admin_issue', 'move_issue', 'destroy_issue',
  'read_merge_request', 'create_merge_request', 'update_merge_request', 'destroy_merge_request',
  'read_build', 'update_build', 'admin_build', 'read_pipeline', 'update_pipeline',
  // 8.13 disabled_features!: builds off removes environments and deployments too
  'read_environment', 'read_deployment', 'create_environment', 'update_environment',
  'read_label', 'admin_label', 'read_milestone', 'admin_milestone',
  // snippets_enabled off (8.13 disabled_features!: project_snippet); their notes and awards hang on what no one reads
  'read_project_snippet', 'create_project_snippet', 'update_project_snippet', 'create_snippet_note', 'admin_snippet_note', 'destroy_snippet_award',
]);

/** Abilities archiving removes from everyone, admins included (reference 4.1). */
export const ARCHIVED_ABILITIES = new Set<Ability>(['push_code', 'push_code_to_protected_branches', 'create_merge_request', 'update_merge_request']);

/** Whether the rule is checked once per project/group visibility (else once). */
export const perVisibility = (r: Rule) => r.kind === 'project' || r.kind === 'group' || r.kind === 'runner' || r.kind === 'git' || r.kind === 'web' || r.kind === 'requester' || r.kind === 'page';

/** Whether a signed-in caller sees a project or group of `vis` at all (4.4). */
export function sees(c: Caller, vis: number): boolean {
  if (c === 'anonymous' || c === 'blocked') return false;
  if (LEVEL[c] > 0) return true;
  return c === 'external' ? vis === 20 : vis >= 10;
}

/** Whether the caller gets the public/internal abilities of a project by its visibility (4.4: members too). */
const byVisibility = (c: Caller, vis: number) => c !== 'anonymous' && c !== 'blocked' && (vis === 20 || (vis === 10 && c !== 'external'));

/**
 * The expected answer of a cell: 'ok' (the row's success statuses) or a status. `confidential`: the subject is a
 * confidential issue, which only reporters and up (and its author or assignee) read: others 404. `also`: callers the
 * subject itself lets in (its author, assignee or awarder), when they see the project.
 */
export function expectedFor(rule: Rule, c: Caller, vis: number, opts: { confidential?: boolean; also?: Caller[] } = {}): 'ok' | number {
  const admin = c === 'admin';
  switch (rule.kind) {
    case 'public':
      return 'ok';
    case 'foreign':
      return rule.status;
    case 'admin_page':
      return admin ? 'ok' : 404;
    case 'ci':
      // a user's private token is no runner credential (admins' included); no token at all: 403, or 400 where required
      return c === 'anonymous' ? rule.anonymous ?? 403 : 403;
    case 'git': {
      if (c === 'anonymous') return rule.visible && vis === 20 ? 'ok' : 401;
      if (c === 'blocked') return 401;
      if (!sees(c, vis)) return 404;
      if (admin || LEVEL[c] >= rule.level || (rule.visible && byVisibility(c, vis))) return 'ok';
      return rule.partly && LEVEL[c] >= rule.partly.level ? rule.partly.status : 403;
    }
    case 'page':
      return rule.code && vis === 20 ? 'ok' : 302;
    case 'web':
      // a page: public projects to anyone; otherwise a caller who may read the project, and 404 for everyone else,
      // anonymous included (decisions.md "project uploads ... the caller may not read")
      if (vis === 20) return 'ok';
      return sees(c, vis) && (admin || LEVEL[c] >= rule.level || (rule.visible && byVisibility(c, vis))) ? 'ok' : 404;
    default:
      break;
  }
  // every other API route needs a signed-in active user (spec "Authentication"; reference 3.2 item 4: blocked = none)
  if (c === 'anonymous' || c === 'blocked') return 401;
  switch (rule.kind) {
    case 'user':
      return 'ok';
    case 'admin':
      return admin ? 'ok' : 403;
    case 'self':
      return admin || c === 'owner' ? 'ok' : 403;
    case 'own':
      return c === 'owner' || (admin && rule.admin) ? 'ok' : 404;
    case 'runner':
      return admin || LEVEL[c] >= rule.level ? 'ok' : 403;
    case 'requester':
      if (!sees(c, vis)) return 404;
      // (8.13 GroupPolicy: only a group visible to non-members takes requests, from admins too)
      if (admin) return rule.admin && vis > 0 ? 'ok' : 403;
      return LEVEL[c] > 0 ? 403 : 'ok';
    case 'group': {
      if (!sees(c, vis)) return 404;
      if (admin || LEVEL[c] >= rule.level || (rule.visible && byVisibility(c, vis))) return 'ok';
      return 403;
    }
    case 'project': {
      if (!sees(c, vis)) return 404;
      // item-level rules (4.2): the author or assignee of an issue or merge request, a note's author, an awarder
      if (opts.also?.includes(c)) return 'ok';
      // what one may not read is not found, whatever one wanted to do with it
      if (opts.confidential && !admin && LEVEL[c] < REPORTER) return 404;
      const allowed = admin || LEVEL[c] >= rule.level || (rule.visible === true && byVisibility(c, vis));
      if (!allowed) return rule.partly && LEVEL[c] >= rule.partly.level ? rule.partly.status : rule.denied ?? 403;
      return 'ok';
    }
  }
}
