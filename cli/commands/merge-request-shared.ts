/**
 * What the `mr` verbs share: the merge request shape, finding one by its !iid, the head pipeline, and the record
 * `mr show` prints. (The project a verb acts on, named or the clone's, comes from ../current-project.ts.)
 */
import type { ApiClient } from '../client.js';
import { ApiError } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { renderRecord, shortTime } from '../output.js';
import type { Build, Pipeline } from '../views/ci-format.js';
import { at, renderNotes, type Milestone, type Note, type UserRef } from './collaboration.js';
import { idOrPath } from './common.js';

/** A merge request as the API shows it (the fields the CLI prints; --json prints everything). */
export interface MergeRequest {
  id: number;
  iid: number;
  project_id: number;
  /** null when the source project (a fork) was deleted. */
  source_project_id: number | null;
  target_project_id: number;
  title: string;
  description: string | null;
  state: string;
  source_branch: string;
  target_branch: string;
  upvotes: number;
  downvotes: number;
  author: UserRef | null;
  assignee: UserRef | null;
  labels: string[];
  work_in_progress: boolean;
  milestone: Milestone | null;
  merge_when_build_succeeds: boolean;
  merge_status: string;
  /** The source branch's head commit. */
  sha?: string | null;
  merge_commit_sha?: string | null;
  subscribed: boolean;
  user_notes_count: number;
  should_remove_source_branch: boolean | null;
  force_remove_source_branch: boolean | null;
  web_url?: string;
  created_at: string;
  updated_at: string;
}

/** The project fields the `mr` verbs use. */
export interface ProjectInfo {
  id: number;
  path_with_namespace: string;
  default_branch: string | null;
  http_url_to_repo: string;
  namespace?: { path: string };
  forked_from_project?: { id: number; path_with_namespace: string };
}

/** `!12`, `#12` or `12` -> 12; anything else is a usage error. */
export function parseMrIid(value: string): number {
  const m = /^[!#]?(\d+)$/.exec(value.trim());
  if (!m || Number(m[1]) < 1) throw new UsageError(`a merge request is named by its number (like 3 or !3), not "${value}"`, 'list them with `gantry mr list [project]`');
  return Number(m[1]);
}

/** The merge requests path of a project. */
export const mrsPath = (project: string | number) => `/projects/${idOrPath(String(project))}/merge_requests`;

/** A branch name as a URL path (each segment encoded; `feature/x` keeps its slash). */
export const branchPath = (branch: string) => branch.split('/').map(encodeURIComponent).join('/');

/** The merge request `!iid` of a project (the API v3 addresses merge requests by their global id; people know the iid). */
export async function findMergeRequest(api: ApiClient, project: string, iidText: string): Promise<MergeRequest> {
  const iid = parseMrIid(iidText);
  const found = await api.get<MergeRequest[]>(mrsPath(project), { iid });
  const mr = Array.isArray(found) ? found.find((m) => m.iid === iid) : undefined;
  if (!mr) throw new CliError(`no merge request !${iid} in ${project}`, `list them with \`gantry mr list ${project}\``);
  return mr;
}

/** The commit a branch of a project points at, or null when the project has no such branch. */
export async function serverBranchHead(api: ApiClient, project: string | number, branch: string): Promise<string | null> {
  try {
    const b = await api.get<{ commit: { id: string } }>(`/projects/${idOrPath(String(project))}/repository/branches/${branchPath(branch)}`);
    return b.commit.id;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/**
 * The head pipeline of a merge request: the newest pipeline of its head commit (`sha`, else the source branch's) on the
 * source branch, found through that commit's builds; null when there is none (or the source project is gone).
 */
export async function headPipeline(api: ApiClient, mr: MergeRequest): Promise<Pipeline | null> {
  if (mr.source_project_id === null) return null;
  const sha = mr.sha ?? await serverBranchHead(api, mr.source_project_id, mr.source_branch);
  if (!sha) return null;
  const base = `/projects/${mr.source_project_id}`;
  const builds = (await api.list<Build>(`${base}/repository/commits/${sha}/builds`, {}, { all: true })).items;
  const ids = builds.filter((b) => b.pipeline && (b.pipeline.ref === mr.source_branch || b.ref === mr.source_branch)).map((b) => b.pipeline!.id);
  if (ids.length === 0) return null;
  return api.get<Pipeline>(`${base}/pipelines/${Math.max(...ids)}`);
}

/** The metadata of a merge request as key/value lines. */
export function mergeRequestRecord(mr: MergeRequest, opts: { pipeline?: Pipeline | null; sourceProject?: string } = {}): string {
  const removeSource = mr.force_remove_source_branch || mr.should_remove_source_branch;
  return renderRecord([
    ['merge request', `!${mr.iid} ${mr.title}`],
    ['id', mr.id],
    ['state', mr.state],
    ['source', opts.sourceProject ? `${opts.sourceProject}:${mr.source_branch}` : mr.source_branch],
    ['target', mr.target_branch],
    ['merge status', mr.merge_status],
    ...(mr.merge_commit_sha ? [['merge commit', mr.merge_commit_sha] as [string, unknown]] : []),
    ...(opts.pipeline !== undefined ? [['pipeline', opts.pipeline ? `#${opts.pipeline.id} ${opts.pipeline.status}` : 'none'] as [string, unknown]] : []),
    ...(mr.merge_when_build_succeeds ? [['merge when pipeline succeeds', true] as [string, unknown]] : []),
    ...(removeSource ? [['remove source branch', true] as [string, unknown]] : []),
    ...(mr.work_in_progress ? [['work in progress', true] as [string, unknown]] : []),
    ['author', at(mr.author)],
    ['assignee', at(mr.assignee) || 'none'],
    ['labels', mr.labels.length ? mr.labels : 'none'],
    ['milestone', mr.milestone?.title ?? 'none'],
    ['subscribed', mr.subscribed],
    ['comments', mr.user_notes_count],
    ['votes', `+${mr.upvotes} -${mr.downvotes}`],
    ['created', shortTime(mr.created_at)],
    ['updated', shortTime(mr.updated_at)],
    ...(mr.web_url ? [['web url', mr.web_url] as [string, unknown]] : []),
  ]);
}

/** The record, then the description, then the notes when given (`gantry mr show`). */
export function renderMergeRequestShow(mr: MergeRequest, pipeline: Pipeline | null, sourceProject?: string, notes?: Note[]): string {
  const description = mr.description?.trim() ? mr.description.trim() : '(no description)';
  return `${mergeRequestRecord(mr, { pipeline, sourceProject })}\n${description}\n${notes ? `\n${renderNotes(notes)}\n` : ''}`;
}

/** GitLab's default title for a branch of several commits: `fix-login_page` -> `Fix login page` (titleize.humanize). */
export function titleFromBranch(branch: string): string {
  const words = branch.replace(/[-_]+/g, ' ').trim().toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : branch;
}
