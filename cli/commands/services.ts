/**
 * gantry service show|set|remove: a project's services (masters and up; GitLab 8.13 /projects/:id/services/:slug).
 * Slack (`slack`) posts Slack-format messages for pushes, issues, merge requests, notes, builds and pipelines to an
 * incoming webhook; Mattermost's incoming webhooks take the same messages. The project is the one named, -R, or the
 * clone's (main.ts fills it in).
 */
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, renderRecord, shortTime } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, idOrPath } from './common.js';

const PROJECT_ARG = 'id or namespace/path (default: the project of the clone you are in)';
const SERVICES = ['slack'];

/** A service as the API shows it. */
interface Service {
  id: number;
  title: string;
  active: boolean;
  created_at: string;
  updated_at: string;
  properties: Record<string, unknown>;
  [flag: `${string}_events`]: boolean;
}

/** The event switches: CLI flag name -> API field. */
const EVENT_FLAGS = [
  ['push', 'push_events'], ['tag-push', 'tag_push_events'], ['issues', 'issues_events'], ['merge-requests', 'merge_requests_events'],
  ['note', 'note_events'], ['build', 'build_events'], ['pipeline', 'pipeline_events'],
] as const;
/** The events a per-event channel can be given for (8.13's Slack fields <event>_channel). */
const CHANNEL_EVENTS = ['push', 'issue', 'confidential_issue', 'merge_request', 'note', 'tag_push', 'build', 'pipeline', 'wiki_page'];

const camel = (flag: string) => flag.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
const servicePath = (project: string, service: string) => `/projects/${idOrPath(project)}/services/${service}`;

function checkService(service: string): string {
  if (!SERVICES.includes(service)) throw new UsageError(`unknown service "${service}"`, `services: ${SERVICES.join(', ')}`);
  return service;
}

function printService(io: Factory['io'], s: Service, json?: boolean): void {
  if (json) return printJson(io, s);
  const on = EVENT_FLAGS.filter(([, f]) => s[f]).map(([flag]) => flag);
  const settings = Object.entries(s.properties).filter(([, v]) => v !== null && v !== '');
  io.out(renderRecord([
    ['service', s.title],
    ['active', s.active],
    ['events', on.join(', ') || 'none'],
    ...settings.map(([k, v]): [string, unknown] => [k.replace(/_/g, ' '), v]),
    ['updated', shortTime(s.updated_at)],
  ]));
}

/** Registers the verbs of the `service` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerServices(service: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  service
    .command('show')
    .alias('view')
    .description('show a service of a project: active or not, its events and settings')
    .argument('<project>', PROJECT_ARG)
    .argument('<service>', `the service: ${SERVICES.join(', ')}`)
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, name: string, o: { json?: boolean }, cmd: Command) => {
      printService(io, await client(cmd).get<Service>(servicePath(project, checkService(name))), o.json);
    });

  const set = service
    .command('set')
    .description('set up and activate a service (settings not given are kept; --webhook is needed every time, as the API wants)')
    .argument('<project>', PROJECT_ARG)
    .argument('<service>', `the service: ${SERVICES.join(', ')}`)
    .requiredOption('--webhook <url>', 'the incoming webhook URL (Slack, or Mattermost: the same format)')
    .option('--username <name>', 'the name the messages are posted as')
    .option('--channel <channel>', 'the channel to post to (e.g. #dev; default: the webhook\'s)')
    .option('--event-channel <event=channel>', `a channel for one event (${CHANNEL_EVENTS.join(', ')}); repeatable`, (v: string, acc: string[] = []) => [...acc, v])
    .option('--notify-only-broken-builds', 'post failed builds only (the default)')
    .option('--no-notify-only-broken-builds', 'post passed builds too')
    .option('--notify-only-broken-pipelines', 'post failed pipelines only (the default)')
    .option('--no-notify-only-broken-pipelines', 'post passed pipelines too');
  for (const [flag] of EVENT_FLAGS) {
    const what = flag.replace('-', ' ');
    set.option(`--${flag}-events`, `post ${what} events (default)`).option(`--no-${flag}-events`, `do not post ${what} events`);
  }
  set
    .option('--json', 'print the service as JSON afterwards')
    .addHelpText('after', [
      '',
      'Examples:',
      '  gantry service set root/my-app slack --webhook https://hooks.slack.com/services/T0/B0/xyz --channel "#dev"',
      '  gantry service set slack --webhook https://chat.example.com/hooks/abc --event-channel pipeline=#ci --no-push-events',
    ].join('\n'))
    .action(async (project: string, name: string, o: Record<string, unknown>, cmd: Command) => {
      checkService(name);
      const webhook = String(o.webhook);
      if (!/^https?:\/\/\S+$/i.test(webhook)) throw new UsageError(`"${webhook}" is not an http:// or https:// URL`);
      const body: Record<string, unknown> = { webhook };
      if (o.username !== undefined) body.username = o.username;
      if (o.channel !== undefined) body.channel = o.channel;
      for (const pair of (o.eventChannel as string[] | undefined) ?? []) {
        const m = /^([a-z_]+)=(.*)$/.exec(pair);
        if (!m || !CHANNEL_EVENTS.includes(m[1]!)) {
          throw new UsageError(`--event-channel takes EVENT=CHANNEL, not "${pair}"`, `events: ${CHANNEL_EVENTS.join(', ')}`);
        }
        body[`${m[1]}_channel`] = m[2];
      }
      if (o.notifyOnlyBrokenBuilds !== undefined) body.notify_only_broken_builds = o.notifyOnlyBrokenBuilds;
      if (o.notifyOnlyBrokenPipelines !== undefined) body.notify_only_broken_pipelines = o.notifyOnlyBrokenPipelines;
      for (const [flag, field] of EVENT_FLAGS) {
        const v = o[`${camel(flag)}Events`];
        if (v !== undefined) body[field] = v;
      }
      const api = client(cmd);
      await api.put<boolean>(servicePath(project, name), body);
      const s = await api.get<Service>(servicePath(project, name));
      io.err(`${s.title} is active on ${project}.\n`);
      printService(io, s, Boolean(o.json));
    });

  service
    .command('remove')
    .alias('rm')
    .alias('delete')
    .description('deactivate a service and clear its settings (messages not sent yet are dropped)')
    .argument('<project>', PROJECT_ARG)
    .argument('<service>', `the service: ${SERVICES.join(', ')}`)
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (project: string, name: string, o: { yes?: boolean }, cmd: Command) => {
      checkService(name);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('removing needs confirmation', 'add --yes');
        if (!(await confirm(io, `Deactivate ${name} on ${project} and clear its settings?`))) throw new CliError('not removed');
      }
      await client(cmd).delete(servicePath(project, name));
      io.err(`Deactivated ${name} on ${project}.\n`);
    });
}
