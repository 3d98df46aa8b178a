/** gantry issue list|show|create|update|close|reopen|delete|move|comment|subscribe|unsubscribe|todo. */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import {
  at, findIssue, issuesPath, notesForReading, renderNotes, milestoneId, projectId, projectPathOf, userId, type AwardEmoji, type Issue, type Note, type Todo,
} from './collaboration.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

const STATES = ['opened', 'closed', 'all'];

/** Table columns; the project column only when the list spans projects. */
function columns(withProject: boolean): Column<Issue>[] {
  return [
    ...(withProject ? [{ header: 'project', value: (i: Issue) => projectPathOf(i.web_url) }] : []),
    { header: 'iid', value: (i) => `#${i.iid}` },
    { header: 'title', value: (i) => i.title, max: 50 },
    { header: 'state', value: (i) => i.state },
    { header: 'labels', value: (i) => i.labels, max: 30 },
    { header: 'assignee', value: (i) => at(i.assignee) },
    { header: 'milestone', value: (i) => i.milestone?.title ?? '' },
    { header: 'updated', value: (i) => shortTime(i.updated_at) },
  ];
}

/** Issue metadata as key/value lines. */
function issueRecord(i: Issue, awards?: AwardEmoji[]): string {
  return renderRecord([
    ['issue', `#${i.iid} ${i.title}`],
    ['id', i.id],
    ['state', i.state],
    ['author', at(i.author)],
    ['assignee', at(i.assignee) || 'none'],
    ['labels', i.labels.length ? i.labels : 'none'],
    ['milestone', i.milestone?.title ?? 'none'],
    ['due date', i.due_date ?? ''],
    ...(i.confidential ? [['confidential', true] as [string, unknown]] : []),
    ['subscribed', i.subscribed],
    ['comments', i.user_notes_count],
    ['votes', `+${i.upvotes} -${i.downvotes}`],
    ...(awards?.length ? [['awards', awardCounts(awards)] as [string, unknown]] : []),
    ['created', shortTime(i.created_at)],
    ['updated', shortTime(i.updated_at)],
    ...(i.web_url ? [['web url', i.web_url] as [string, unknown]] : []),
  ]);
}

/** Print a created or changed issue: its record, or JSON. */
function printIssue(io: IO, i: Issue, json?: boolean): void {
  if (json) return printJson(io, i);
  io.out(issueRecord(i));
}

/** Award counts by emoji name, most given first: `thumbsup 2, heart 1`. */
export function awardCounts(awards: AwardEmoji[]): string {
  const counts = new Map<string, number>();
  for (const a of awards) counts.set(a.name, (counts.get(a.name) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([name, n]) => `${name} ${n}`).join(', ');
}

/** The issue, its description, award counts and notes, as `gantry issue show` prints them. */
export function renderIssueShow(i: Issue, notes: Note[], awards: AwardEmoji[]): string {
  const parts = [issueRecord(i, awards).trimEnd()];
  parts.push('', i.description?.trim() ? i.description.trim() : '(no description)', '');
  parts.push(renderNotes(notes));
  return `${parts.join('\n')}\n`;
}

/** Options shared by create and update: the body of the attributes that were given. */
async function issueAttributes(api: ApiClient, project: string, o: Record<string, unknown>): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  if (o.title !== undefined) body.title = o.title;
  if (o.description !== undefined) body.description = o.description;
  if (o.assignee !== undefined) body.assignee_id = await userId(api, String(o.assignee));
  if (o.milestone !== undefined) body.milestone_id = await milestoneId(api, project, String(o.milestone));
  if (o.label !== undefined) body.labels = (o.label as string[]).join(',');
  if (o.dueDate !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(String(o.dueDate))) throw new UsageError(`--due-date must be YYYY-MM-DD, not "${o.dueDate}"`);
    body.due_date = o.dueDate;
  }
  if (o.confidential !== undefined) body.confidential = o.confidential;
  return body;
}

