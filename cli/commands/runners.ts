/** gantry runner list|show: the runners the server knows (the runner agent itself is `gantry-runner`). */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { connectionFlags, listFlags, listOptions, positiveInt } from './common.js';

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
  const runner = program.command('runner').alias('runners').description('list the CI runners registered with the server');
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
      const r = await client(cmd).get<RunnerDetails>(`/runners/${id}`);
      if (o.json) return printJson(io, r);
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
    });
}
