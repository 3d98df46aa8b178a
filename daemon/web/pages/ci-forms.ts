/**
 * The CI forms: retry, cancel and play a build; retry and cancel a pipeline. The API's rules: update_build and
 * update_pipeline (developers and up), the builds and pipelines of another project are 404, and the same services
 * (services/ci/builds.ts, services/ci/pipelines.ts) with their answers: a build that cannot be retried is 403 "Build is not
 * retryable", one that cannot be played 400 "Unplayable Build", as POST .../retry and .../play say.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../db/schema.js';
import type { CommitStatusRow, PipelineRow } from '../../db/schema-ci.js';
import { canCancel, canPlay, canRetry, type BuildStatus } from '../../ci/status.js';
import type { CiWhen } from '../../ci/config-types.js';
import { badRequestMessage, forbidden } from '../../errors.js';
import { canProjectAsync } from '../../policy/permissions.js';
import { cancelBuild, findProjectBuild, latestPipelineBuilds, playBuild, retryBuild } from '../../services/ci/builds.js';
import { cancelPipeline, findProjectPipeline, retryPipeline } from '../../services/ci/pipelines.js';
import { actionRefusedPage, buttonForm, formProject, formSession, runWrite } from './forms.js';
import { html, type Html } from './html.js';
import type { PageContext } from './layout.js';
import { pageId, PageRefusal } from './scope.js';

type P = { namespace: string; project: string; id: string };

const actionable = (b: CommitStatusRow) => ({ status: b.status as BuildStatus, when: b.when as CiWhen, commands: b.commands });

/** The buttons of a build (cancel, retry, play) its viewer may press (update_build). */
export async function buildActions(ctx: AppContext, pc: PageContext, project: ProjectRow, build: CommitStatusRow, base: string): Promise<Html> {
  if (!pc.viewer || build.type !== 'build' || !(await canProjectAsync(ctx, pc.viewer, 'update_build', project))) return html``;
  const url = `${base}/builds/${build.id}`;
  const b = actionable(build);
  return html`<div class="actions">${canCancel(b) ? buttonForm(pc, `${url}/cancel`, 'Cancel') : ''}${canRetry(b) ? buttonForm(pc, `${url}/retry`, 'Retry') : ''}${
    canPlay(b) ? buttonForm(pc, `${url}/play`, 'Play') : ''}</div>`;
}

/** The buttons of a pipeline (retry its failed builds, cancel its running ones) and the play buttons of its manual builds. */
export async function pipelineActions(ctx: AppContext, pc: PageContext, project: ProjectRow, pipeline: PipelineRow, base: string): Promise<Html> {
  if (!pc.viewer || !(await canProjectAsync(ctx, pc.viewer, 'update_pipeline', project))) return html``;
  const builds = await latestPipelineBuilds(ctx.data, pipeline.id);
  const retry = builds.some((b) => (b.status === 'failed' || b.status === 'canceled') && canRetry(actionable(b)));
  const cancel = builds.some((b) => canCancel(actionable(b)));
  const manual = (await canProjectAsync(ctx, pc.viewer, 'update_build', project)) ? builds.filter((b) => canPlay(actionable(b))) : [];
  return html`<div class="actions">${retry ? buttonForm(pc, `${base}/pipelines/${pipeline.id}/retry`, 'Retry failed builds') : ''}${
    cancel ? buttonForm(pc, `${base}/pipelines/${pipeline.id}/cancel`, 'Cancel running') : ''}${
    manual.map((b) => buttonForm(pc, `${base}/builds/${b.id}/play`, `Play ${b.name ?? ''}`))}</div>`;
}

/** Registers the CI forms. */
export default async function ciForms(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const baseOf = (p: P) => `/${p.namespace}/${p.project}`;

  const buildActionsOf = {
    cancel: async (b: CommitStatusRow) => cancelBuild(ctx, b),
    retry: async (b: CommitStatusRow, user: PageContext['viewer']) => {
      const r = await retryBuild(ctx, b, user);
      if (!r) throw forbidden('Build is not retryable');
      return r;
    },
    play: async (b: CommitStatusRow, user: PageContext['viewer']) => {
      const r = await playBuild(ctx, b, user);
      if (!r) throw badRequestMessage('Unplayable Build');
      return r;
    },
  };

  for (const action of ['cancel', 'retry', 'play'] as const) {
    app.post<{ Params: P }>(`/:namespace/:project/builds/:id/${action}`, { schema: { hide: true } }, async (request, reply) => {
      const pc = await formSession(ctx, request, reply);
      if (!pc) return reply;
      const { project } = await formProject(ctx, pc.viewer, request.params.namespace, request.params.project, 'update_build');
      const build = await findProjectBuild(ctx, project.id, pageId(request.params.id));
      if (!build) throw new PageRefusal(404);
      const back = `${baseOf(request.params)}/builds/${build.id}`;
      return runWrite(reply, async () => {
        const after = await buildActionsOf[action](build, pc.viewer);
        return `${baseOf(request.params)}/builds/${after.id}`;
      }, (message, status) => actionRefusedPage(pc, reply, status, `The build was not ${action === 'cancel' ? 'canceled' : action === 'retry' ? 'retried' : 'played'}`, message, back));
    });
  }

  for (const action of ['cancel', 'retry'] as const) {
    app.post<{ Params: P }>(`/:namespace/:project/pipelines/:id/${action}`, { schema: { hide: true } }, async (request, reply) => {
      const pc = await formSession(ctx, request, reply);
      if (!pc) return reply;
      const { project } = await formProject(ctx, pc.viewer, request.params.namespace, request.params.project, 'update_pipeline');
      const pipeline = await findProjectPipeline(ctx, project.id, pageId(request.params.id));
      if (!pipeline) throw new PageRefusal(404);
      const back = `${baseOf(request.params)}/pipelines/${pipeline.id}`;
      return runWrite(reply, async () => {
        if (action === 'cancel') await cancelPipeline(ctx, pipeline);
        else await retryPipeline(ctx, pipeline, pc.viewer);
        return back;
      }, (message, status) => actionRefusedPage(pc, reply, status, `The pipeline was not ${action === 'cancel' ? 'canceled' : 'retried'}`, message, back));
    });
  }
}
