/**
 * closes_issues (8.x MergeRequest#closes_issues + Gitlab::ClosingIssueExtractor): the issues named by the default
 * closing pattern ("Closes #1", "fixes #2, #3 and group/project#4", "Resolves: #5", case-insensitive) in the title,
 * description and commit messages of a merge request whose target is the project's default branch; only issues the
 * caller can read. `group/project#n` and issue URLs of this instance name issues of other projects.
 */
import type { AppContext } from '../../context.js';
import type { IssueRow } from '../../db/schema-collaboration.js';
import type { MergeRequestRow } from '../../db/schema-merge-requests.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { canReadIssuable } from '../../policy/permissions.js';
import type { Queries } from '../../db/layer/types.js';
import { lookupProjectAsync } from '../projects/projects.js';
import { diffCommits } from './find.js';
import { liveIssueByIid } from '../../db/issues.js';
import { latestDiffCommitsHolding } from '../../db/merge-request-diffs.js';

const PATH = String.raw`[a-zA-Z0-9_.-]+(?:/[a-zA-Z0-9_.-]+)+`;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The reference forms of one issue: `#n`, `group/project#n`, and the instance's issue URLs. */
function issueRefPattern(baseUrl: string): string {
  return String.raw`(?:(?:${PATH})?#\d+|${escape(baseUrl)}/${PATH}/issues/\d+)`;
}

/** 8.x's default issue_closing_pattern with the instance's issue reference forms. */
function closingRegex(baseUrl: string): RegExp {
  const ref = issueRefPattern(baseUrl);
  return new RegExp(
    String.raw`(?:clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing))(?::?) +(?:(?:issues? +)?${ref}(?:(?:, *| +and +)?)|[A-Z][A-Z0-9_]+-\d+)+`,
    'gi',
  );
}

/** One issue reference: the project path (null: the merge request's project) and the issue number. */
export interface IssueReference {
  projectPath: string | null;
  iid: number;
}

/** The issue references of the closing statements in `text`, in order, without repeats. */
export function closingReferences(text: string, baseUrl: string): IssueReference[] {
  const refs: IssueReference[] = [];
  const seen = new Set<string>();
  const inner = new RegExp(String.raw`(${PATH})?#(\d+)|${escape(baseUrl)}/(${PATH})/issues/(\d+)`, 'g');
  for (const statement of text.match(closingRegex(baseUrl)) ?? []) {
    for (const m of statement.matchAll(inner)) {
      const ref: IssueReference = m[2] !== undefined ? { projectPath: m[1] ?? null, iid: Number(m[2]) } : { projectPath: m[3]!, iid: Number(m[4]) };
      const key = `${ref.projectPath ?? ''}#${ref.iid}`;
      if (seen.has(key) || !Number.isSafeInteger(ref.iid)) continue;
      seen.add(key);
      refs.push(ref);
    }
  }
  return refs;
}

/** The live issue `iid` of a project, or null (an iid beyond the integer column names none). */
async function findIssueByIid(q: Queries, projectId: number, iid: number): Promise<IssueRow | null> {
  if (!Number.isSafeInteger(iid) || Math.abs(iid) > 2147483647) return null;
  return liveIssueByIid(q, projectId, iid);
}

/**
 * The commit messages of the merge request's latest diff version, or none when its stored list has no closing word
 * (closingRegex's keywords; JSON keeps those letters as they are) at all: the database looks, so a merge of thousands
 * of commits that name no issue reads and parses no list.
 */
async function commitMessagesThatMayClose(q: Queries, mrId: number): Promise<string[]> {
  const commits = await latestDiffCommitsHolding(q, mrId, ['clos', 'fix', 'resolv']);
  return commits ? diffCommits({ commits }).map((c) => c.message) : [];
}

/**
 * The issues the merge request closes when merged, as `user` may see them (open or closed: closing code filters):
 * none unless its target is the default branch of its project (8.x).
 */
export async function closesIssues(ctx: AppContext, user: UserRow | null, mr: MergeRequestRow, target?: ProjectRow): Promise<IssueRow[]> {
  const project = target ?? (await lookupProjectAsync(ctx, mr.targetProjectId));
  if (!project || mr.targetBranch !== project.defaultBranch) return [];
  const messages = [mr.title, mr.description ?? '', ...(await commitMessagesThatMayClose(ctx.data, mr.id))];
  const base = ctx.externalUrl().replace(/\/+$/, '');
  const out: IssueRow[] = [];
  const seen = new Set<number>();
  const projects = new Map<string, ProjectRow | null>();
  for (const ref of closingReferences(messages.join('\n'), base)) {
    let p: ProjectRow | null = project;
    if (ref.projectPath !== null) {
      if (!projects.has(ref.projectPath)) projects.set(ref.projectPath, await lookupProjectAsync(ctx, ref.projectPath));
      p = projects.get(ref.projectPath) ?? null;
    }
    if (!p) continue;
    const issue = await findIssueByIid(ctx.data, p.id, ref.iid);
    if (!issue || seen.has(issue.id)) continue;
    if (!(await canReadIssuable(ctx, user, p, { type: 'Issue', confidential: issue.confidential, authorId: issue.authorId, assigneeId: issue.assigneeId }))) continue;
    seen.add(issue.id);
    out.push(issue);
  }
  return out;
}
