/**
 * The matrix's cells outside the route table: git over SSH, the runner API with its own credentials, and requests
 * that name another object in their body. Data, like policy-table.ts, with the source of each expectation.
 */
import { insertBuild, registerRunner, registrationToken } from '../helpers/runner-fixtures.js';
import type { Ability } from './abilities.js';
import { MULTIPART } from './requests.js';
import { fresh, type Caller, type World } from './world.js';

/**
 * Git over SSH (no route list: the server runs these two commands and refuses every other): each caller's key on
 * each project; anonymous holds a key no account has (no anonymous SSH in 8.x), and a deploy key reads only.
 */
export const SSH_ROWS: { service: 'git-upload-pack' | 'git-receive-pack'; ability: Ability; refPrefix?: string }[] = [
  { service: 'git-upload-pack', ability: 'git_read' },
  { service: 'git-receive-pack', ability: 'git_push' },
  { service: 'git-receive-pack', ability: 'git_push_protected', refPrefix: 'prot-' },
];

/** A runner API request with the credential it wants (what the user callers of the matrix never hold). */
export interface RunnerRequest { url: string; headers?: Record<string, string>; payload?: string | Buffer; contentType?: string }

const json = (body: unknown) => ({ payload: JSON.stringify(body), contentType: 'application/json' });

/** For each runner API route, a request with a valid runner, registration or build token (runner-protocol.md). */
export const RUNNER_REQUESTS: Record<string, (w: World) => Promise<RunnerRequest>> = {
  'POST /ci/api/v1/runners/register': async (w) => ({ url: '/ci/api/v1/runners/register', ...json({ token: await registrationToken(w.s) }) }),
  'DELETE /ci/api/v1/runners/delete': async (w) => ({ url: '/ci/api/v1/runners/delete', ...json({ token: (await registerRunner(w.s)).token }) }),
  'POST /ci/api/v1/builds/register': async (w) => {
    const b = await fresh.claimedBuild(w);
    await insertBuild(w.s, w.projects[20].id, w.projects[20].pipelineId, { name: 'queued' });
    return { url: '/ci/api/v1/builds/register', ...json({ token: b.runnerToken }) };
  },
  'PUT /ci/api/v1/builds/{id}': async (w) => {
    const b = await fresh.claimedBuild(w);
    return { url: `/ci/api/v1/builds/${b.id}`, ...json({ token: b.token, state: 'running', trace: 'x' }) };
  },
  'PATCH /ci/api/v1/builds/{id}/trace.txt': async (w) => {
    const b = await fresh.claimedBuild(w);
    return { url: `/ci/api/v1/builds/${b.id}/trace.txt`, headers: { 'build-token': b.token, 'content-range': '0-0' }, payload: 'x', contentType: 'text/plain' };
  },
  'POST /ci/api/v1/builds/{id}/artifacts': async (w) => {
    const b = await fresh.claimedBuild(w);
    return { url: `/ci/api/v1/builds/${b.id}/artifacts`, headers: { 'build-token': b.token }, ...MULTIPART('file', 'a.zip', 'PK') };
  },
  'GET /ci/api/v1/builds/{id}/artifacts': async (w) => artifactsOfClaimed(w),
  'DELETE /ci/api/v1/builds/{id}/artifacts': async (w) => artifactsOfClaimed(w),
};

/** A claimed build with artifacts uploaded: the artifacts URL and its build token. */
async function artifactsOfClaimed(w: World): Promise<RunnerRequest> {
  const b = await fresh.claimedBuild(w);
  const upload = MULTIPART('file', 'a.zip', 'PK');
  const r = await w.s.app.inject({ method: 'POST', url: `/ci/api/v1/builds/${b.id}/artifacts`, headers: { 'build-token': b.token, 'content-type': upload.contentType }, payload: upload.payload });
  if (r.statusCode !== 201) throw new Error(`artifacts upload: ${r.statusCode} ${r.body}`);
  return { url: `/ci/api/v1/builds/${b.id}/artifacts`, headers: { 'build-token': b.token } };
}

/** A request naming another object in its body (a target project, a namespace, a runner ...), as one caller. */
export interface CrossCase {
  name: string;
  as: Caller;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: (w: World) => string;
  body?: (w: World) => Record<string, unknown>;
  /** The answer; a refusal (status >= 300) must change nothing. */
  status: number;
  /** What the answer must hold besides its status. */
  check?: (body: Record<string, unknown>) => boolean;
  why: string;
}