/** commander collector for a repeatable, comma-separable option (`--label a --label b,c`). */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** The attribute flags of create and update. */
function attributeFlags(cmd: Command, update: boolean): Command {
  return cmd
    .option('--title <title>', update ? 'new title' : 'title (required)')
    .option('-d, --description <text>', 'description (Markdown; mention people with @username)')
    .option('--description-file <file>', 'read the description from a file (- for stdin)')
    .option('-a, --assignee <user>', `username or id${update ? '; none to unassign' : ''}`)
    .option('-m, --milestone <milestone>', `milestone title or number${update ? '; none to remove it' : ''}`)
    .option('-l, --label <labels>', `label names, comma-separated or repeated${update ? ' (replaces the labels)' : ' (created when missing)'}`, collect)
    .option('--due-date <date>', 'YYYY-MM-DD')
    .option('--confidential', 'visible only to reporters and up, the author and the assignee')
    .option('--json', 'print the raw API JSON');
}

/** Adds the verbs of the `issue` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerIssues(issue: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(issue.command('list').alias('ls').description('list the issues of a project, of a group, or (with neither) the ones you created'))
    .argument('[project]', 'id or namespace/path')
    .option('--group <group>', 'the issues of a group\'s projects (id or path)')
    .option('-s, --state <state>', 'opened, closed or all (default: all)')
    .option('-l, --label <labels>', 'only issues with these labels (comma-separated or repeated; any of them, all of them for a group)', collect)
    .option('-m, --milestone <title>', 'only issues in this milestone')
    .option('--iid <number>', 'only the issue with this number')
    .option('--order-by <field>', 'created_at or updated_at')
    .option('--sort <dir>', 'asc or desc')
    .addHelpText('after', '\nExamples:\n  gantry issue list root/my-app --state opened --label bug\n  gantry issue list --group platform --milestone v1.0 --all\n  gantry issue list')
    .action(async (project: string | undefined, o: Record<string, unknown>, cmd: Command) => {
      if (project && o.group) throw new UsageError('give a project or --group, not both');
      if (o.state !== undefined && !STATES.includes(String(o.state))) throw new UsageError(`--state must be opened, closed or all, not "${o.state}"`);
      if (o.milestone !== undefined && !project && !o.group) throw new UsageError('--milestone needs a project or --group');
      const path = project ? issuesPath(project) : o.group ? `/groups/${idOrPath(String(o.group))}/issues` : '/issues';
      const page = await client(cmd).list<Issue>(path, {
        state: o.state === 'all' ? undefined : (o.state as string | undefined),
        labels: o.label ? (o.label as string[]).join(',') : undefined,
        milestone: o.milestone as string | undefined,
        iid: o.iid as string | undefined,
        order_by: o.orderBy as string | undefined,
        sort: o.sort as string | undefined,
      }, listOptions(o));
      printList(io, page.items, columns(!project), { json: Boolean(o.json), noun: 'issues' });
      noteMorePages(io, page);
    });

  issue
    .command('show')
    .alias('view')
    .description('show an issue with its description, award counts and notes')
    .argument('<project>', 'id or namespace/path')
    .argument('<issue>', 'issue number (12 or #12)')
    .option('--json', 'print the issue JSON with `notes` and `award_emoji` added')
    .action(async (project: string, iid: string, o: { json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const i = await findIssue(api, project, iid);
      const base = `${issuesPath(project)}/${i.id}`;
      const [notes, awards] = await Promise.all([
        api.list<Note>(`${base}/notes`, {}, { all: true }),
        api.list<AwardEmoji>(`${base}/award_emoji`, {}, { all: true }),
      ]);
      if (o.json) return printJson(io, { ...i, notes: notes.items, award_emoji: awards.items });
      io.out(renderIssueShow(i, await notesForReading(api, project, notes.items), awards.items));
    });

  attributeFlags(issue.command('create').alias('new').description('file an issue (opens your editor for the description on a terminal when none is given)'), false)
    .argument('<project>', 'id or namespace/path')
    .addHelpText('after', [
      '',
      'Examples:',
      '  gantry issue create root/my-app --title "Crash on save" --label bug --assignee alice',
      '  gantry issue create root/my-app --title "Docs" --description-file notes.md',
      '',
      'Without --description or --description-file, and on a terminal, $GANTRY_EDITOR, $VISUAL or $EDITOR opens for it.',
    ].join('\n'))
    .action(async (project: string, o: Record<string, unknown>, cmd: Command) => {
      if (o.title === undefined || String(o.title).trim() === '') throw new UsageError('an issue needs a title', 'pass --title "<title>"');
      await resolveText(io, o, 'description');
      const api = client(cmd);
      const created = await api.post<Issue>(issuesPath(project), await issueAttributes(api, project, o));
      io.err(`Created issue #${created.iid} in ${project}.\n`);
      printIssue(io, created, Boolean(o.json));
    });

  attributeFlags(issue.command('update').alias('edit').description('change an issue\'s title, description, assignee, milestone, labels or due date'), true)
    .argument('<project>', 'id or namespace/path')
    .argument('<issue>', 'issue number (12 or #12)')
    .option('--no-confidential', 'make it visible to everyone who can see the project\'s issues')
    .addHelpText('after', '\nExamples:\n  gantry issue update root/my-app 12 --assignee bob --milestone v1.0\n  gantry issue update root/my-app 12 --label bug,ui --due-date 2026-12-01')
    .action(async (project: string, iid: string, o: Record<string, unknown>, cmd: Command) => {
      if (o.descriptionFile !== undefined) await resolveText(io, o, 'description', false);
      const api = client(cmd);
      const body = await issueAttributes(api, project, o);
      if (Object.keys(body).length === 0) {
        throw new UsageError('nothing to change', 'give at least one of --title, --description, --assignee, --milestone, --label, --due-date or --confidential');
      }
      const i = await findIssue(api, project, iid);
      const updated = await api.put<Issue>(`${issuesPath(project)}/${i.id}`, body);
      io.err(`Updated issue #${updated.iid} in ${project}.\n`);
      printIssue(io, updated, Boolean(o.json));
    });

  const stateChange = (verb: 'close' | 'reopen', event: string, done: string, already: string) =>
    issue
      .command(verb)
      .description(`${verb} an issue`)
      .argument('<project>', 'id or namespace/path')
      .argument('<issue>', 'issue number (12 or #12)')
      .option('--json', 'print the raw API JSON')
      .action(async (project: string, iid: string, o: { json?: boolean }, cmd: Command) => {
        const api = client(cmd);
        const i = await findIssue(api, project, iid);
        if (i.state === already) {
          io.err(`Issue #${i.iid} in ${project} is already ${already}.\n`);
          if (o.json) printJson(io, i);
          return;
        }
        const updated = await api.put<Issue>(`${issuesPath(project)}/${i.id}`, { state_event: event });
        io.err(`${done} issue #${updated.iid} in ${project}.\n`);
        if (o.json) printJson(io, updated);
      });
  stateChange('close', 'close', 'Closed', 'closed');
  stateChange('reopen', 'reopen', 'Reopened', 'opened');

  issue
    .command('delete')
    .alias('rm')
    .description('delete an issue (project owners and administrators)')
    .argument('<project>', 'id or namespace/path')
    .argument('<issue>', 'issue number (12 or #12)')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (project: string, iid: string, o: { yes?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const i = await findIssue(api, project, iid);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('deleting needs confirmation', 'add --yes');
        if (!(await confirm(io, `Delete issue #${i.iid} "${i.title}" of ${project}?`))) throw new CliError('not deleted');
      }
      await api.delete(`${issuesPath(project)}/${i.id}`);
      io.err(`Deleted issue #${i.iid} of ${project}.\n`);
    });

  issue
    .command('move')
    .description('move an issue to another project (the old one is closed with a note pointing to the new one)')
    .argument('<project>', 'id or namespace/path')
    .argument('<issue>', 'issue number (12 or #12)')
    .argument('<to-project>', 'id or namespace/path of the target project')
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, iid: string, to: string, o: { json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const i = await findIssue(api, project, iid);
      const moved = await api.post<Issue>(`${issuesPath(project)}/${i.id}/move`, { to_project_id: await projectId(api, to) });
      io.err(`Moved issue #${i.iid} of ${project} to ${to} as #${moved.iid}.\n`);
      if (o.json) printJson(io, moved);
    });

  issue
    .command('comment')
    .alias('note')
    .description('comment on an issue (opens your editor on a terminal when no --body is given)')
    .argument('<project>', 'id or namespace/path')
    .argument('<issue>', 'issue number (12 or #12)')
    .option('-b, --body <text>', 'the comment (Markdown; mention people with @username)')
    .option('--body-file <file>', 'read the comment from a file (- for stdin)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry issue comment root/my-app 12 --body "Fixed in 1a2b3c, @alice please check"')
    .action(async (project: string, iid: string, o: Record<string, unknown>, cmd: Command) => {
      await resolveText(io, o, 'body');
      if (o.body === undefined || String(o.body).trim() === '') throw new UsageError('the comment is empty', 'pass --body "<text>" or --body-file <file>');
      const api = client(cmd);
      const i = await findIssue(api, project, iid);
      const note = await api.post<Note>(`${issuesPath(project)}/${i.id}/notes`, { body: o.body });
      io.err(`Commented on issue #${i.iid} of ${project} (note ${note.id}).\n`);
      if (o.json) printJson(io, note);
    });

  const toggle = (verb: string, method: 'POST' | 'DELETE', suffix: string, done: string, already: string, description: string) =>
    issue
      .command(verb)
      .description(description)
      .argument('<project>', 'id or namespace/path')
      .argument('<issue>', 'issue number (12 or #12)')
      .option('--json', 'print the raw API JSON')
      .action(async (project: string, iid: string, o: { json?: boolean }, cmd: Command) => {
        const api = client(cmd);
        const i = await findIssue(api, project, iid);
        const res = await api.request<Issue | Todo | null>(method, `${issuesPath(project)}/${i.id}/${suffix}`);
        if (res.status === 304 || !res.data) {
          io.err(`${already.replace('%', `#${i.iid}`)}.\n`);
          return;
        }
        io.err(`${done.replace('%', `#${i.iid}`)}${suffix === 'todo' ? ` (todo ${(res.data as Todo).id})` : ''}.\n`);
        if (o.json) printJson(io, res.data);
      });
  toggle('subscribe', 'POST', 'subscription', 'Subscribed to issue %', 'You are already subscribed to issue %', 'get notified of an issue\'s changes and comments');
  toggle('unsubscribe', 'DELETE', 'subscription', 'Unsubscribed from issue %', 'You were not subscribed to issue %', 'stop being notified of an issue');
  toggle('todo', 'POST', 'todo', 'Added issue % to your todos', 'Issue % is already on your todo list', 'add an issue to your todo list (see `gantry todo list`)');
}

/**
 * Fill o[field] (description or body) from --<field>-file, or from the editor when neither was given and stdin is a
 * terminal (as gh does); otherwise leave it out.
 */
async function resolveText(io: IO, o: Record<string, unknown>, field: 'description' | 'body', editor = true): Promise<void> {
  const file = o[`${field}File`];
  if (file !== undefined) {
    if (o[field] !== undefined) throw new UsageError(`give --${field} or --${field}-file, not both`);
    const { readTextFile } = await import('../editor.js');
    o[field] = await readTextFile(io, String(file));
    return;
  }
  if (o[field] !== undefined || !editor || !io.stdinIsTTY || !io.stdoutIsTTY) return;
  const { editText } = await import('../editor.js');
  const text = await editText(io, field === 'body' ? 'comment' : 'description');
  if (text !== '') o[field] = text;
}
