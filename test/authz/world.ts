/**
 * The world of the authorization matrix: one user per caller kind, a private, an internal and a public project (with
 * a repository, branches, a protected branch, a tag with a release, a pipeline with builds, trace and artifacts,
 * issues, a confidential issue, a merge request, notes, award emoji, labels, milestones, hooks, variables, an upload,
 * a commit status and a runner) and a group of each visibility. Everything is created as root through the API or the
 * services, so no caller of the matrix is the author of anything (item-level author rules stay out of the cells).
 */
import { generateKeyPairSync } from 'node:crypto';
import { Readable } from 'node:stream';
import type { TestServer, TestUser } from '../helpers/app.js';
import { addMemberAsync, makeCast, type Cast } from '../helpers/fixtures.js';
import { drive, pipelinesOf, pushFiles, buildNamed } from '../helpers/ci.js';
import { commitTo } from '../helpers/repository.js';
import { claim, clearQueue, insertBuild, registerRunner } from '../helpers/runner-fixtures.js';
import { insertIssue, insertTodo } from '../helpers/collaboration.js';
import { findBuild } from '../../daemon/services/ci/builds.js';
import { storeArtifacts } from '../../daemon/services/ci/artifacts.js';
import { replaceTrace } from '../../daemon/services/ci/traces.js';

/** Who calls: the matrix's rows of people. */
export type Caller = 'anonymous' | 'blocked' | 'nonMember' | 'external' | 'guest' | 'reporter' | 'developer' | 'master' | 'owner' | 'admin';
export const CALLERS: Caller[] = ['anonymous', 'blocked', 'nonMember', 'external', 'guest', 'reporter', 'developer', 'master', 'owner', 'admin'];
/** Project (and group) access level of each caller; the admin's is above every level. */
export const LEVEL: Record<Caller, number> = {
  anonymous: 0, blocked: 0, nonMember: 0, external: 0, guest: 10, reporter: 20, developer: 30, master: 40, owner: 50, admin: 100,
};
export const VISIBILITIES = [0, 10, 20] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export const CI_YML = `rspec:\n  script: rspec\n  environment: production\ndeploy:\n  script: deploy\n  when: manual\n`;

/** The objects of one project of the world. */
export interface ProjectWorld {
  id: number;
  path: string;
  pipelineId: number;
  buildId: number;
  sha: string;
  issueId: number;
  confidentialIssueId: number;
  mergeRequestId: number;
  /** The merge request's first diff version (GET .../versions/:version_id). */
  mrVersionId: number;
  issueNoteId: number;
  mrNoteId: number;
  issueAwardId: number;
  issueNoteAwardId: number;
  mrAwardId: number;
  mrNoteAwardId: number;
  labelId: number;
  deployKeyId: number;
  /** A confidential issue the guest wrote, a note of the guest on it, an award of the guest on the main issue. */
  guestIssueId: number;
  guestNoteId: number;
  guestAwardId: number;
  /** A merge request the reporter opened (its author row set after root made it). */
  reporterMergeRequestId: number;
  milestoneId: number;
  hookId: number;
  runnerId: number;
  uploadUrl: string;
  /** A snippet of root's with the project's visibility, a note of root's on it, root's award on each. */
  snippetId: number;
  snippetNoteId: number;
  snippetAwardId: number;
  snippetNoteAwardId: number;
  /** The token of a build trigger of the project. */
  triggerToken: string;
  /** The environment and deployment the successful rspec build (environment: production) recorded. */
  environmentId: number;
  deploymentId: number;
  /** The project's issue board and a label list on it (for the label `bug`). */
  boardId: number;
  boardListId: number;
}

