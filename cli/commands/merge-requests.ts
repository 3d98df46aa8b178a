/**
 * gantry mr list|show|create|update|close|reopen|merge|diff|commits|checkout|comment|todo|subscribe|unsubscribe.
 * The project may be left out inside a clone: it is then the project the clone's remote points at on this server.
 */
import type { Command } from 'commander';
import { ApiError, noteMorePages, type ApiClient, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, shortTime, type Column } from '../output.js';
import { isFinal, shortSha } from '../views/ci-format.js';
import { watchPipeline } from '../views/pipeline-watch.js';
import type { Change } from '../views/diff.js';
import { at, milestoneId, notesForReading, userId, type Note, type Todo } from './collaboration.js';
import { connectionFlags, listFlags, listOptions, positiveInt } from './common.js';
import { pipelineBuilds } from './pipelines.js';
import {
  findMergeRequest, headPipeline, mergeRequestRecord, mrsPath, renderMergeRequestShow, type MergeRequest,
} from './merge-request-shared.js';

const STATES = ['opened', 'closed', 'merged', 'all'];
const PROJECT_ARG = 'id or namespace/path (default: the project of the clone you are in)';
const MR_ARG = 'merge request number (3 or !3)';

/** Table columns of `mr list`. */
const COLUMNS: Column<MergeRequest>[] = [
  { header: 'iid', value: (m) => `!${m.iid}` },
  { header: 'title', value: (m) => m.title, max: 50 },
  { header: 'state', value: (m) => m.state },
  { header: 'branches', value: (m) => `${m.source_branch} → ${m.target_branch}`, max: 40 },
  { header: 'author', value: (m) => at(m.author) },
  { header: 'assignee', value: (m) => at(m.assignee) },
  { header: 'labels', value: (m) => m.labels, max: 30 },
  { header: 'updated', value: (m) => shortTime(m.updated_at) },
];

/** A commit as the commits endpoint lists it. */
interface Commit {
  id: string;
  short_id: string;
  title: string;
  author_name: string;
  created_at: string;
}

/** commander collector for a repeatable, comma-separable option (`--label a --label b,c`). */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** Print a created or changed merge request: its record, or JSON. */
function printMr(io: IO, mr: MergeRequest, json?: boolean): void {
  if (json) return printJson(io, mr);
  io.out(mergeRequestRecord(mr));
}

/** The `[project] <mr>` pair of a verb (main.ts fills the project from -R or the clone): the project and the merge request. */
async function target(_io: IO, api: ApiClient, project: string, mr: string): Promise<{ project: string; mr: MergeRequest }> {
  return { project, mr: await findMergeRequest(api, project, mr) };
}

/** A verb that addresses one merge request: `[project] <mr>` arguments (the project is optional inside a clone). */
function mrVerb(noun: Command, name: string, description: string): Command {
  return noun.command(name).description(description).argument('<project>', PROJECT_ARG).argument('<mr>', MR_ARG);
}

/** Turn the merge endpoint's refusals into what happened and what to do next. */
async function explainMergeError(e: unknown, api: ApiClient, project: string, mr: MergeRequest): Promise<unknown> {
  if (!(e instanceof ApiError)) return e;
  const ref = `merge request !${mr.iid} of ${project}`;
  if (e.status === 405) {
    const now = await findMergeRequest(api, project, String(mr.iid)).catch(() => mr);
    if (now.merge_status === 'cannot_be_merged') {
      return new CliError(`${ref} cannot be merged: ${e.message} (merge status: cannot_be_merged)`,
        `${now.source_branch} conflicts with ${now.target_branch}: merge ${now.target_branch} into it and resolve the conflicts (\`gantry mr checkout ${project} ${mr.iid}\`, \`git merge origin/${now.target_branch}\`), then push`);
    }
    return new CliError(`${ref} cannot be merged now: ${e.message} (merge status: ${now.merge_status})`,
      now.work_in_progress ? 'it is a work in progress: remove the WIP prefix from its title first' : 'the project may only merge after a successful pipeline: try --when-pipeline-succeeds');
  }
  if (e.status === 406) return new CliError(`${ref} is ${mr.state}: ${e.message}`, mr.state === 'closed' ? `reopen it first: \`gantry mr reopen ${project} ${mr.iid}\`` : 'there is nothing left to merge');
  if (e.status === 409) {
    return new CliError(`${ref}: ${e.message}`, `someone pushed to ${mr.source_branch}: review the new commits (\`gantry mr commits ${project} ${mr.iid}\`) and pass the new head with --sha, or leave --sha out`);
  }
  if (e.status === 401 || e.status === 403) {
    return new CliError(e.message, `you may not merge into ${mr.target_branch}: developers merge into unprotected branches, masters into protected ones`);
  }
  return e;
}

