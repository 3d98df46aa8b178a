/**
 * gantry system-hook list|add|test|remove: the instance's system hooks (administrators only; GitLab 8.13 /hooks). A
 * system hook gets a POST (X-Gitlab-Event: System Hook) for project, user, group, membership and key events, and for
 * pushes (--push-events, on by default) and tag pushes (--tag-push-events).
 */
import type { Command } from 'commander';
import { ApiError, noteMorePages, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, listFlags, listOptions, positiveInt } from './common.js';

/** A system hook as the API shows it (the secret token never comes back). */
interface SystemHook {
  id: number;
  url: string;
  created_at: string;
  push_events: boolean;
  tag_push_events: boolean;
  enable_ssl_verification: boolean;
}

const events = (h: SystemHook) => ['system', ...(h.push_events ? ['push'] : []), ...(h.tag_push_events ? ['tag-push'] : [])].join(',');

const COLUMNS: Column<SystemHook>[] = [
  { header: 'id', value: (h) => h.id },
  { header: 'url', value: (h) => h.url, max: 60 },
  { header: 'events', value: events },
  { header: 'ssl verify', value: (h) => h.enable_ssl_verification },
  { header: 'created', value: (h) => shortTime(h.created_at) },
];

/** An admin-only refusal, said plainly. */
function adminOnly(e: unknown): unknown {
  if (e instanceof ApiError && e.status === 403) return new CliError('system hooks are for administrators only', 'sign in as an administrator (`gantry login`)');
  return e;
}

/** Registers the verbs of the `system-hook` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerSystemHooks(systemHook: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(systemHook.command('list').alias('ls').description('list the system hooks'))
    .action(async (o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<SystemHook>('/hooks', {}, listOptions(o)).catch((e: unknown) => { throw adminOnly(e); });
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'system hooks' });
      noteMorePages(io, page);
    });

  systemHook
    .command('add')
    .alias('create')
    .description('add a system hook: the URL gets a POST with a JSON payload for every system event')
    .argument('<url>', 'http:// or https:// URL to post to')
    .option('--push-events', 'also send pushes (default)')
    .option('--no-push-events', 'do not send pushes')
    .option('--tag-push-events', 'also send tag pushes')
    .option('--no-tag-push-events', 'do not send tag pushes (default)')
    .option('--secret-token <token>', 'secret sent in the X-Gitlab-Token header of every delivery (stored, never shown)')
    .option('--no-ssl-verification', 'do not verify the receiver\'s TLS certificate')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', [
      '',
      'Examples:',
      '  gantry system-hook add https://audit.example.com/gantry --secret-token s3cret',
      '  gantry system-hook add https://chat.example.com/hook --no-push-events --tag-push-events',
    ].join('\n'))
    .action(async (url: string, o: { pushEvents?: boolean; tagPushEvents?: boolean; secretToken?: string; sslVerification?: boolean; json?: boolean }, cmd: Command) => {
      if (!/^https?:\/\/\S+$/i.test(url)) throw new UsageError(`"${url}" is not an http:// or https:// URL`);
      const body: Record<string, unknown> = { url };
      if (o.pushEvents !== undefined) body.push_events = o.pushEvents;
      if (o.tagPushEvents !== undefined) body.tag_push_events = o.tagPushEvents;
      if (o.secretToken !== undefined) body.token = o.secretToken;
      if (o.sslVerification === false) body.enable_ssl_verification = false;
      const h = await client(cmd).post<SystemHook>('/hooks', body).catch((e: unknown) => { throw adminOnly(e); });
      io.err(`Added system hook ${h.id}.\n`);
      if (o.json) return printJson(io, h);
      io.out(renderRecord([['id', h.id], ['url', h.url], ['events', events(h)], ['ssl verify', h.enable_ssl_verification], ['created', shortTime(h.created_at)]]));
    });

  systemHook
    .command('test')
    .description('send a sample project_create event to a system hook, and print what was sent')
    .argument('<id>', 'system hook id (see `gantry system-hook list`)', positiveInt)
    .action(async (id: number, _o: unknown, cmd: Command) => {
      const sent = await client(cmd).get<unknown>(`/hooks/${id}`).catch((e: unknown) => { throw adminOnly(e); });
      io.err(`Queued a test delivery to system hook ${id}:\n`);
      printJson(io, sent);
    });

  systemHook
    .command('remove')
    .alias('rm')
    .alias('delete')
    .description('remove a system hook (deliveries not sent yet are dropped)')
    .argument('<id>', 'system hook id', positiveInt)
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .option('--json', 'print the removed hook as JSON')
    .action(async (id: number, o: { yes?: boolean; json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('removing needs confirmation', 'add --yes');
        if (!(await confirm(io, `Remove system hook ${id}?`))) throw new CliError('not removed');
      }
      const removed = await api.delete<SystemHook>(`/hooks/${id}`).catch((e: unknown) => { throw adminOnly(e); });
      io.err(`Removed system hook ${removed.id} (${removed.url}).\n`);
      if (o.json) printJson(io, removed);
    });
}
