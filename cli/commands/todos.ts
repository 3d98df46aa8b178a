/** gantry todo list|done: your todo list (issues assigned to you, mentions, todos you added). */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import { printJson, printList, shortTime, type Column } from '../output.js';
import { at, projectId, userId, type Todo } from './collaboration.js';
import { connectionFlags, listFlags, listOptions } from './common.js';

const ACTIONS = ['assigned', 'mentioned', 'build_failed', 'marked', 'approval_required'];
const TYPES: Record<string, string> = { issue: 'Issue', mergerequest: 'MergeRequest', merge_request: 'MergeRequest', mr: 'MergeRequest' };

/** `Issue #3` / `MR !7`. */
const targetRef = (t: Todo) => (t.target_type === 'MergeRequest' ? `!${t.target?.iid ?? ''}` : `#${t.target?.iid ?? ''}`);

const COLUMNS: Column<Todo>[] = [
  { header: 'id', value: (t) => t.id },
  { header: 'project', value: (t) => t.project?.path_with_namespace },
  { header: 'target', value: targetRef },
  { header: 'action', value: (t) => t.action_name },
  { header: 'author', value: (t) => at(t.author) },
  { header: 'title', value: (t) => t.target?.title, max: 40 },
  { header: 'body', value: (t) => (t.body === t.target?.title ? '' : t.body), max: 40 },
  { header: 'created', value: (t) => shortTime(t.created_at) },
];

/** Adds the verbs of the `todo` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerTodos(todo: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(todo.command('list').alias('ls').description('list your pending todos (or --state done)'))
    .option('--action <action>', ACTIONS.join(', '))
    .option('--author <user>', 'todos caused by this user (username or id)')
    .option('-p, --project <project>', 'todos on this project (id or namespace/path)')
    .option('-s, --state <state>', 'pending (default) or done')
    .option('--type <type>', 'issue or merge_request')
    .addHelpText('after', '\nExamples:\n  gantry todo list\n  gantry todo list --action mentioned --project root/my-app\n  gantry todo list --state done --all --json')
    .action(async (o: Record<string, unknown>, cmd: Command) => {
      if (o.action !== undefined && !ACTIONS.includes(String(o.action))) throw new UsageError(`--action must be one of ${ACTIONS.join(', ')}`);
      if (o.state !== undefined && !['pending', 'done'].includes(String(o.state))) throw new UsageError('--state must be pending or done');
      const type = o.type === undefined ? undefined : TYPES[String(o.type).toLowerCase().replace(/[-\s]/g, '_')] ?? TYPES[String(o.type).toLowerCase()];
      if (o.type !== undefined && !type) throw new UsageError('--type must be issue or merge_request');
      const api = client(cmd);
      const page = await api.list<Todo>('/todos', {
        action: o.action as string | undefined,
        author_id: o.author !== undefined ? await userId(api, String(o.author)) : undefined,
        project_id: o.project !== undefined ? await projectId(api, String(o.project)) : undefined,
        state: o.state as string | undefined,
        type,
      }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: o.state === 'done' ? 'done todos' : 'pending todos' });
      noteMorePages(io, page);
    });

  todo
    .command('done')
    .description('mark a todo done, or every pending todo with --all')
    .argument('[id]', 'todo id (see `gantry todo list`)')
    .option('--all', 'mark every pending todo done')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry todo done 42\n  gantry todo done --all')
    .action(async (id: string | undefined, o: { all?: boolean; json?: boolean }, cmd: Command) => {
      if (o.all && id !== undefined) throw new UsageError('give a todo id or --all, not both');
      if (o.all) {
        const count = await client(cmd).delete<number>('/todos');
        io.err(`Marked ${count} todo${count === 1 ? '' : 's'} done.\n`);
        if (o.json) printJson(io, { count });
        return;
      }
      if (id === undefined) throw new UsageError('which todo?', 'give its id (see `gantry todo list`) or --all');
      if (!/^\d+$/.test(id)) throw new UsageError(`todo id must be a number, not "${id}"`, 'see `gantry todo list`');
      const done = await client(cmd).delete<Todo>(`/todos/${id}`);
      io.err(`Marked todo ${done.id} done (${done.target_type === 'MergeRequest' ? 'merge request' : 'issue'} ${targetRef(done)} of ${done.project.path_with_namespace}).\n`);
      if (o.json) printJson(io, done);
    });
}