/** Adds the verbs of the `mr` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerMergeRequests(noun: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(noun.command('list').alias('ls').description('list the merge requests of a project'))
    .argument('<project>', PROJECT_ARG)
    .option('-s, --state <state>', 'opened, closed, merged or all (default: all)')
    .option('--iid <number>', 'only the merge request with this number')
    .option('--order-by <field>', 'created_at or updated_at')
    .option('--sort <dir>', 'asc or desc')
    .addHelpText('after', '\nExamples:\n  gantry mr list root/my-app --state merged --all\n  gantry mr list --state opened   # inside a clone')
    .action(async (project: string, o: Record<string, unknown>, cmd: Command) => {
      if (o.state !== undefined && !STATES.includes(String(o.state))) throw new UsageError(`--state must be opened, closed, merged or all, not "${o.state}"`);
      const api = client(cmd);
      const page = await api.list<MergeRequest>(mrsPath(project), {
        state: o.state === 'all' ? undefined : (o.state as string | undefined),
        iid: o.iid as string | undefined,
        order_by: o.orderBy as string | undefined,
        sort: o.sort as string | undefined,
      }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'merge requests' });
      noteMorePages(io, page);
    });

  mrVerb(noun, 'show', 'show a merge request: state, branches, merge status, its head pipeline, the description and the notes').alias('view')
    .option('-w, --watch', 'redraw the head pipeline until it finishes (live on a terminal)')
    .option('--interval <seconds>', 'refresh interval of --watch', positiveInt, 2)
    .option('--json', 'print the merge request JSON with `head_pipeline` added')
    .addHelpText('after', '\nExamples:\n  gantry mr show root/my-app 3\n  gantry mr show 3 --watch   # inside a clone')
    .action(async (first: string, second: string, o: { watch?: boolean; interval: number; json?: boolean }, cmd: Command) => {
      if (o.watch && o.json) throw new UsageError('give --watch or --json, not both');
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      const sourceProject = mr.source_project_id === null ? '(deleted project)' : mr.source_project_id !== mr.target_project_id
        ? (await api.get<{ path_with_namespace: string }>(`/projects/${mr.source_project_id}`)).path_with_namespace : undefined;
      const pipeline = await headPipeline(api, mr);
      if (o.json) return printJson(io, { ...mr, head_pipeline: pipeline });
      const notes = await api.list<Note>(`${mrsPath(project)}/${mr.id}/notes`, {}, { all: true });
      io.out(renderMergeRequestShow(mr, pipeline, sourceProject, await notesForReading(api, project, notes.items)));
      if (!o.watch) return;
      if (!pipeline) {
        io.err(`Merge request !${mr.iid} has no pipeline for its head commit; nothing to watch.\n`);
        return;
      }
      io.out('\n');
      const base = `/projects/${mr.source_project_id}`;
      const last = await watchPipeline(io, async () => {
        const p = await api.get<typeof pipeline>(`${base}/pipelines/${pipeline.id}`);
        return { pipeline: p, builds: await pipelineBuilds(api, String(mr.source_project_id), p) };
      }, { intervalMs: o.interval * 1000, live: io.stdoutIsTTY });
      let after = await findMergeRequest(api, project, String(mr.iid));
      // merging when the pipeline succeeds follows the pipeline's last build: give it a few refreshes to show up
      for (let i = 0; i < 10 && last.pipeline.status === 'success' && after.merge_when_build_succeeds && after.state !== 'merged'; i++) {
        await new Promise((r) => setTimeout(r, 500));
        after = await findMergeRequest(api, project, String(mr.iid));
      }
      io.out(`\nPipeline #${last.pipeline.id} ${last.pipeline.status}; merge request !${after.iid} is ${after.state}${after.state !== 'merged' ? ` (merge status: ${after.merge_status})` : ''}.\n`);
      if (isFinal(last.pipeline.status) && last.pipeline.status !== 'success') throw new CliError(`pipeline #${last.pipeline.id} ${last.pipeline.status}`, `see the failed build's log: gantry build trace ${project} <build id>`);
    });

  noun.command('create').alias('new')
    .description('propose a branch for merging (inside a clone: the current branch into the default branch)')
    .argument('[project]', 'id or namespace/path of the source project (default: the project of the clone you are in)')
    .option('-s, --source-branch <branch>', 'the branch to merge (default: the current branch)')
    .option('-t, --target-branch <branch>', 'the branch to merge into (default: the target project\'s default branch)')
    .option('--target-project <project>', 'propose to another project (default: the upstream of a fork, else the project itself)')
    .option('--title <title>', 'title (default: the commit\'s subject for one commit, else the branch name)')
    .option('-d, --description <text>', 'description (Markdown; "Closes #12" closes issue 12 on merge)')
    .option('--description-file <file>', 'read the description from a file (- for stdin)')
    .option('-a, --assignee <user>', 'username or id')
    .option('-m, --milestone <milestone>', 'milestone title or number (of the target project)')
    .option('-l, --label <labels>', 'label names, comma-separated or repeated (created when missing)', collect)
    .option('--push', 'push the branch first when the server lacks it or its newest commits (without asking)')
    .option('--no-push', 'never push (fail when the server lacks the branch)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', [
      '',
      'Examples:',
      '  git switch -c fix-login && git commit -am "Fix login" && gantry mr create --push',
      '  gantry mr create root/my-app --source-branch feature --target-branch stable --title "Backport"',
      '',
      'On a terminal, a branch the server lacks is offered for pushing, and your editor opens for the description',
      '(filled in from the commit) unless --description or --description-file is given.',
    ].join('\n'))
    .action(async (given: string | undefined, o: Record<string, unknown>, cmd: Command) => {
      const api = client(cmd);
      const { createMergeRequest } = await import('./merge-request-local.js');
      const { mr, project } = await createMergeRequest(io, api, given, o);
      io.err(`Created merge request !${mr.iid} in ${project}: ${mr.source_branch} → ${mr.target_branch}.\n`);
      printMr(io, mr, Boolean(o.json));
    });

  mrVerb(noun, 'update', 'change a merge request\'s title, description, target branch, assignee, milestone or labels').alias('edit')
    .option('--title <title>', 'new title')
    .option('-d, --description <text>', 'new description')
    .option('--description-file <file>', 'read the description from a file (- for stdin)')
    .option('-t, --target-branch <branch>', 'merge into this branch instead')
    .option('-a, --assignee <user>', 'username or id; none to unassign')
    .option('-m, --milestone <milestone>', 'milestone title or number; none to remove it')
    .option('-l, --label <labels>', 'label names, comma-separated or repeated (replaces the labels)', collect)
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry mr update root/my-app 3 --assignee bob --label review')
    .action(async (first: string, second: string, o: Record<string, unknown>, cmd: Command) => {
      const body: Record<string, unknown> = {};
      if (o.descriptionFile !== undefined) {
        if (o.description !== undefined) throw new UsageError('give --description or --description-file, not both');
        const { readTextFile } = await import('../editor.js');
        o.description = await readTextFile(io, String(o.descriptionFile));
      }
      if (o.title !== undefined) body.title = o.title;
      if (o.description !== undefined) body.description = o.description;
      if (o.targetBranch !== undefined) body.target_branch = o.targetBranch;
      if (o.label !== undefined) body.labels = (o.label as string[]).join(',');
      if (Object.keys(body).length === 0 && o.assignee === undefined && o.milestone === undefined) {
        throw new UsageError('nothing to change', 'give at least one of --title, --description, --target-branch, --assignee, --milestone or --label');
      }
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      if (o.assignee !== undefined) body.assignee_id = await userId(api, String(o.assignee));
      if (o.milestone !== undefined) body.milestone_id = await milestoneId(api, project, String(o.milestone));
      const updated = await api.put<MergeRequest>(`${mrsPath(project)}/${mr.id}`, body);
      io.err(`Updated merge request !${updated.iid} in ${project}.\n`);
      printMr(io, updated, Boolean(o.json));
    });

  const stateChange = (verb: 'close' | 'reopen', done: string, already: (m: MergeRequest) => boolean) =>
    mrVerb(noun, verb, `${verb} a merge request`)
      .option('--json', 'print the raw API JSON')
      .action(async (first: string, second: string, o: { json?: boolean }, cmd: Command) => {
        const api = client(cmd);
        const { project, mr } = await target(io, api, first, second);
        if (mr.state === 'merged') throw new CliError(`merge request !${mr.iid} of ${project} is merged; it cannot be ${verb === 'close' ? 'closed' : 'reopened'}`);
        if (already(mr)) {
          io.err(`Merge request !${mr.iid} of ${project} is already ${mr.state === 'closed' ? 'closed' : 'open'}.\n`);
          if (o.json) printJson(io, mr);
          return;
        }
        const updated = await api.put<MergeRequest>(`${mrsPath(project)}/${mr.id}`, { state_event: verb });
        io.err(`${done} merge request !${updated.iid} of ${project}.\n`);
        if (o.json) printJson(io, updated);
      });
  stateChange('close', 'Closed', (m) => m.state === 'closed');
  stateChange('reopen', 'Reopened', (m) => m.state === 'opened' || m.state === 'reopened');

  mrVerb(noun, 'merge', 'merge a merge request now, or when its pipeline succeeds')
    .option('--when-pipeline-succeeds', 'merge once the head pipeline succeeds (now, when there is none running)')
    .option('--message <text>', 'the merge commit message (default: GitLab\'s "Merge branch ..." message)')
    .option('--remove-source-branch', 'delete the source branch after the merge')
    .option('--sha <sha>', 'merge only if the source branch\'s head is this commit')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry mr merge root/my-app 3 --remove-source-branch\n  gantry mr merge 3 --when-pipeline-succeeds   # inside a clone')
    .action(async (first: string, second: string, o: Record<string, unknown>, cmd: Command) => {
      if (o.sha !== undefined && !/^[0-9a-f]{7,40}$/i.test(String(o.sha))) throw new UsageError(`--sha must be a commit id, not "${o.sha}"`);
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      const body: Record<string, unknown> = {};
      if (o.message !== undefined) body.merge_commit_message = o.message;
      if (o.removeSourceBranch) body.should_remove_source_branch = true;
      if (o.sha !== undefined) body.sha = o.sha;
      if (o.whenPipelineSucceeds) body.merge_when_build_succeeds = true;
      let merged: MergeRequest;
      try {
        merged = await api.put<MergeRequest>(`${mrsPath(project)}/${mr.id}/merge`, body);
      } catch (e) {
        throw await explainMergeError(e, api, project, mr);
      }
      if (merged.state === 'merged') io.err(`Merged merge request !${merged.iid} of ${project}: ${merged.source_branch} into ${merged.target_branch}.\n`);
      else if (merged.merge_when_build_succeeds) {
        io.err(`Merge request !${merged.iid} of ${project} will be merged when its pipeline succeeds (watch it: \`gantry mr show ${project} ${merged.iid} --watch\`).\n`);
      } else io.err(`Merge request !${merged.iid} of ${project} is ${merged.state}.\n`);
      if (o.json) printJson(io, merged);
    });

  mrVerb(noun, 'diff', 'show the changes of a merge request as a unified diff (through $PAGER on a terminal)')
    .option('--color <when>', 'always, never or auto (auto: on a terminal)', 'auto')
    .option('--no-pager', 'print straight to stdout, even on a terminal')
    .option('--json', 'print the merge request with its `changes` as JSON')
    .addHelpText('after', '\nExamples:\n  gantry mr diff root/my-app 3\n  gantry mr diff 3 | git apply   # inside a clone')
    .action(async (first: string, second: string, o: { color: string; pager: boolean; json?: boolean }, cmd: Command) => {
      if (!['always', 'never', 'auto'].includes(o.color)) throw new UsageError(`--color must be always, never or auto, not "${o.color}"`);
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      const withChanges = await api.get<MergeRequest & { changes: Change[]; overflow?: boolean }>(`${mrsPath(project)}/${mr.id}/changes`);
      if (o.json) return printJson(io, withChanges);
      const { colourDiff, page, pagerCommand, unifiedDiff } = await import('../views/diff.js');
      const text = unifiedDiff(withChanges.changes ?? []);
      if (withChanges.overflow) io.err(`warning: merge request !${mr.iid} changes too many files; only the first ${withChanges.changes.length} are shown\n`);
      if (text === '') {
        io.err(`Merge request !${mr.iid} of ${project} changes nothing.\n`);
        return;
      }
      const colour = o.color === 'always' || (o.color === 'auto' && io.stdoutIsTTY);
      const shown = colour ? colourDiff(text) : text;
      const pager = o.pager && io.stdoutIsTTY ? pagerCommand(io.env) : null;
      if (pager) await page(io, shown, pager);
      else io.out(shown);
    });

  mrVerb(noun, 'commits', 'list the commits of a merge request, newest first')
    .option('--json', 'print the raw API JSON')
    .action(async (first: string, second: string, o: { json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      const commits = await api.get<Commit[]>(`${mrsPath(project)}/${mr.id}/commits`);
      printList(io, commits, [
        { header: 'sha', value: (c) => c.short_id || shortSha(c.id) },
        { header: 'title', value: (c) => c.title, max: 60 },
        { header: 'author', value: (c) => c.author_name },
        { header: 'created', value: (c) => shortTime(c.created_at) },
      ], { json: o.json, noun: 'commits' });
    });

  mrVerb(noun, 'versions', 'list the diff versions of a merge request (one per push), newest first')
    .option('--json', 'print the raw API JSON')
    .action(async (first: string, second: string, o: { json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      type Version = { id: number; head_commit_sha: string | null; base_commit_sha: string | null; state: string; real_size: string | null; created_at: string };
      const versions = await api.get<Version[]>(`${mrsPath(project)}/${mr.id}/versions`);
      printList(io, versions, [
        { header: 'version', value: (v) => v.id },
        { header: 'head', value: (v) => (v.head_commit_sha ? shortSha(v.head_commit_sha) : '') },
        { header: 'base', value: (v) => (v.base_commit_sha ? shortSha(v.base_commit_sha) : '') },
        { header: 'state', value: (v) => v.state },
        { header: 'files', value: (v) => v.real_size ?? '' },
        { header: 'created', value: (v) => shortTime(v.created_at) },
      ], { json: o.json, noun: 'versions' });
    });

  mrVerb(noun, 'checkout', 'fetch a merge request\'s source branch (also from a fork) into a local branch and switch to it')
    .alias('co')
    .option('-b, --branch <name>', 'the local branch (default: the source branch\'s name)')
    .option('-f, --force', 'reset the local branch to the merge request\'s head when it has other commits')
    .addHelpText('after', '\nExample:\n  gantry mr checkout 3   # inside a clone of the target project')
    .action(async (first: string, second: string, o: { branch?: string; force?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      const { checkoutMergeRequest } = await import('./merge-request-local.js');
      const branch = await checkoutMergeRequest(io, api, mr, o);
      io.err(`Switched to branch ${branch} (merge request !${mr.iid} of ${project}: ${mr.source_branch} → ${mr.target_branch}).\n`);
    });

  mrVerb(noun, 'comment', 'comment on a merge request (opens your editor on a terminal when no --body is given)').alias('note')
    .option('-b, --body <text>', 'the comment (Markdown; mention people with @username)')
    .option('--body-file <file>', 'read the comment from a file (- for stdin)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry mr comment root/my-app 3 --body "LGTM, @alice please merge"')
    .action(async (first: string, second: string, o: Record<string, unknown>, cmd: Command) => {
      if (o.bodyFile !== undefined) {
        if (o.body !== undefined) throw new UsageError('give --body or --body-file, not both');
        const { readTextFile } = await import('../editor.js');
        o.body = await readTextFile(io, String(o.bodyFile));
      } else if (o.body === undefined && io.stdinIsTTY && io.stdoutIsTTY) {
        const { editText } = await import('../editor.js');
        o.body = await editText(io, 'comment');
      }
      if (o.body === undefined || String(o.body).trim() === '') throw new UsageError('the comment is empty', 'pass --body "<text>" or --body-file <file>');
      const api = client(cmd);
      const { project, mr } = await target(io, api, first, second);
      const note = await api.post<Note>(`${mrsPath(project)}/${mr.id}/notes`, { body: o.body });
      io.err(`Commented on merge request !${mr.iid} of ${project} (note ${note.id}).\n`);
      if (o.json) printJson(io, note);
    });

  const toggle = (verb: string, method: 'POST' | 'DELETE', suffix: string, done: string, already: string, description: string) =>
    mrVerb(noun, verb, description)
      .option('--json', 'print the raw API JSON')
      .action(async (first: string, second: string, o: { json?: boolean }, cmd: Command) => {
        const api = client(cmd);
        const { mr, project } = await target(io, api, first, second);
        const res = await api.request<MergeRequest | Todo | null>(method, `${mrsPath(project)}/${mr.id}/${suffix}`);
        if (res.status === 304 || !res.data) {
          io.err(`${already.replace('%', `!${mr.iid}`)}.\n`);
          return;
        }
        io.err(`${done.replace('%', `!${mr.iid}`)}${suffix === 'todo' ? ` (todo ${(res.data as Todo).id})` : ''}.\n`);
        if (o.json) printJson(io, res.data);
      });
  toggle('todo', 'POST', 'todo', 'Added merge request % to your todos', 'Merge request % is already on your todo list', 'add a merge request to your todo list (see `gantry todo list`)');
  toggle('subscribe', 'POST', 'subscription', 'Subscribed to merge request %', 'You are already subscribed to merge request %', 'get notified of a merge request\'s changes and comments');
  toggle('unsubscribe', 'DELETE', 'subscription', 'Unsubscribed from merge request %', 'You were not subscribed to merge request %', 'stop being notified of a merge request');
}