/** The whole world. */
export interface World {
  s: TestServer;
  cast: Cast & { blocked: TestUser };
  projects: Record<Visibility, ProjectWorld>;
  /** A public project like the others whose issues, merge requests and builds were switched off afterwards. */
  featuresOff: ProjectWorld;
  /** A public project like the others, archived afterwards. */
  archived: ProjectWorld;
  /** A user whose mastership of the private projects' group expired yesterday. */
  expired: TestUser;
  groups: Record<Visibility, number>;
  /** The private group holding the private projects (the cast are its members). */
  privateGroupId: number;
  /** An empty public group to share projects with. */
  shareGroupId: number;
  /** A private group without members: no caller but the admin sees it. */
  hiddenGroupId: number;
  /** A private project of root's with no members, its runner and its deploy key: out of every caller's reach. */
  hiddenProjectId: number;
  hiddenRunnerId: number;
  hiddenDeployKeyId: number;
  /** A private group without members that holds a public project: readable by whoever sees that project (4.3). */
  publicHostGroupId: number;
  /** A public project with the cast as members (the target of issue moves). */
  moveTargetId: number;
  /** A project where owner and master are masters: its runners are theirs to enable elsewhere. */
  sideProjectId: number;
  /** A developer of every project and group of the world, who is no caller (the subject of refused member writes). */
  spareUserId: number;
  /** A specific runner of the side project only. */
  sideRunnerId: number;
  /** A personal access token of the owner. */
  ownerTokenId: number;
  /** An SSH key of the owner. */
  ownerKeyId: number;
  /** A deploy key of the side project (one the side project's masters may enable elsewhere). */
  sideDeployKeyId: number;
  /** An OAuth application of the owner. */
  applicationId: number;
  /** Unique suffixes for names made in cells. */
  seq: number;
}

/** Make one part of the world, on either engine; a failure names the part and fails the matrix. */
export async function part(_w: World, name: string, make: () => Promise<void>): Promise<void> {
  try {
    await make();
  } catch (e) {
    throw new Error(`the authorization matrix's world: ${name}: ${(e as Error)?.message ?? String(e)}`);
  }
}

/** The user of a caller (null for anonymous). */
export function callerUser(w: World, c: Caller): TestUser | null {
  return c === 'anonymous' ? null : w.cast[c];
}

