/**
 * The forms of issues and merge requests: a new issue (title, description, labels, milestone, assignee), a comment
 * on an issue or merge request, close and reopen, a new merge request from a branch, its merge (or its merge when the
 * head pipeline succeeds, and the cancel of that). Each POST is the API's route in a form: the same policy checks
 * (create_issue, create_note, canUpdate*, create_merge_request, the merge's own) and the same services.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../../context.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import type { IssueRow } from '../../db/schema-collaboration.js';
import type { ProjectRow } from '../../db/schema.js';
import { badRequestMessage } from '../../errors.js';
import { canProjectAsync, canUpdateIssue, canUpdateMergeRequest } from '../../policy/permissions.js';
import {
  createIssue, createNote, findReadableIssue, issueNoteable, listProjectMilestones, updateIssue,
} from '../../services/collaboration/index.js';
import {
  createMergeRequest, findReadableMergeRequest, mergeRequestNoteable, updateMergeRequest,
} from '../../services/merge-requests/index.js';
import { cancelAutoMerge } from '../../services/merge-requests/auto-merge.js';
import { acceptMergeRequest } from '../../services/merge-requests/merge.js';
import { canCancelAutoMerge, canMergeMergeRequest, headPipeline, isActivePipeline, mergeHeads } from '../../services/merge-requests/merge-state.js';
import { listProjectUsers } from '../../services/projects/users.js';
import { readableRepository } from '../../services/repository/commits.js';
import {
  actionRefusedPage, buttonForm, csrfInput, formError, formField, formProject, formSession, refusalOf, runWrite, signedInPage, type SignedIn,
} from './forms.js';
import { html, type Html } from './html.js';
import { layout, sendHtml, type PageContext } from './layout.js';
import { pageId, PageRefusal } from './scope.js';
import { liveIssueIdByIid } from '../../db/issues.js';
import { liveMergeRequestIdByIid } from '../../db/merge-requests.js';

export type P = { namespace: string; project: string; iid?: string };
export type Kind = 'issues' | 'merge_requests';
/** The most members and milestones a select offers (larger teams type an id through the API). */
const SELECT_LIMIT = 200;

/** An optional id field: undefined when blank, the number, or a 400 the form shows. */
export function optionalId(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d{1,10}$/.test(raw.trim()) || Number(raw) > 2147483647) throw badRequestMessage(`${name} is invalid`);
  return Number(raw);
}

export const blankToUndefined = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v);

/** The row id of the issue `iid` of a project (deleted ones are absent), or 404. */
async function issueIdOf(ctx: AppContext, project: ProjectRow, iid: number): Promise<number> {
  const id = await liveIssueIdByIid(ctx.data, project.id, iid);
  if (id === undefined) throw new PageRefusal(404);
  return id;
}

/** The row id of the merge request `iid` of a project, or 404. */
async function mergeRequestIdOf(ctx: AppContext, project: ProjectRow, iid: number): Promise<number> {
  const id = await liveMergeRequestIdByIid(ctx.data, project.id, iid);
  if (id === undefined) throw new PageRefusal(404);
  return id;
}

/** What an issue or merge request has now, offered by the selects even when the lists leave it out (a closed milestone, a former member). */
export interface CurrentChoices {
  milestone?: { id: number; title: string } | null;
  assignee?: { id: number; name: string; username: string } | null;
}

