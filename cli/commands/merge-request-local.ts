/**
 * The `mr` verbs that work with the clone they run in: `mr create` (source = the current branch, target = the
 * project's default branch, offers to push the branch first, as `gh pr create` does) and `mr checkout` (fetch the
 * source branch, also from a fork, into a local branch and switch to it).
 */
import type { ApiClient } from '../client.js';
import { ApiError } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { resolveProject } from '../current-project.js';
import type { IO } from '../io.js';
import {
  currentBranch, gitConfig, gitOrFail, insideClone, localBranchHead, runGit, serverRemotes, tokenAuthEnv, type ServerRemote,
} from '../local-git.js';
import { confirm } from '../prompt.js';
import { milestoneId, userId } from './collaboration.js';
import { idOrPath } from './common.js';
import {
  mrsPath, serverBranchHead, titleFromBranch, type MergeRequest, type ProjectInfo,
} from './merge-request-shared.js';

/** Options of `mr create` as commander parses them. */
export interface CreateOptions {
  sourceBranch?: string;
  targetBranch?: string;
  targetProject?: string;
  title?: string;
  description?: string;
  descriptionFile?: string;
  assignee?: string;
  milestone?: string;
  label?: string[];
  push?: boolean;
  json?: boolean;
}

/** The remote of the clone that points at `project` (by path, case-insensitive), if any. */
async function remoteFor(io: IO, api: ApiClient, project: ProjectInfo): Promise<ServerRemote | null> {
  if (!(await insideClone(io))) return null;
  const found = await serverRemotes(io, api.connection.url);
  return found.find((r) => r.project.toLowerCase() === project.path_with_namespace.toLowerCase()) ?? null;
}

/**
 * Make sure the server has the local branch's commits: push when asked (--push, or yes on a terminal); a branch the
 * server does not have at all is an error otherwise, one that is behind only a warning.
 */
async function ensurePushed(io: IO, api: ApiClient, o: CreateOptions, project: ProjectInfo, remote: ServerRemote | null, branch: string): Promise<void> {
  const local = await localBranchHead(io, branch);
  if (!local) return; // not a local branch: it has to be on the server already (the API says so if not)
  const onServer = await serverBranchHead(api, project.id, branch);
  if (onServer === local) return;
  const where = project.path_with_namespace;
  if (onServer !== null) {
    const ahead = (await runGit(io, ['merge-base', '--is-ancestor', onServer, local])).code === 0;
    if (!ahead) return; // the server has commits the clone lacks (or they diverged): the merge request uses the server's
  }
  const missing = onServer === null;
  let push = o.push;
  if (push === undefined && io.stdinIsTTY && io.stderrIsTTY) {
    const question = missing ? `Branch ${branch} is not on ${where} yet. Push it` : `Branch ${branch} has commits that are not on ${where}. Push them`;
    push = await confirm(io, `${question}${remote ? ` to ${remote.name}` : ''} first?`);
  }
  if (push) {
    if (!remote) {
      throw new CliError(`no remote of this clone points at ${where}, so ${branch} cannot be pushed`, `add one (\`git remote add gantry ${project.http_url_to_repo}\`) and try again`);
    }
    io.err(`Pushing ${branch} to ${remote.name}...\n`);
    await gitOrFail(io, ['push', '--set-upstream', remote.name, `refs/heads/${branch}:refs/heads/${branch}`],
      'check your credentials for the remote (the git credential helper), or push yourself and use --no-push', { showProgress: true });
    return;
  }
  if (missing) {
    throw new CliError(`branch ${branch} is not on ${where}`, `push it first: pass --push, or run \`git push -u ${remote?.name ?? '<remote>'} ${branch}\``);
  }
  io.err(`warning: ${branch} has local commits that are not on ${where}; the merge request shows the server's ${branch} (pass --push to push them)\n`);
}