/** Requests that reach for an object the caller may not use through another one they may. */
export const CROSS_CASES: CrossCase[] = [
  ...(['GET', 'PUT', 'DELETE'] as const).map((method): CrossCase => ({
    name: `${method} another project's snippet through a project the caller may change snippets of`, as: 'admin', method,
    path: (w) => `/projects/${w.projects[20].id}/snippets/${w.projects[0].snippetId}`, body: method === 'PUT' ? () => ({ title: 'x' }) : undefined,
    status: 404, why: "8.13 finds a snippet among the project's own (project.snippets.find)",
  })),
  {
    name: "comment on another project's snippet through a project the caller may read", as: 'admin', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/snippets/${w.projects[0].snippetId}/notes`, body: () => ({ body: 'x' }), status: 404, why: '8.13 notes.rb',
  },
  {
    name: 'move an issue into a project the caller cannot see', as: 'master', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/issues/${w.projects[20].issueId}/move`, body: (w) => ({ to_project_id: w.hiddenProjectId }),
    status: 404, why: 'a project one cannot see is not found (3.1), as a missing one is',
  },
  {
    name: 'open a merge request into a project the caller cannot see', as: 'master', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/merge_requests`, body: (w) => ({ title: 'x', source_branch: 'dev', target_branch: 'master', target_project_id: w.hiddenProjectId }),
    status: 404, why: '3.1',
  },
  {
    name: 'fork into a group the caller cannot see', as: 'master', method: 'POST',
    path: (w) => `/projects/fork/${w.projects[20].id}`, body: (w) => ({ namespace: w.hiddenGroupId }), status: 404, why: '2.15: 404 Target Namespace Not Found',
  },
  {
    name: 'fork into a group where the caller is a guest', as: 'guest', method: 'POST',
    path: (w) => `/projects/fork/${w.projects[20].id}`, body: (w) => ({ namespace: w.groups[20] }), status: 404, why: '2.15: target namespace not allowed',
  },
  {
    name: 'create a project in a group where the caller is a guest', as: 'guest', method: 'POST',
    path: () => '/projects', body: (w) => ({ name: 'nope', namespace_id: w.groups[20] }), status: 400, why: '2.15: bad namespace_id 400 {"namespace":["is not valid"]}; 4.3 create_projects is master',
  },
  {
    name: 'create a project in a group the caller cannot see', as: 'master', method: 'POST',
    path: () => '/projects', body: (w) => ({ name: 'nope', namespace_id: w.hiddenGroupId }), status: 400, why: '2.15',
  },
  {
    name: 'add a project member as owner (50)', as: 'master', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/members`, body: (w) => ({ user_id: w.cast.nonMember.id, access_level: 50 }), status: 422, why: '2.3: project members 10-40',
  },
  {
    name: "raise a project member's level to owner (50)", as: 'master', method: 'PUT',
    path: (w) => `/projects/${w.projects[20].id}/members/${w.spareUserId}`, body: () => ({ access_level: 50 }), status: 422, why: '2.3',
  },
  {
    name: 'add a group owner as a group master', as: 'master', method: 'POST',
    path: (w) => `/groups/${w.groups[20]}/members`, body: (w) => ({ user_id: w.cast.nonMember.id, access_level: 50 }), status: 403, why: '4.3: admin_group_member is owner only',
  },
  {
    name: 'enable a runner of a project the caller does not master', as: 'master', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/runners`, body: (w) => ({ runner_id: w.hiddenRunnerId }), status: 403, why: '8.12 runners.rb: 403 No access granted',
  },
  {
    name: 'enable a deploy key of a project the caller does not master', as: 'master', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/deploy_keys/${w.hiddenDeployKeyId}/enable`, status: 404, why: 'decisions.md accessible deploy keys: 404 Deploy Key Not Found',
  },
  {
    name: 'transfer a project to a group as its owner (not an admin)', as: 'owner', method: 'POST',
    path: (w) => `/groups/${w.groups[20]}/projects/${w.projects[20].id}`, status: 403, why: 'spec "Groups": transfer is administrator only',
  },
  {
    name: 'share a project with owner access', as: 'master', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/share`, body: (w) => ({ group_id: w.shareGroupId, group_access: 50 }), status: 409, why: 'decisions.md project share group_access 10-40',
  },
  {
    name: "an issue with another project's milestone", as: 'master', method: 'POST',
    path: (w) => `/projects/${w.projects[20].id}/issues`, body: (w) => ({ title: 'x', milestone_id: w.projects[0].milestoneId }),
    status: 201, check: (b) => b.milestone === null, why: '3.5: a milestone_id not in the project is silently set to none',
  },
  {
    name: "a merge request given another project's milestone", as: 'master', method: 'PUT',
    path: (w) => `/projects/${w.projects[20].id}/merge_requests/${w.projects[20].mergeRequestId}`, body: (w) => ({ milestone_id: w.projects[0].milestoneId }),
    status: 200, check: (b) => b.milestone === null, why: '3.5',
  },
];