/** The selects of the fields admin_issue / admin_merge_request may set: labels, milestone, assignee. */
export async function adminFields(ctx: AppContext, project: ProjectRow, v: Record<string, string | undefined>, current: CurrentChoices = {}): Promise<Html> {
  const users = await listProjectUsers(ctx, project).fetch(ctx.data, SELECT_LIMIT, 0);
  const milestones = await listProjectMilestones(ctx.data, project.id, { state: 'active' }, SELECT_LIMIT, 0);
  if (current.milestone && !milestones.some((m) => m.id === current.milestone!.id)) milestones.unshift(current.milestone as (typeof milestones)[number]);
  if (current.assignee && !users.some((u) => u.id === current.assignee!.id)) users.unshift(current.assignee as (typeof users)[number]);
  const opt = (value: string, label: string, current: string | undefined) => html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;
  return html`<label for="labels">Labels <span class="muted">(comma-separated)</span></label>
<input id="labels" name="labels" type="text" value="${v.labels ?? ''}">
<label for="milestone_id">Milestone</label>
<select id="milestone_id" name="milestone_id">${opt('', 'No milestone', v.milestone_id)}${milestones.map((m) => opt(String(m.id), m.title, v.milestone_id))}</select>
<label for="assignee_id">Assignee</label>
<select id="assignee_id" name="assignee_id">${opt('', 'Unassigned', v.assignee_id)}${users.map((u) => opt(String(u.id), `${u.name} (@${u.username})`, v.assignee_id))}</select>`;
}

/** The comment form at the end of an issue or merge request page (for those who may comment). */
function commentForm(pc: PageContext, action: string, body = '', error?: string): Html {
  return html`<section aria-labelledby="comment-title" class="form-section"><h2 id="comment-title">Comment</h2>${formError(error)}
<form method="post" action="${action}" class="stacked">${csrfInput(pc)}
<label for="note-body" class="sr">Comment</label>
<textarea id="note-body" name="body" rows="5" required placeholder="Write a comment (Markdown)">${body}</textarea>
<button type="submit">Comment</button></form></section>`;
}

/** The "New issue" / "New merge request" link of a list, for those with the ability. */
export async function newIssuableLink(ctx: AppContext, pc: PageContext, project: ProjectRow, href: string, ability: 'create_issue' | 'create_merge_request', label: string): Promise<Html> {
  return pc.viewer && (await canProjectAsync(ctx, pc.viewer, ability, project)) ? html`<p class="actions"><a class="button" href="${href}">${label}</a></p>` : html``;
}

/** The buttons and the comment form of an issue page for its viewer (what the API would let them do). */
export async function issueActions(ctx: AppContext, pc: PageContext, project: ProjectRow, issue: IssueRow, base: string): Promise<Html> {
  if (!pc.viewer) return html``;
  const url = `${base}/issues/${issue.iid}`;
  const update = await canUpdateIssue(ctx, pc.viewer, project, issue);
  const comment = await canProjectAsync(ctx, pc.viewer, 'create_note', project);
  return html`${update ? html`<div class="actions"><a class="button" href="${url}/edit">Edit issue</a>${issue.state === 'closed' ? buttonForm(pc, `${url}/reopen`, 'Reopen issue') : buttonForm(pc, `${url}/close`, 'Close issue')}</div>` : ''}
${comment ? commentForm(pc, `${url}/notes`) : ''}`;
}

/** The merge, close/reopen buttons and the comment form of a merge request page for its viewer. */
export async function mergeRequestActions(ctx: AppContext, pc: PageContext, project: ProjectRow, mr: MergeRequestRow, base: string): Promise<Html> {
  if (!pc.viewer) return html``;
  const url = `${base}/merge_requests/${mr.iid}`;
  const open = mr.state === 'opened' || mr.state === 'reopened';
  const update = await canUpdateMergeRequest(ctx, pc.viewer, project, mr);
  const comment = await canProjectAsync(ctx, pc.viewer, 'create_note', project);
  let merge: Html = html``;
  if (open && (await canMergeMergeRequest(ctx, pc.viewer, project, mr))) {
    if (mr.mergeWhenBuildSucceeds) {
      merge = html`<p class="muted" id="auto-merge">Set to merge when the pipeline succeeds.</p>${
        (await canCancelAutoMerge(ctx, pc.viewer, project, mr)) ? buttonForm(pc, `${url}/cancel_merge_when_build_succeeds`, 'Cancel automatic merge') : ''}`;
    } else {
      const heads = await mergeHeads(ctx, project, mr);
      const pipeline = await headPipeline(ctx, mr, heads.source, heads.sourceSha);
      const active = !!pipeline && isActivePipeline(pipeline);
      merge = html`<form method="post" action="${url}/merge" class="merge-form">${csrfInput(pc)}
<input type="hidden" name="sha" value="${heads.sourceSha ?? ''}">
${active ? html`<label><input type="checkbox" name="merge_when_build_succeeds" value="true" checked> Merge when the pipeline succeeds</label>` : ''}
<label><input type="checkbox" name="should_remove_source_branch" value="true"> Remove the source branch</label>
<button type="submit">Merge</button></form>`;
    }
  }
  return html`<div class="actions">${merge}${update ? html`<a class="button" href="${url}/edit">Edit merge request</a>` : ''}${update && mr.state !== 'merged' && mr.state !== 'locked'
    ? (open ? buttonForm(pc, `${url}/close`, 'Close merge request') : buttonForm(pc, `${url}/reopen`, 'Reopen merge request')) : ''}</div>
${comment ? commentForm(pc, `${url}/notes`) : ''}`;
}