/** GitLab's defaults for a new merge request: one commit gives title and description; several, the branch name. */
async function defaultText(api: ApiClient, project: ProjectInfo, from: string, to: string): Promise<{ title: string; description?: string }> {
  try {
    const c = await api.get<{ commits: Array<{ title: string; message: string }> }>(`/projects/${project.id}/repository/compare`, { from, to });
    if (c.commits.length === 1) {
      const [first, ...rest] = c.commits[0]!.message.split('\n');
      const body = rest.join('\n').trim();
      return { title: (first ?? '').trim() || c.commits[0]!.title, ...(body ? { description: body } : {}) };
    }
  } catch {
    /* no comparison (the target branch is not in a fork, say): the branch name will do */
  }
  return { title: titleFromBranch(to) };
}

/** Description from --description-file, or the editor on a terminal (with `initial` filled in), or `initial`. */
async function descriptionOf(io: IO, o: CreateOptions, initial: string | undefined): Promise<string | undefined> {
  if (o.descriptionFile !== undefined) {
    if (o.description !== undefined) throw new UsageError('give --description or --description-file, not both');
    const { readTextFile } = await import('../editor.js');
    return readTextFile(io, o.descriptionFile);
  }
  if (o.description !== undefined) return o.description;
  if (!io.stdinIsTTY || !io.stdoutIsTTY) return initial;
  const { editText } = await import('../editor.js');
  const text = await editText(io, 'merge request description', initial ?? '');
  return text === '' ? undefined : text;
}

/** `gantry mr create`: resolve the defaults from the clone, push if needed, create; returns the new merge request. */
export async function createMergeRequest(io: IO, api: ApiClient, given: string | undefined, o: CreateOptions): Promise<{ mr: MergeRequest; project: string }> {
  const inClone = await insideClone(io);
  let projectRef = given;
  let remote: ServerRemote | null = null;
  if (projectRef === undefined) ({ project: projectRef, remote } = await resolveProject(io, api.connection.url, undefined));
  let source = o.sourceBranch;
  if (source === undefined) {
    if (!inClone) throw new UsageError('which branch? give --source-branch (outside a clone there is no current branch)');
    const current = await currentBranch(io);
    if (!current) throw new UsageError('HEAD is detached: there is no current branch to propose', 'switch to a branch (`git switch -c my-feature`) or give --source-branch');
    source = current;
  }
  const project = await api.get<ProjectInfo>(`/projects/${idOrPath(projectRef)}`);
  if (inClone && !remote) remote = await remoteFor(io, api, project);
  // A fork proposes to its upstream unless told otherwise (as GitLab's new merge request page and `gh pr create` do).
  const targetProject = o.targetProject !== undefined
    ? await api.get<ProjectInfo>(`/projects/${idOrPath(o.targetProject)}`)
    : project.forked_from_project ? await api.get<ProjectInfo>(`/projects/${project.forked_from_project.id}`) : project;
  const target = o.targetBranch ?? targetProject.default_branch;
  if (!target) throw new CliError(`${targetProject.path_with_namespace} has no default branch (its repository is empty)`, 'push a branch to it first, or give --target-branch');
  if (source === target && targetProject.id === project.id) {
    throw new UsageError(`the source and target branch are both ${source}`, 'commit on a new branch (`git switch -c my-feature`) or give --source-branch / --target-branch');
  }
  if (inClone) await ensurePushed(io, api, o, project, remote, source);

  const defaults = o.title === undefined || (o.description === undefined && o.descriptionFile === undefined)
    ? await defaultText(api, project, target, source) : { title: o.title };
  const description = await descriptionOf(io, o, defaults.description);
  const body: Record<string, unknown> = {
    source_branch: source,
    target_branch: target,
    title: o.title ?? defaults.title,
    ...(description !== undefined ? { description } : {}),
    ...(targetProject.id !== project.id ? { target_project_id: targetProject.id } : {}),
  };
  if (o.assignee !== undefined) body.assignee_id = await userId(api, o.assignee);
  if (o.milestone !== undefined) body.milestone_id = await milestoneId(api, targetProject.path_with_namespace, o.milestone);
  if (o.label !== undefined) body.labels = o.label.join(',');
  try {
    const mr = await api.post<MergeRequest>(mrsPath(project.id), body);
    return { mr, project: targetProject.path_with_namespace };
  } catch (e) {
    if (e instanceof ApiError && e.status === 409) {
      throw new CliError(e.message, `an open merge request from ${source} into ${target} exists already: \`gantry mr list ${targetProject.path_with_namespace} --state opened\``);
    }
    throw e;
  }
}

