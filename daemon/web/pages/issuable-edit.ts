/**
 * The edit forms of an issue and a merge request: title, description and, for those with admin_issue /
 * admin_merge_request (reporters and up), labels, milestone and assignee. GET .../edit shows the form to whoever the
 * API's PUT lets update (canUpdateIssue / canUpdateMergeRequest: 403 page otherwise, 404 where the reader may not see
 * it); POST .../edit saves through the PUT's services (updateIssue / updateMergeRequest) with the same rights, and a
 * refused save shows the form again with the service's message and status.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { presentIssues } from '../../api/entities/issues.js';
import { presentMergeRequests } from '../../api/entities/merge-requests.js';
import { canProjectAsync, canUpdateIssue, canUpdateMergeRequest } from '../../policy/permissions.js';
import { updateIssue } from '../../services/collaboration/index.js';
import { updateMergeRequest } from '../../services/merge-requests/index.js';
import { csrfInput, formError, formField, formSession, runWrite, signedInPage, type SignedIn } from './forms.js';
import { html } from './html.js';
import { adminFields, formTarget, optionalId, type CurrentChoices, type Kind, type P } from './issuable-forms.js';
import { layout, sendHtml } from './layout.js';
import { PageRefusal } from './scope.js';

type Target = Awaited<ReturnType<typeof formTarget>>;
type Values = Record<string, string | undefined>;
const FIELDS = ['title', 'description', 'labels', 'milestone_id', 'assignee_id'] as const;

/** Registers the edit forms. */
export default async function issuableEditForms(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  /** The target of the form, refused with 403 unless the viewer may update it (the PUT's check); and their admin right. */
  async function editable(pc: SignedIn, p: P, kind: Kind): Promise<Target & { admin: boolean }> {
    const t = await formTarget(ctx, pc, p, kind);
    const may = t.issue
      ? await canUpdateIssue(ctx, pc.viewer, t.project, t.issue, t.level)
      : await canUpdateMergeRequest(ctx, pc.viewer, t.project, t.mr!, t.level);
    if (!may) throw new PageRefusal(403);
    const admin = await canProjectAsync(ctx, pc.viewer, kind === 'issues' ? 'admin_issue' : 'admin_merge_request', t.project, t.level);
    return { ...t, admin };
  }

  /** What the issue or merge request has now, as the form's values, and the choices the selects must offer. */
  async function currentValues(pc: SignedIn, t: Target): Promise<{ values: Values; current: CurrentChoices }> {
    const [shown] = t.issue ? await presentIssues(ctx, pc.viewer, [t.issue]) : await presentMergeRequests(ctx, pc.viewer, [t.mr!]);
    const s = shown as Record<string, unknown>;
    const milestone = s.milestone as { id: number; title: string } | null;
    const assignee = s.assignee as { id: number; name: string; username: string } | null;
    return {
      values: {
        title: s.title as string,
        description: (s.description as string | null) ?? '',
        labels: (s.labels as string[]).join(', '),
        milestone_id: milestone ? String(milestone.id) : '',
        assignee_id: assignee ? String(assignee.id) : '',
      },
      current: { milestone, assignee },
    };
  }

  async function editForm(reply: FastifyReply, pc: SignedIn, t: Target & { admin: boolean }, p: P, kind: Kind, status: number, v: Values, current: CurrentChoices, error?: string) {
    const noun = kind === 'issues' ? 'issue' : 'merge request';
    const body = html`<h1>Edit ${noun} <span class="muted">${kind === 'issues' ? '#' : '!'}${p.iid}</span></h1>${formError(error)}
<form method="post" action="${t.url}/edit" class="stacked">${csrfInput(pc)}
<label for="title">Title</label><input id="title" name="title" type="text" required value="${v.title ?? ''}">
<label for="description">Description <span class="muted">(Markdown)</span></label>
<textarea id="description" name="description" rows="10">${v.description ?? ''}</textarea>
${t.admin ? await adminFields(ctx, t.project, v, current) : ''}
<div class="actions"><button type="submit">Save changes</button><a href="${t.url}">Cancel</a></div></form>`;
    return sendHtml(reply, status, layout(pc, `Edit ${v.title ?? noun}`, body, { project: t.project, path: `${p.namespace}/${p.project}`, current: kind }));
  }

  for (const kind of ['issues', 'merge_requests'] as const) {
    app.get<{ Params: P }>(`/:namespace/:project/${kind}/:iid/edit`, { schema: { hide: true } }, async (request, reply) => {
      const pc = await signedInPage(ctx, request);
      const t = await editable(pc, request.params, kind);
      const { values, current } = await currentValues(pc, t);
      return editForm(reply, pc, t, request.params, kind, 200, values, current);
    });

    app.post<{ Params: P }>(`/:namespace/:project/${kind}/:iid/edit`, { schema: { hide: true } }, async (request, reply) => {
      const pc = await formSession(ctx, request, reply);
      if (!pc) return reply;
      const t = await editable(pc, request.params, kind);
      const v: Values = Object.fromEntries(FIELDS.map((k) => [k, formField(request, k)]));
      // A field the form sent is set (blank description: none; blank labels: none; "No milestone" / "Unassigned": 0, the
      // API's way to remove them); one it did not send (the selects a developer without admin rights is not shown) is kept.
      const idOrNone = (raw: string | undefined, name: string) => (raw === undefined ? undefined : optionalId(raw, name) ?? 0);
      return runWrite(reply, async () => {
        const params = {
          title: v.title, description: v.description, labels: v.labels,
          milestone_id: idOrNone(v.milestone_id, 'milestone'), assignee_id: idOrNone(v.assignee_id, 'assignee'),
        };
        if (t.issue) await updateIssue(ctx, pc.viewer, t.project, t.issue, params, { admin: t.admin, timestamps: false });
        else await updateMergeRequest(ctx, pc.viewer, t.project, t.mr!, params, { admin: t.admin });
        return t.url;
      }, async (message, status) => editForm(reply, pc, t, request.params, kind, status, v, (await currentValues(pc, t)).current, message));
    });
  }
}