/** The issue or merge request of a form's URL that the viewer may read (404 otherwise, as the API). */
export async function formTarget(ctx: AppContext, pc: SignedIn, p: P, kind: Kind) {
  const { project, level } = await formProject(ctx, pc.viewer, p.namespace, p.project, kind === 'issues' ? 'read_issue' : 'read_merge_request');
  const iid = pageId(p.iid!);
  const base = `/${p.namespace}/${p.project}`;
  try {
    if (kind === 'issues') {
      const issue = await findReadableIssue(ctx, pc.viewer, project, await issueIdOf(ctx, project, iid), level);
      return { project, level, issue, mr: null, noteable: issueNoteable(issue), url: `${base}/issues/${iid}` };
    }
    const mr = await findReadableMergeRequest(ctx, pc.viewer, project, await mergeRequestIdOf(ctx, project, iid), level);
    return { project, level, issue: null, mr, noteable: mergeRequestNoteable(mr), url: `${base}/merge_requests/${iid}` };
  } catch (e) {
    throw refusalOf(e); // findReadable*'s 404 (absent, or not the viewer's to read) as the 404 page
  }
}

/** Registers the issue and merge request forms. */
export default async function issuableForms(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const baseOf = (p: P) => `/${p.namespace}/${p.project}`;
  const nav = (project: ProjectRow, p: P, current: Kind) => ({ project, path: `${p.namespace}/${p.project}`, current });

  // ---- a new issue ------------------------------------------------------------------------------------------------

  async function issueForm(reply: FastifyReply, pc: SignedIn, project: ProjectRow, p: P, status: number, v: Record<string, string | undefined> = {}, error?: string) {
    const admin = await canProjectAsync(ctx, pc.viewer, 'admin_issue', project);
    const body = html`<h1>New issue</h1>${formError(error)}
<form method="post" action="${baseOf(p)}/issues" class="stacked">${csrfInput(pc)}
<label for="title">Title</label><input id="title" name="title" type="text" required value="${v.title ?? ''}">
<label for="description">Description <span class="muted">(Markdown)</span></label>
<textarea id="description" name="description" rows="8">${v.description ?? ''}</textarea>
${admin ? await adminFields(ctx, project, v) : ''}
<button type="submit">Submit issue</button></form>`;
    return sendHtml(reply, status, layout(pc, `New issue · ${project.name}`, body, nav(project, p, 'issues')));
  }

  app.get<{ Params: P }>('/:namespace/:project/issues/new', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedInPage(ctx, request);
    const { project } = await formProject(ctx, pc.viewer, request.params.namespace, request.params.project, 'create_issue');
    return issueForm(reply, pc, project, request.params, 200);
  });

  app.post<{ Params: P }>('/:namespace/:project/issues', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    const { project, level } = await formProject(ctx, pc.viewer, request.params.namespace, request.params.project, 'create_issue');
    const v = Object.fromEntries(['title', 'description', 'labels', 'milestone_id', 'assignee_id'].map((k) => [k, formField(request, k)]));
    return runWrite(reply, async () => {
      const rights = {
        admin: await canProjectAsync(ctx, pc.viewer, 'admin_issue', project, level),
        timestamps: false,
      };
      const issue = await createIssue(ctx, pc.viewer, project, {
        title: v.title, description: blankToUndefined(v.description), labels: blankToUndefined(v.labels),
        milestone_id: optionalId(v.milestone_id, 'milestone'), assignee_id: optionalId(v.assignee_id, 'assignee'),
      }, rights);
      return `${baseOf(request.params)}/issues/${issue.iid}`;
    }, (message, status) => issueForm(reply, pc, project, request.params, status, v, message));
  });

  // ---- comments, close and reopen of both ---------------------------------------------------------------------

  for (const kind of ['issues', 'merge_requests'] as const) {
    const noun = kind === 'issues' ? 'issue' : 'merge request';

    app.post<{ Params: P }>(`/:namespace/:project/${kind}/:iid/notes`, { schema: { hide: true } }, async (request, reply) => {
      const pc = await formSession(ctx, request, reply);
      if (!pc) return reply;
      const t = await formTarget(ctx, pc, request.params, kind);
      if (!(await canProjectAsync(ctx, pc.viewer, 'create_note', t.project, t.level))) throw new PageRefusal(403);
      const body = formField(request, 'body') ?? '';
      return runWrite(reply, async () => {
        const made = await createNote(ctx, pc.viewer, t.project, t.noteable, { body });
        return made.kind === 'note' ? `${t.url}#note_${made.note.id}` : t.url;
      }, (message, status) => sendHtml(reply, status, layout(pc, `Comment on the ${noun}`,
        html`<p><a href="${t.url}">Back to the ${noun}</a></p>${commentForm(pc, `${t.url}/notes`, body, message)}`, nav(t.project, request.params, kind))));
    });

    for (const event of ['close', 'reopen'] as const) {
      app.post<{ Params: P }>(`/:namespace/:project/${kind}/:iid/${event}`, { schema: { hide: true } }, async (request, reply) => {
        const pc = await formSession(ctx, request, reply);
        if (!pc) return reply;
        const t = await formTarget(ctx, pc, request.params, kind);
        return runWrite(reply, async () => {
          if (t.issue) {
            if (!(await canUpdateIssue(ctx, pc.viewer, t.project, t.issue, t.level))) throw new PageRefusal(403);
            const rights = { admin: await canProjectAsync(ctx, pc.viewer, 'admin_issue', t.project, t.level), timestamps: false };
            await updateIssue(ctx, pc.viewer, t.project, t.issue, { state_event: event }, rights);
          } else {
            if (!(await canUpdateMergeRequest(ctx, pc.viewer, t.project, t.mr!, t.level))) throw new PageRefusal(403);
            const rights = { admin: await canProjectAsync(ctx, pc.viewer, 'admin_merge_request', t.project, t.level) };
            await updateMergeRequest(ctx, pc.viewer, t.project, t.mr!, { state_event: event }, rights);
          }
          return t.url;
        }, (message, status) => actionRefusedPage(pc, reply, status, `The ${noun} was not ${event === 'close' ? 'closed' : 'reopened'}`, message, t.url));
      });
    }
  }

  // ---- merge requests: a new one, the merge, the cancel of an automatic merge ---------------------------------

  async function mergeRequestForm(reply: FastifyReply, pc: SignedIn, project: ProjectRow, p: P, status: number, v: Record<string, string | undefined> = {}, error?: string) {
    const repo = readableRepository(ctx, project);
    const branches = repo ? (await repo.listBranches()).map((b) => b.name) : [];
    const admin = await canProjectAsync(ctx, pc.viewer, 'admin_merge_request', project);
    const select = (name: string, label: string, current: string | undefined) => html`<label for="${name}">${label}</label>
<select id="${name}" name="${name}" required>${branches.map((b) => html`<option value="${b}"${b === current ? html` selected` : ''}>${b}</option>`)}</select>`;
    const body = html`<h1>New merge request</h1>${formError(error)}
${branches.length < 2 ? html`<p class="muted">A merge request needs two branches: push a branch first.</p>` : ''}
<form method="post" action="${baseOf(p)}/merge_requests" class="stacked">${csrfInput(pc)}
${select('source_branch', 'Source branch', v.source_branch ?? branches.find((b) => b !== project.defaultBranch))}
${select('target_branch', 'Target branch', v.target_branch ?? project.defaultBranch)}
<label for="title">Title</label><input id="title" name="title" type="text" required value="${v.title ?? ''}">
<label for="description">Description <span class="muted">(Markdown)</span></label>
<textarea id="description" name="description" rows="8">${v.description ?? ''}</textarea>
${admin ? await adminFields(ctx, project, v) : ''}
<button type="submit">Submit merge request</button></form>`;
    return sendHtml(reply, status, layout(pc, `New merge request · ${project.name}`, body, nav(project, p, 'merge_requests')));
  }

  app.get<{ Params: P }>('/:namespace/:project/merge_requests/new', { schema: { hide: true } }, async (request, reply) => {
    const pc = await signedInPage(ctx, request);
    const { project } = await formProject(ctx, pc.viewer, request.params.namespace, request.params.project, 'create_merge_request');
    const q = request.query as Record<string, unknown>;
    const str = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : undefined);
    return mergeRequestForm(reply, pc, project, request.params, 200, { source_branch: str('source_branch'), target_branch: str('target_branch') });
  });

  app.post<{ Params: P }>('/:namespace/:project/merge_requests', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    const { project, level } = await formProject(ctx, pc.viewer, request.params.namespace, request.params.project, 'create_merge_request');
    const v = Object.fromEntries(['source_branch', 'target_branch', 'title', 'description', 'labels', 'milestone_id', 'assignee_id'].map((k) => [k, formField(request, k)]));
    return runWrite(reply, async () => {
      const rightsOf = async (target: ProjectRow) =>
        ({ admin: await canProjectAsync(ctx, pc.viewer, 'admin_merge_request', target, target.id === project.id ? level : undefined) });
      const mr = await createMergeRequest(ctx, pc.viewer, project, {
        source_branch: v.source_branch, target_branch: v.target_branch, title: v.title, description: blankToUndefined(v.description),
        labels: blankToUndefined(v.labels), milestone_id: optionalId(v.milestone_id, 'milestone'), assignee_id: optionalId(v.assignee_id, 'assignee'),
      }, rightsOf);
      return `${baseOf(request.params)}/merge_requests/${mr.iid}`;
    }, (message, status) => mergeRequestForm(reply, pc, project, request.params, status, v, message));
  });

  app.post<{ Params: P }>('/:namespace/:project/merge_requests/:iid/merge', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    const t = await formTarget(ctx, pc, request.params, 'merge_requests');
    const sha = blankToUndefined(formField(request, 'sha'));
    return runWrite(reply, async () => {
      await acceptMergeRequest(ctx, pc.viewer, t.project, t.mr!, {
        sha,
        should_remove_source_branch: formField(request, 'should_remove_source_branch') === 'true',
        merge_when_build_succeeds: formField(request, 'merge_when_build_succeeds') === 'true',
      });
      return t.url;
    }, (message, status) => actionRefusedPage(pc, reply, status, 'The merge request was not merged', message, t.url));
  });

  app.post<{ Params: P }>('/:namespace/:project/merge_requests/:iid/cancel_merge_when_build_succeeds', { schema: { hide: true } }, async (request, reply) => {
    const pc = await formSession(ctx, request, reply);
    if (!pc) return reply;
    const t = await formTarget(ctx, pc, request.params, 'merge_requests');
    return runWrite(reply, async () => {
      await cancelAutoMerge(ctx, pc.viewer, t.project, t.mr!);
      return t.url;
    }, (message, status) => actionRefusedPage(pc, reply, status, 'The automatic merge was not cancelled', message, t.url));
  });
}

