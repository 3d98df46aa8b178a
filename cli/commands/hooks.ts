/** gantry hook list|add|remove: a project's web hooks (masters and owners). */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

/** A project hook as the API shows it (the secret token never comes back). */
export interface ProjectHook {
  id: number;
  url: string;
  project_id: number;
  created_at: string;
  push_events: boolean;
  tag_push_events: boolean;
  issues_events: boolean;
  merge_requests_events: boolean;
  note_events: boolean;
  build_events: boolean;
  pipeline_events: boolean;
  wiki_page_events: boolean;
  enable_ssl_verification: boolean;
}

/** The event switches: CLI flag name -> API field, in the order they are listed. */
export const HOOK_EVENT_FLAGS = [
  ['push', 'push_events'],
  ['tag-push', 'tag_push_events'],
  ['issues', 'issues_events'],
  ['merge-requests', 'merge_requests_events'],
  ['note', 'note_events'],
  ['build', 'build_events'],
  ['pipeline', 'pipeline_events'],
  ['wiki-page', 'wiki_page_events'],
] as const;

/** The events a hook is switched on for, by their flag names (push, tag-push, ...). */
export function hookEvents(h: ProjectHook): string[] {
  return HOOK_EVENT_FLAGS.filter(([, field]) => h[field]).map(([flag]) => flag);
}

const COLUMNS: Column<ProjectHook>[] = [
  { header: 'id', value: (h) => h.id },
  { header: 'url', value: (h) => h.url, max: 60 },
  { header: 'events', value: (h) => hookEvents(h).join(',') || '-' },
  { header: 'ssl verify', value: (h) => h.enable_ssl_verification },
  { header: 'created', value: (h) => shortTime(h.created_at) },
];

/** Show one hook as key/value lines, or JSON. */
function printHook(io: IO, h: ProjectHook, json?: boolean): void {
  if (json) return printJson(io, h);
  io.out(renderRecord([
    ['id', h.id],
    ['url', h.url],
    ['events', hookEvents(h).join(', ') || 'none'],
    ['ssl verify', h.enable_ssl_verification],
    ['created', shortTime(h.created_at)],
  ]));
}

const camel = (flag: string) => flag.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** Registers the `hook` noun. */
export function registerHooks(program: Command, factory: Factory): void {
  const { io } = factory;
  const hook = program.command('hook').alias('hooks').description('list, add and remove a project\'s web hooks (masters and owners)');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(hook.command('list').alias('ls').description('list the hooks of a project'))
    .argument('<project>', 'id or namespace/path')
    .action(async (id: string, o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<ProjectHook>(`/projects/${idOrPath(id)}/hooks`, {}, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'hooks' });
      noteMorePages(io, page);
    });

  const add = hook
    .command('add')
    .alias('create')
    .description('add a hook: the URL gets a POST with a JSON payload for each chosen event (push only, by default)')
    .argument('<project>', 'id or namespace/path')
    .argument('<url>', 'http:// or https:// URL to post to');
  for (const [flag] of HOOK_EVENT_FLAGS) {
    const what = flag.replace('-', ' ');
    add.option(`--${flag}-events`, `send ${what} events${flag === 'push' ? ' (default)' : ''}`).option(`--no-${flag}-events`, `do not send ${what} events`);
  }
  add
    .option('--secret-token <token>', 'secret sent in the X-Gitlab-Token header of every delivery (stored, never shown)')
    .option('--no-ssl-verification', 'do not verify the receiver\'s TLS certificate')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', [
      '',
      'Examples:',
      '  gantry hook add root/my-app https://ci.example.com/hook --secret-token s3cret',
      '  gantry hook add 42 https://chat.example.com/gitlab --no-push-events --tag-push-events --pipeline-events',
      '',
      'The hook\'s secret is --secret-token; --token is the global option for your own API token.',
    ].join('\n'))
    .action(async (id: string, url: string, o: Record<string, unknown>, cmd: Command) => {
      if (!/^https?:\/\/\S+$/i.test(url)) throw new UsageError(`"${url}" is not an http:// or https:// URL`);
      const body: Record<string, unknown> = { url };
      for (const [flag, field] of HOOK_EVENT_FLAGS) {
        const v = o[`${camel(flag)}Events`];
        if (v !== undefined) body[field] = v;
      }
      if (o.secretToken !== undefined) body.token = o.secretToken;
      if (o.sslVerification === false) body.enable_ssl_verification = false;
      const created = await client(cmd).post<ProjectHook>(`/projects/${idOrPath(id)}/hooks`, body);
      io.err(`Added hook ${created.id} to ${id}.\n`);
      printHook(io, created, Boolean(o.json));
    });

  hook
    .command('remove')
    .alias('rm')
    .alias('delete')
    .description('remove a hook (deliveries not sent yet are dropped)')
    .argument('<project>', 'id or namespace/path')
    .argument('<hook-id>', 'hook id (see `gantry hook list`)')
    .option('--json', 'print the removed hook as JSON')
    .action(async (id: string, hookId: string, o: { json?: boolean }, cmd: Command) => {
      if (!/^\d+$/.test(hookId)) throw new UsageError(`hook id must be a number, not "${hookId}"`, `run \`gantry hook list ${id}\``);
      const removed = await client(cmd).delete<ProjectHook | null>(`/projects/${idOrPath(id)}/hooks/${hookId}`);
      if (!removed) {
        io.err(`No hook ${hookId} in ${id}; nothing to remove.\n`);
        return;
      }
      io.err(`Removed hook ${removed.id} (${removed.url}).\n`);
      if (o.json) printJson(io, removed);
    });
}