/** `gantry mr checkout`: fetch the source branch of `mr` into a local branch and switch to it; returns the branch name. */
export async function checkoutMergeRequest(io: IO, api: ApiClient, mr: MergeRequest, opts: { branch?: string; force?: boolean }): Promise<string> {
  if (!(await insideClone(io))) throw new UsageError('not inside a git clone', 'clone the project first (`git clone "$(gantry repo clone-url <project>)"`), then run this there');
  if (mr.source_project_id === null) throw new CliError(`the source project of merge request !${mr.iid} was deleted; there is nothing to fetch`);
  const source = await api.get<ProjectInfo>(`/projects/${mr.source_project_id}`);
  const fromFork = mr.source_project_id !== mr.target_project_id;
  const remote = await remoteFor(io, api, source);
  // A remote of the clone fetches with its own credentials; a project no remote names is fetched by URL with the token.
  const from = remote ? remote.name : source.http_url_to_repo;
  const env = remote ? undefined : tokenAuthEnv(source.http_url_to_repo, (await api.fresh()).token, Boolean(api.connection.oauth));
  const refspec = remote ? `+refs/heads/${mr.source_branch}:refs/remotes/${remote.name}/${mr.source_branch}` : `refs/heads/${mr.source_branch}`;
  io.err(`Fetching ${mr.source_branch} from ${remote ? remote.name : source.path_with_namespace}...\n`);
  const fetchHint = mr.state === 'merged' ? 'the source branch may have been removed after the merge' : 'check that the source branch still exists and that you can read its project';
  await gitOrFail(io, ['fetch', '--quiet', from, refspec], fetchHint, { env });
  const head = remote ? `refs/remotes/${remote.name}/${mr.source_branch}` : 'FETCH_HEAD';
  const sha = await gitOrFail(io, ['rev-parse', '--verify', `${head}^{commit}`]);

  let branch = opts.branch ?? mr.source_branch;
  const existing = await localBranchHead(io, branch);
  if (existing && opts.branch === undefined && fromFork && (await gitConfig(io, `branch.${branch}.merge`)) !== `refs/heads/${mr.source_branch}`) {
    // a branch of that name tracks something else: name the fork's one after its namespace (as gh does)
    branch = `${source.namespace?.path ?? `project-${source.id}`}/${mr.source_branch}`;
  }
  const current = await localBranchHead(io, branch);
  if (current === null) {
    await gitOrFail(io, ['switch', '--quiet', '--no-track', '-c', branch, sha], 'commit or stash your changes first');
  } else {
    await gitOrFail(io, ['switch', '--quiet', branch], 'commit or stash your changes first');
    if (current !== sha) {
      const ff = await runGit(io, ['merge', '--ff-only', '--quiet', sha]);
      if (ff.code !== 0) {
        if (!opts.force) {
          throw new CliError(`your local ${branch} has commits that are not in merge request !${mr.iid}`,
            `keep them on another branch, or pass --force to reset ${branch} to the merge request's head`);
        }
        await gitOrFail(io, ['reset', '--quiet', '--hard', sha]);
      }
    }
  }
  // Track the source branch so `git pull` and `git push` go to it (through the fork's URL for a fork).
  await gitOrFail(io, ['config', `branch.${branch}.remote`, remote ? remote.name : source.http_url_to_repo]);
  await gitOrFail(io, ['config', `branch.${branch}.merge`, `refs/heads/${mr.source_branch}`]);
  return branch;
}