/** A call as root that must succeed; returns the body. */
export async function asRoot(w: Pick<World, 's'>, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await w.s.api(method, path, w.s.root, body);
  if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

/** A unique name part. */
export const uniq = (w: World, prefix = 'x') => `${prefix}${++w.seq}`;

/** Give the cast their levels on a project or group (owner: group owner 50, or the namespace owner for projects). */
async function addCast(w: World, source: { type: 'Project' | 'Namespace'; id: number }): Promise<void> {
  for (const role of ['guest', 'reporter', 'developer', 'master'] as const) await addMemberAsync(w.s.ctx, source, w.cast[role].id, LEVEL[role]);
  if (source.type === 'Namespace') await addMemberAsync(w.s.ctx, source, w.cast.owner.id, 50);
}

/**
 * A new project (no repository) with the cast on it. Private ones are group projects: the cast are members of the
 * group (the owner is its owner, 50), so group membership is what the private cells check; the others belong to the
 * owner's namespace, with the cast as project members.
 */
export async function freshProject(w: World, vis: number, name = uniq(w, 'p')): Promise<{ id: number; path: string }> {
  if (vis === 0) {
    const body = await asRoot(w, 'POST', '/projects', { name, visibility_level: 0, public_builds: false, namespace_id: w.privateGroupId });
    return { id: body.id, path: body.path_with_namespace };
  }
  const r = await w.s.api('POST', '/projects', w.cast.owner, { name, visibility_level: vis, public_builds: false });
  if (r.status !== 201) throw new Error(`project create failed: ${r.status} ${r.text}`);
  await addCast(w, { type: 'Project', id: r.body.id });
  return { id: r.body.id, path: r.body.path_with_namespace };
}

/** A new group with the cast as members. */
export async function freshGroup(w: World, vis: number, path = uniq(w, 'g')): Promise<number> {
  const g = await asRoot(w, 'POST', '/groups', { name: path, path, visibility_level: vis });
  await addCast(w, { type: 'Namespace', id: g.id });
  // root created it and became its owner: the matrix's admin is admin, not a member
  await w.s.ctx.data.run(`DELETE FROM members WHERE source_type = 'Namespace' AND source_id = ? AND user_id = ?`, [g.id, w.s.root.id]);
  return g.id;
}

/** A finished build of the project's pipeline with a trace (and artifacts when asked); returns its id. */
export async function freshBuild(w: World, p: ProjectWorld, opts: { artifacts?: boolean; status?: string; when?: string } = {}): Promise<number> {
  const id = await insertBuild(w.s, p.id, p.pipelineId, { name: uniq(w, 'job'), status: opts.status ?? 'success', when: opts.when });
  const b = (await findBuild(w.s.ctx, id))!;
  await replaceTrace(w.s.ctx, b, 'trace text\n');
  if (opts.artifacts) await storeArtifacts(w.s.ctx, b, Readable.from([Buffer.from('PK-zip')]), 'artifacts.zip');
  return id;
}

async function buildProject(w: World, vis: Visibility, name = `mx-${vis}`): Promise<ProjectWorld> {
  const { id, path } = await freshProject(w, vis, name);
  const base = `/projects/${id}`;
  const p: ProjectWorld = {
    id, path, pipelineId: 0, buildId: 0, sha: '', issueId: 0, confidentialIssueId: 0, mergeRequestId: 0, mrVersionId: 0, issueNoteId: 0, mrNoteId: 0,
    issueAwardId: 0, issueNoteAwardId: 0, mrAwardId: 0, mrNoteAwardId: 0, labelId: 0, deployKeyId: 0, guestIssueId: 0, guestNoteId: 0,
    guestAwardId: 0, reporterMergeRequestId: 0, milestoneId: 0, hookId: 0, runnerId: 0, uploadUrl: '',
    snippetId: 0, snippetNoteId: 0, snippetAwardId: 0, snippetNoteAwardId: 0,
    environmentId: 0, deploymentId: 0, boardId: 0, boardListId: 0,
  };
  await part(w, `${name}: pushed files, pipeline, build, trace and artifacts`, async () => {
    p.sha = await pushFiles(w.s.ctx, id, w.cast.owner.id, { 'README.md': 'readme\n', '.gitlab-ci.yml': CI_YML, 'docs/a.txt': 'a\n' });
    p.pipelineId = (await pipelinesOf(w.s.ctx, id))[0]!.id;
    await drive(w.s.ctx, p.pipelineId, 'rspec', 'run', 'success');
    p.buildId = (await buildNamed(w.s.ctx, p.pipelineId, 'rspec')).id;
    const b = (await findBuild(w.s.ctx, p.buildId))!;
    await replaceTrace(w.s.ctx, b, 'rspec trace\n');
    await storeArtifacts(w.s.ctx, b, Readable.from([Buffer.from('PK-zip')]), 'artifacts.zip');
  });
  await part(w, `${name}: the production environment and deployment of rspec`, async () => {
    const d = await w.s.ctx.data.get<{ id: number; environment_id: number }>('SELECT id, environment_id FROM deployments WHERE deployable_id = ?', [p.buildId]);
    if (!d) throw new Error('the rspec build recorded no deployment');
    p.deploymentId = d.id;
    p.environmentId = d.environment_id;
  });
  await part(w, `${name}: branches, protected branches and a tag`, async () => {
    for (const branch of ['dev', 'protected', 'prot-target']) await asRoot(w, 'POST', `${base}/repository/branches`, { branch_name: branch, ref: 'master' });
    await commitTo(w.s.ctx, id, 'feature', { 'feature.txt': 'feature\n' }, { from: 'master' });
    await asRoot(w, 'PUT', `${base}/repository/branches/protected/protect`);
    // every new branch named prot-* is protected as it is created: pushes that create one need masters
    const t = new Date().toISOString();
    await w.s.ctx.data.run(`INSERT INTO protected_branches (project_id, name, created_at, updated_at) VALUES (?, 'prot-*', ?, ?)`, [id, t, t]);
    await asRoot(w, 'POST', `${base}/repository/tags`, { tag_name: 'v1', ref: 'master', release_description: 'first' });
  });
  await part(w, `${name}: issues, notes and awards`, async () => {
    const issue = await asRoot(w, 'POST', `${base}/issues`, { title: 'An issue' });
    const confidential = await asRoot(w, 'POST', `${base}/issues`, { title: 'A secret', confidential: true });
    p.issueId = issue.id;
    p.confidentialIssueId = confidential.id;
    const issueNote = await asRoot(w, 'POST', `${base}/issues/${issue.id}/notes`, { body: 'a note' });
    p.issueNoteId = issueNote.id;
    p.issueAwardId = (await asRoot(w, 'POST', `${base}/issues/${issue.id}/award_emoji`, { name: 'tada' })).id;
    p.issueNoteAwardId = (await asRoot(w, 'POST', `${base}/issues/${issue.id}/notes/${issueNote.id}/award_emoji`, { name: 'tada' })).id;
    // (a part of its own: on PostgreSQL, merge requests are not on the data layer yet)
    await part(w, `${name}: a merge request, its note and awards`, async () => {
      // it closes both issues: closes_issues must not show the confidential one to whoever may not read it
      const mr = await asRoot(w, 'POST', `${base}/merge_requests`, {
        title: 'A change', source_branch: 'feature', target_branch: 'master', description: `Closes #${issue.iid} and #${confidential.iid}`,
      });
      p.mergeRequestId = mr.id;
      p.mrVersionId = ((await asRoot(w, 'GET', `${base}/merge_requests/${mr.id}/versions`)) as Array<{ id: number }>)[0]!.id;
      const mrNote = await asRoot(w, 'POST', `${base}/merge_requests/${mr.id}/notes`, { body: 'an mr note' });
      p.mrNoteId = mrNote.id;
      p.mrAwardId = (await asRoot(w, 'POST', `${base}/merge_requests/${mr.id}/award_emoji`, { name: 'tada' })).id;
      p.mrNoteAwardId = (await asRoot(w, 'POST', `${base}/merge_requests/${mr.id}/notes/${mrNote.id}/award_emoji`, { name: 'tada' })).id;
    });
  });
  await part(w, `${name}: a label`, async () => {
    p.labelId = (await asRoot(w, 'POST', `${base}/labels`, { name: 'bug', color: '#FF0000' })).id ?? 0;
  });
  await part(w, `${name}: a milestone`, async () => {
    p.milestoneId = (await asRoot(w, 'POST', `${base}/milestones`, { title: 'v1.0' })).id;
  });
  await part(w, `${name}: a hook`, async () => {
    p.hookId = (await asRoot(w, 'POST', `${base}/hooks`, { url: 'http://hooks.invalid/h' })).id;
  });
  await part(w, `${name}: a secret variable`, async () => {
    await asRoot(w, 'POST', `${base}/variables`, { key: 'SECRET', value: 'mx-s3cret-value' });
  });
  await part(w, `${name}: a build trigger`, async () => {
    p.triggerToken = (await asRoot(w, 'POST', `${base}/triggers`)).token;
  });
  await part(w, `${name}: a commit status`, async () => {
    await asRoot(w, 'POST', `${base}/statuses/${p.sha}`, { state: 'success', name: 'lint' });
  });
  const upload = await w.s.app.inject({
    method: 'POST', url: `/api/v3${base}/uploads`, headers: { 'private-token': w.s.root.token, 'content-type': 'multipart/form-data; boundary=XB' },
    payload: '--XB\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XB--\r\n',
  });
  if (upload.statusCode !== 201) throw new Error(`upload failed: ${upload.statusCode} ${upload.body}`);
  p.uploadUrl = JSON.parse(upload.body).url;
  await part(w, `${name}: the guest's confidential issue, note and award`, async () => {
    p.guestIssueId = (await insertIssue(w.s.ctx, id, { title: "the guest's secret", confidential: true, authorId: w.cast.guest.id })).id;
    p.guestNoteId = await fresh.noteBy(w, p, w.cast.guest);
    p.guestAwardId = await fresh.award(w, `${base}/issues/${p.issueId}`, w.cast.guest);
  });
  await part(w, `${name}: the reporter's merge request`, async () => {
    p.reporterMergeRequestId = await fresh.mergeRequest(w, p);
    await w.s.ctx.data.run(`UPDATE merge_requests SET author_id = ? WHERE id = ?`, [w.cast.reporter.id, p.reporterMergeRequestId]);
  });
  await part(w, `${name}: snippets, a note and awards`, async () => {
    await w.s.ctx.data.run(`UPDATE projects SET snippets_enabled = TRUE WHERE id = ?`, [id]);
    p.snippetId = await fresh.snippet(w, p, vis);
    p.snippetNoteId = (await asRoot(w, 'POST', `${base}/snippets/${p.snippetId}/notes`, { body: 'a snippet note' })).id;
    p.snippetAwardId = (await asRoot(w, 'POST', `${base}/snippets/${p.snippetId}/award_emoji`, { name: 'tada' })).id;
    p.snippetNoteAwardId = (await asRoot(w, 'POST', `${base}/snippets/${p.snippetId}/notes/${p.snippetNoteId}/award_emoji`, { name: 'tada' })).id;
    // a private snippet of a visible project: only members and admins may ever read its title (SECRETS)
    if (vis > 0) await asRoot(w, 'POST', `${base}/snippets`, { title: 'mx-snippet-secret', file_name: 'secret.txt', code: 'x', visibility_level: 0 });
  });
  await part(w, `${name}: a board list`, async () => {
    p.boardId = (await asRoot(w, 'GET', `${base}/boards`))[0].id;
    p.boardListId = (await asRoot(w, 'POST', `${base}/boards/${p.boardId}/lists`, { label_id: p.labelId })).id;
  });
  await part(w, `${name}: a runner`, async () => {
    p.runnerId = await fresh.runner(w, [id]);
  });
  await part(w, `${name}: a deploy key`, async () => {
    p.deployKeyId = await fresh.deployKey(w, id);
  });
  return p;
}

/** Build the world on a started test server. */
export async function buildWorld(s: TestServer): Promise<World> {
  const cast = await makeCast(s, 'mx');
  const blocked = await s.user('mxblocked');
  const w: World = {
    s, cast: { ...cast, blocked }, projects: {} as World['projects'], featuresOff: {} as ProjectWorld, archived: {} as ProjectWorld, expired: blocked, groups: {} as World['groups'],
    privateGroupId: 0, shareGroupId: 0, hiddenGroupId: 0, hiddenProjectId: 0, hiddenRunnerId: 0, hiddenDeployKeyId: 0, publicHostGroupId: 0, moveTargetId: 0, sideProjectId: 0, spareUserId: 0, sideRunnerId: 0, ownerTokenId: 0, ownerKeyId: 0, sideDeployKeyId: 0, applicationId: 0, seq: 0,
  };
  w.privateGroupId = await freshGroup(w, 0, 'mxprivate');
  for (const vis of VISIBILITIES) w.projects[vis] = await buildProject(w, vis);
  w.featuresOff = await buildProject(w, 20, 'mx-features-off');
  await s.ctx.data.run(`UPDATE projects SET issues_enabled = FALSE, merge_requests_enabled = FALSE, builds_enabled = FALSE, snippets_enabled = FALSE WHERE id = ?`, [w.featuresOff.id]);
  w.archived = await buildProject(w, 20, 'mx-archived');
  await s.ctx.data.run(`UPDATE projects SET archived = TRUE WHERE id = ?`, [w.archived.id]);
  w.expired = await s.user('mxexpired');
  await addMemberAsync(s.ctx, { type: 'Namespace', id: w.privateGroupId }, w.expired.id, 40);
  const yesterday = new Date(Date.now() - 24 * 3600 * 1000).toISOString().slice(0, 10);
  await s.ctx.data.run(`UPDATE members SET expires_at = ? WHERE user_id = ?`, [yesterday, w.expired.id]);
  for (const vis of VISIBILITIES) w.groups[vis] = await freshGroup(w, vis, `mxgroup-${vis}`);
  w.shareGroupId = (await asRoot(w, 'POST', '/groups', { name: 'mxshare', path: 'mxshare', visibility_level: 20 })).id;
  w.hiddenGroupId = (await asRoot(w, 'POST', '/groups', { name: 'mxhidden', path: 'mxhidden', visibility_level: 0 })).id;
  w.moveTargetId = (await freshProject(w, 20, 'mx-move-target')).id;
  w.hiddenProjectId = (await asRoot(w, 'POST', '/projects', { name: 'mx-hidden', visibility_level: 0 })).id;
  await part(w, 'the hidden project\'s runner', async () => { w.hiddenRunnerId = await fresh.runner(w, [w.hiddenProjectId]); });
  await part(w, 'the hidden project\'s deploy key', async () => { w.hiddenDeployKeyId = await fresh.deployKey(w, w.hiddenProjectId); });
  w.publicHostGroupId = (await asRoot(w, 'POST', '/groups', { name: 'mxpubhost', path: 'mxpubhost', visibility_level: 0 })).id;
  await asRoot(w, 'POST', '/projects', { name: 'mx-public-in-private-group', visibility_level: 20, namespace_id: w.publicHostGroupId });
  await s.ctx.data.run(`DELETE FROM members WHERE source_type = 'Namespace' AND source_id = ?`, [w.publicHostGroupId]);
  const side = await w.s.api('POST', '/projects', w.cast.owner, { name: 'mx-side', visibility_level: 0 });
  w.sideProjectId = side.body.id;
  await addMemberAsync(s.ctx, { type: 'Project', id: w.sideProjectId }, w.cast.master.id, 40);
  await part(w, 'the side project\'s runner', async () => { w.sideRunnerId = await fresh.runner(w, [w.sideProjectId]); });
  w.spareUserId = await fresh.user(w);
  for (const vis of VISIBILITIES) {
    await addMemberAsync(s.ctx, { type: 'Project', id: w.projects[vis].id }, w.spareUserId, 30);
    await addMemberAsync(s.ctx, { type: 'Namespace', id: w.groups[vis] }, w.spareUserId, 30);
  }
  w.ownerTokenId = await fresh.token(w);
  await part(w, 'an SSH key of the owner', async () => { w.ownerKeyId = await fresh.ownerKey(w); });
  await part(w, 'the side project\'s deploy key', async () => { w.sideDeployKeyId = await fresh.deployKey(w, w.sideProjectId); });
  await part(w, 'an OAuth application of the owner', async () => { w.applicationId = await fresh.application(w); });
  // every caller has a todo on the public confidential issue and on the private project's issue: GET /todos must not
  // show what its caller may not read
  await part(w, 'todos of every caller', async () => {
    for (const user of Object.values(w.cast)) {
      await fresh.todo(w, { ...w.projects[20], issueId: w.projects[20].confidentialIssueId }, user.id);
      await fresh.todo(w, w.projects[0], user.id);
    }
  });
  await asRoot(w, 'PUT', `/users/${blocked.id}/block`);
  return w;
}

/** Fresh objects for the cells that destroy or consume their subject (one per cell, made as root). */
export const fresh = {
  issue: async (w: World, p: ProjectWorld) => (await asRoot(w, 'POST', `/projects/${p.id}/issues`, { title: uniq(w, 'issue') })).id as number,
  /** A merge request from a new branch (one new commit on master) into `target`. */
  mergeRequest: async (w: World, p: ProjectWorld, target = 'master') => {
    const branch = uniq(w, 'br');
    await commitTo(w.s.ctx, p.id, branch, { [`${branch}.txt`]: `${branch}\n` }, { from: 'master' });
    return (await asRoot(w, 'POST', `/projects/${p.id}/merge_requests`, { title: branch, source_branch: branch, target_branch: target })).id as number;
  },
  /** A branch from master with one commit of its own; returns its name. */
  branch: async (w: World, p: ProjectWorld) => {
    const branch = uniq(w, 'br');
    await commitTo(w.s.ctx, p.id, branch, { [`${branch}.txt`]: `${branch}\n` }, { from: 'master' });
    return branch;
  },
  note: async (w: World, p: ProjectWorld, on: 'issues' | 'merge_requests') =>
    (await asRoot(w, 'POST', `/projects/${p.id}/${on}/${on === 'issues' ? p.issueId : p.mergeRequestId}/notes`, { body: uniq(w, 'note') })).id as number,
  /** A note of `user` on the project's guest issue. */
  noteBy: async (w: World, p: Pick<ProjectWorld, 'id' | 'guestIssueId'>, user: TestUser) => {
    const r = await w.s.api('POST', `/projects/${p.id}/issues/${p.guestIssueId}/notes`, user, { body: uniq(w, 'note') });
    if (r.status !== 201) throw new Error(`note failed: ${r.status} ${r.text}`);
    return r.body.id as number;
  },
  /** An award of `by` (root) on the issue, merge request or note at `path` (the first emoji not given there yet). */
  award: async (w: World, path: string, by: TestUser = w.s.root) => {
    for (const name of AWARDS) {
      const r = await w.s.api('POST', `${path}/award_emoji`, by, { name });
      if (r.status === 201) return r.body.id as number;
    }
    throw new Error(`no award left on ${path}`);
  },
  /** A snippet of root's in the project (its visibility `vis`, the project's by default). */
  snippet: async (w: World, p: Pick<ProjectWorld, 'id'>, vis = 0) =>
    (await asRoot(w, 'POST', `/projects/${p.id}/snippets`, { title: uniq(w, 'snippet'), file_name: 'a.rb', code: 'puts 1', visibility_level: vis })).id as number,
  /** A note of root's on the project's snippet. */
  snippetNote: async (w: World, p: ProjectWorld) =>
    (await asRoot(w, 'POST', `/projects/${p.id}/snippets/${p.snippetId}/notes`, { body: uniq(w, 'note') })).id as number,
  label: async (w: World, p: ProjectWorld) => (await asRoot(w, 'POST', `/projects/${p.id}/labels`, { name: uniq(w, 'label'), color: '#00FF00' })).name as string,
  hook: async (w: World, p: ProjectWorld) => (await asRoot(w, 'POST', `/projects/${p.id}/hooks`, { url: `http://hooks.invalid/${uniq(w)}` })).id as number,
  environment: async (w: World, p: ProjectWorld) => (await asRoot(w, 'POST', `/projects/${p.id}/environments`, { name: uniq(w, 'env') })).id as number,
  variable: async (w: World, p: ProjectWorld) => (await asRoot(w, 'POST', `/projects/${p.id}/variables`, { key: uniq(w, 'VAR'), value: 'v' })).key as string,
  tag: async (w: World, p: ProjectWorld) => (await asRoot(w, 'POST', `/projects/${p.id}/repository/tags`, { tag_name: uniq(w, 't'), ref: 'master' })).name as string,
  file: async (w: World, p: ProjectWorld) => {
    const path = `${uniq(w, 'f')}.txt`;
    await commitTo(w.s.ctx, p.id, 'dev', { [path]: 'x\n' });
    return path;
  },
  /** A user (and its namespace) written straight to the database: no password hash to compute, never signs in. */
  user: async (w: World) => {
    const db = w.s.ctx.data;
    const name = uniq(w, 'u');
    const t = new Date().toISOString();
    const row = await db.get<{ id: number }>(`INSERT INTO users (username, email, name, password_hash, private_token_salt, private_token_hash, created_at, updated_at)
      VALUES (?, ?, ?, 'none', ?, ?, ?, ?) RETURNING id`, [name, `${name}@example.com`, name, name, `hash-${name}`, t, t]);
    await db.run(`INSERT INTO namespaces (name, path, kind, owner_id, created_at, updated_at) VALUES (?, ?, 'user', ?, ?, ?)`, [name, name, row!.id, t, t]);
    return row!.id;
  },
  /** A user who is a developer of the project or group. */
  member: async (w: World, source: { type: 'Project' | 'Namespace'; id: number }) => {
    const id = await fresh.user(w);
    await addMemberAsync(w.s.ctx, source, id, 30);
    return id;
  },
  /** A specific runner of the project and of the side project (so it can be disabled here, and enabled by its masters). */
  runner: async (w: World, projectIds: number[]) => {
    const r = await registerRunner(w.s, { description: uniq(w, 'runner') });
    await w.s.ctx.data.run(`UPDATE runners SET is_shared = FALSE WHERE id = ?`, [r.id]);
    for (const id of projectIds) {
      await w.s.ctx.data.run(`INSERT INTO runner_projects (runner_id, project_id, created_at) VALUES (?, ?, ?)`, [r.id, id, new Date().toISOString()]);
    }
    return r.id;
  },
  /** A pending todo of `userId` on the project's issue. */
  todo: (w: World, p: ProjectWorld, userId: number) => insertTodo(w.s.ctx, { userId, projectId: p.id, targetId: p.issueId }),
  token: async (w: World) => (await w.s.api('POST', '/user/personal_access_tokens', w.cast.owner, { name: uniq(w, 'tok') })).body.id as number,
  /** A build of the public project claimed by a new shared runner: its id, its build token and the runner's token. */
  claimedBuild: async (w: World) => {
    const runner = await registerRunner(w.s, { description: uniq(w, 'shared') });
    await clearQueue(w.s);
    const id = await insertBuild(w.s, w.projects[20].id, w.projects[20].pipelineId, { name: uniq(w, 'job') });
    const payload = await claim(w.s, runner.token);
    if (payload.id !== id) throw new Error(`claimed build ${payload.id}, not ${id}`);
    return { id, token: payload.token as string, runnerToken: runner.token };
  },
  /** An SSH key of the owner (as the owner through /user/keys). */
  ownerKey: async (w: World) => (await w.s.api('POST', '/user/keys', w.cast.owner, { title: uniq(w, 'key'), key: sshPublicKey() })).body.id as number,
  /** A deploy key of a project (added as root). */
  deployKey: async (w: World, projectId: number) => (await asRoot(w, 'POST', `/projects/${projectId}/deploy_keys`, { title: uniq(w, 'dk'), key: sshPublicKey() })).id as number,
  /** An OAuth application of the owner. */
  application: async (w: World) =>
    (await w.s.api('POST', '/applications', w.cast.owner, { name: uniq(w, 'app'), redirect_uri: 'https://client.test/cb' })).body.id as number,
};

/** A new ssh-ed25519 public key line (made in-process: no ssh-keygen per cell). */
export function sshPublicKey(comment = 'matrix'): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const field = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]).toString('base64')} ${comment}`;
}

/** Emoji names the fresh awards cycle through (one user may give each only once per target). */
const AWARDS = ['smile', 'heart', 'rocket', 'eyes', 'fire', 'star', 'sunglasses', 'sparkles', 'clap', 'wave', 'muscle', 'coffee', 'apple', 'banana', 'bee', 'bell', 'boom', 'bug', 'beer', 'bomb', 'book', 'bulb'];
