/**
 * gantry runner list|show|update|remove|enable|disable: the runners the server knows (the runner agent itself is
 * `gantry-runner`).
 */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions, positiveInt } from './common.js';

/** A runner as GET /runners lists it. */
interface Runner {
  id: number;
  description: string | null;
  active: boolean;
  is_shared: boolean;
  name: string | null;
}

/** A runner as GET /runners/:id shows it. */
interface RunnerDetails extends Runner {
  tag_list: string[];
  run_untagged: boolean;
  locked: boolean;
  version: string | null;
  platform: string | null;
  architecture: string | null;
  contacted_at: string | null;
  projects: Array<{ path_with_namespace: string }>;
}

/** Print RunnerDetails as a record (or raw JSON). */
function printDetails(io: Factory['io'], r: RunnerDetails, json: boolean | undefined): void {
  if (json) return printJson(io, r);
  io.out(renderRecord([
    ['id', r.id],
    ['description', r.description],
    ['active', r.active],
    ['shared', r.is_shared],
    ['tags', r.tag_list],
    ['run untagged', r.run_untagged],
    ['locked', r.locked],
    ['version', [r.name, r.version].filter(Boolean).join(' ')],
    ['platform', [r.platform, r.architecture].filter(Boolean).join('/')],
    ['contacted', shortTime(r.contacted_at)],
    ['projects', (r.projects ?? []).map((p) => p.path_with_namespace)],
  ]));
}

/** A one-line summary of a runner. */
const summary = (r: Runner) => `runner ${r.id}${r.description ? ` (${r.description})` : ''}`;

const COLUMNS: Column<Runner>[] = [
  { header: 'id', value: (r) => r.id },
  { header: 'description', value: (r) => r.description, max: 40 },
  { header: 'active', value: (r) => r.active },
  { header: 'shared', value: (r) => r.is_shared },
  { header: 'name', value: (r) => r.name },
];

/** Registers the `runner` noun. */
export function registerRunners(program: Command, factory: Factory): void {
  const { io } = factory;
  const runner = program.command('runner').alias('runners').description('list and manage the CI runners registered with the server');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(runner.command('list').alias('ls').description('list runners: every runner for administrators, else the specific runners of projects you master'))
    .option('--instance', 'every runner on the instance (administrators; GET /runners/all)')
    .option('--own', 'only the specific runners of projects you master (GET /runners), also for administrators')
    .option('--scope <scope>', 'active, paused or online (for every runner also specific or shared)')
    .addHelpText('after', '\nExamples:\n  gantry runner list\n  gantry runner list --scope shared --json')
    .action(async (o: { instance?: boolean; own?: boolean; scope?: string; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      if (o.instance && o.own) throw new UsageError('choose one of --instance and --own');
      const api = client(cmd);
      const everyRunner = o.instance || (!o.own && (await api.get<{ is_admin?: boolean }>('/user')).is_admin === true);
      const allowed = everyRunner ? ['specific', 'shared', 'active', 'paused', 'online'] : ['active', 'paused', 'online'];
      if (o.scope !== undefined && !allowed.includes(o.scope)) throw new UsageError(`unknown scope "${o.scope}"`, `use ${allowed.join(', ')}`);
      const page = await api.list<Runner>(everyRunner ? '/runners/all' : '/runners', { scope: o.scope }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: o.json, noun: 'runners' });
      noteMorePages(io, page);
    });

  runner
    .command('show')
    .alias('view')
    .description('show one runner: tags, version, last contact, projects')
    .argument('<id>', 'runner id', positiveInt)
    .option('--json', 'print the raw API JSON')
    .action(async (id: number, o: { json?: boolean }, cmd: Command) => {
      printDetails(io, await client(cmd).get<RunnerDetails>(`/runners/${id}`), o.json);
    });

  runner
    .command('update')
    .alias('edit')
    .description('change a runner: description, active/paused, tags, untagged builds, locked (admins; masters of its projects for a specific runner)')
    .argument('<id>', 'runner id', positiveInt)
    .option('--description <text>', 'new description')
    .option('--active', 'let the runner take builds')
    .option('--paused', 'stop the runner from taking builds')
    .option('--tag-list <tags>', 'comma-separated tags (replaces the current ones)')
    .option('--run-untagged', 'also run builds without tags')
    .option('--no-run-untagged', 'run only builds with matching tags (needs tags)')
    .option('--locked', 'lock the runner to its current projects')
    .option('--no-locked', 'let masters enable the runner for other projects')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry runner update 7 --paused\n  gantry runner update 7 --tag-list docker,linux --no-run-untagged --locked')
    .action(async (id: number, o: { description?: string; active?: boolean; paused?: boolean; tagList?: string; runUntagged?: boolean; locked?: boolean; json?: boolean }, cmd: Command) => {
      if (o.active && o.paused) throw new UsageError('choose one of --active and --paused');
      const body: Record<string, unknown> = {};
      if (o.description !== undefined) body.description = o.description;
      if (o.active || o.paused) body.active = Boolean(o.active);
      if (o.tagList !== undefined) body.tag_list = o.tagList;
      if (o.runUntagged !== undefined) body.run_untagged = o.runUntagged;
      if (o.locked !== undefined) body.locked = o.locked;
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change', 'give at least one of --description, --active, --paused, --tag-list, --[no-]run-untagged, --[no-]locked');
      const r = await client(cmd).put<RunnerDetails>(`/runners/${id}`, body);
      if (!o.json) io.err(`Updated ${summary(r)}.\n`);
      printDetails(io, r, o.json);
    });

  runner
    .command('remove')
    .alias('rm')
    .alias('delete')
    .description('remove a runner from the server; its token stops working (admins; masters of its only project)')
    .argument('<id>', 'runner id', positiveInt)
    .option('--json', 'print the removed runner as JSON')
    .action(async (id: number, o: { json?: boolean }, cmd: Command) => {
      const r = await client(cmd).delete<Runner>(`/runners/${id}`);
      if (o.json) return printJson(io, r);
      io.err(`Removed ${summary(r)}.\n`);
    });

  runner
    .command('enable')
    .description('enable one of your specific runners for another project you master (not shared or locked runners)')
    .argument('<project>', 'id or namespace/path')
    .argument('<runner-id>', 'runner id', positiveInt)
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, runnerId: number, o: { json?: boolean }, cmd: Command) => {
      const r = await client(cmd).post<Runner>(`/projects/${idOrPath(project)}/runners`, { runner_id: runnerId });
      if (o.json) return printJson(io, r);
      io.err(`Enabled ${summary(r)} for ${project}.\n`);
    });

  runner
    .command('disable')
    .description("disable a runner for a project (not its last project: remove the runner instead)")
    .argument('<project>', 'id or namespace/path')
    .argument('<runner-id>', 'runner id', positiveInt)
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, runnerId: number, o: { json?: boolean }, cmd: Command) => {
      const r = await client(cmd).delete<Runner>(`/projects/${idOrPath(project)}/runners/${runnerId}`);
      if (o.json) return printJson(io, r);
      io.err(`Disabled ${summary(r)} for ${project}.\n`);
    });
}
