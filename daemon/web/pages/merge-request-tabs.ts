/**
 * The merge request page's commits and pipelines (8.x's Commits and Pipelines tabs, here sections reached from the
 * page's own table of contents): the commits of its latest diff version (GET .../merge_requests/:id/commits) and its
 * pipelines, shown to a reader who may read the source project's pipelines (read_pipeline, as GET .../pipelines).
 */
import { stateSlot, type AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import { anonymousCanProject, canProjectAsync } from '../../policy/permissions.js';
import type { LimitedDiff } from '../../git/diff-stream.js';
import { diffCommits, latestDiff, mergeRequestPipelines, versionChanges } from '../../services/merge-requests/index.js';
import { html, pageNumber, pager, statusBadge, timeAgo, type Html } from './html.js';
import { COMMITS_PER_PAGE, commitItem } from './repository.js';

/** The table of contents, the commits and the pipelines of a merge request. */
export async function mergeRequestSections(ctx: AppContext, viewer: UserRow | null, project: ProjectRow, mr: MergeRequestRow, base: string, query?: unknown): Promise<Html> {
  const commits = diffCommits(await latestDiff(ctx.data, mr.id));
  const commitsPage = Math.min(pageNumber(query, 'commits_page'), Math.max(1, Math.ceil(commits.length / COMMITS_PER_PAGE)));
  const shown = commits.slice((commitsPage - 1) * COMMITS_PER_PAGE, commitsPage * COMMITS_PER_PAGE);
  // Pipelines run in the source project: only a same-project merge request shows them here (a fork's are on its own pages).
  const samePipelines = mr.sourceProjectId === project.id
    && (viewer ? await canProjectAsync(ctx, viewer, 'read_pipeline', project) : anonymousCanProject('read_pipeline', project));
  const pipelines = samePipelines ? await mergeRequestPipelines(ctx.data, mr) : [];
  const toc = html`<nav class="tabs" aria-label="Merge request"><a href="#commits-title">Commits (${commits.length})</a>${
    samePipelines ? html`<a href="#pipelines-title">Pipelines (${pipelines.length})</a>` : ''}<a href="#changes-title">Changes</a><a href="#notes-title">Discussion</a></nav>`;
  const commitList = html`<section aria-labelledby="commits-title"><h2 id="commits-title">Commits (${commits.length})</h2>${commits.length
    ? html`<ol class="list commits">${shown.map((c) => commitItem(base, { sha: c.id, message: c.message, author: { name: c.author_name, date: new Date(c.authored_date) } }))}</ol>${
      pager(commitsPage, COMMITS_PER_PAGE, commits.length, {}, 'commits_page')}`
    : html`<p class="muted">No commits yet.</p>`}</section>`;
  const pipelineList = samePipelines
    ? html`<section aria-labelledby="pipelines-title"><h2 id="pipelines-title">Pipelines (${pipelines.length})</h2>${pipelines.length
      ? html`<ul class="list">${pipelines.map((p) => html`<li><a href="${base}/pipelines/${p.id}">Pipeline #${p.id}</a>
<span class="muted">${statusBadge(p.status)} <a href="${base}/commit/${p.sha}"><code>${p.sha.slice(0, 8)}</code></a> · ${timeAgo(p.createdAt)}</span></li>`)}</ul>`
      : html`<p class="muted">No pipelines for these commits.</p>`}</section>`
    : '';
  return html`${toc}${commitList}${pipelineList}`;
}

/**
 * The changes of a merge request's latest diff version, as GET .../changes computes them, kept for the next readers:
 * a version row is never changed (a push writes a new one), so its changes are the same until then, and a 1,000-file
 * diff costs git a second or more to compute on every page view otherwise. The last CHANGES_KEPT versions are kept,
 * by project and version id: a daemon's own (another daemon's database has other rows under the same ids).
 */
const CHANGES_BY_VERSION = stateSlot('merge request changes', () => new Map<string, Promise<LimitedDiff>>());
const CHANGES_KEPT = 16;

export async function mergeRequestChangesKept(ctx: AppContext, mr: MergeRequestRow, target: ProjectRow): Promise<LimitedDiff> {
  const diff = await latestDiff(ctx.data, mr.id);
  if (!diff || !diff.headCommitSha) return versionChanges(ctx, diff, target);
  const key = `${target.id}:${diff.id}`;
  const CHANGES = ctx.state.get(CHANGES_BY_VERSION);
  let changes = CHANGES.get(key);
  if (changes) CHANGES.delete(key);
  else {
    changes = versionChanges(ctx, diff, target);
    changes.catch(() => CHANGES.delete(key));
    if (CHANGES.size >= CHANGES_KEPT) CHANGES.delete(CHANGES.keys().next().value!);
  }
  CHANGES.set(key, changes);
  return changes;
}
