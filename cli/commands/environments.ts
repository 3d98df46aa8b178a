/**
 * gantry environment list|create|delete and gantry deployment list: a project's environments (reporters read,
 * developers create, masters delete) and the deployments its successful `environment:` builds recorded.
 * The project is the one named, -R, or the clone's (main.ts fills it in).
 */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, printList, shortTime, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, idOrPath, listFlags, listOptions, positiveInt } from './common.js';

const PROJECT_ARG = 'id or namespace/path (default: the project of the clone you are in)';
const NAME = /^[a-zA-Z0-9_\\/${}. -]+$/;

/** An environment as the API shows it. */
export interface Environment {
  id: number;
  name: string;
  external_url: string | null;
}

/** A deployment as the API shows it (the parts the CLI prints). */
export interface Deployment {
  id: number;
  iid: number;
  ref: string;
  sha: string;
  created_at: string;
  user: { username: string } | null;
  environment: Environment | null;
  deployable: { id: number; name: string; status: string } | null;
}

const environmentsPath = (project: string, id?: number) => `/projects/${idOrPath(project)}/environments${id === undefined ? '' : `/${id}`}`;

const ENVIRONMENT_COLUMNS: Column<Environment>[] = [
  { header: 'id', value: (e) => e.id },
  { header: 'name', value: (e) => e.name, max: 50 },
  { header: 'url', value: (e) => e.external_url ?? '', max: 60 },
];

const DEPLOYMENT_COLUMNS: Column<Deployment>[] = [
  { header: 'iid', value: (d) => d.iid },
  { header: 'environment', value: (d) => d.environment?.name ?? '', max: 40 },
  { header: 'ref', value: (d) => d.ref, max: 30 },
  { header: 'sha', value: (d) => d.sha.slice(0, 8) },
  { header: 'build', value: (d) => (d.deployable ? `${d.deployable.id} ${d.deployable.name}` : ''), max: 30 },
  { header: 'user', value: (d) => d.user?.username ?? '' },
  { header: 'created', value: (d) => shortTime(d.created_at) },
];

/** Registers the verbs of the `environment` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerEnvironments(environment: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(environment.command('list').alias('ls').description('list the environments of a project (reporters and up)'))
    .argument('<project>', PROJECT_ARG)
    .action(async (project: string, o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Environment>(environmentsPath(project), {}, listOptions(o));
      printList(io, page.items, ENVIRONMENT_COLUMNS, { json: Boolean(o.json), noun: 'environments' });
      noteMorePages(io, page);
    });

  environment
    .command('create')
    .description('create an environment (developers and up); builds create theirs as they deploy')
    .argument('<project>', PROJECT_ARG)
    .argument('<name>', "letters, digits, spaces and - _ / $ { } .")
    .option('--external-url <url>', 'the URL where it is reachable (http, https, ssh or git)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry environment create root/my-app staging --external-url https://staging.example.com\n')
    .action(async (project: string, name: string, o: { externalUrl?: string; json?: boolean }, cmd: Command) => {
      if (!NAME.test(name)) throw new UsageError(`"${name}" is not a valid environment name`, "use letters, digits, spaces and '-', '_', '/', '$', '{', '}', '.'");
      const env = await client(cmd).post<Environment>(environmentsPath(project), { name, ...(o.externalUrl !== undefined ? { external_url: o.externalUrl } : {}) });
      io.err(`Created environment ${env.id} "${env.name}" in ${project}.\n`);
      if (o.json) printJson(io, env);
    });

  environment
    .command('delete')
    .alias('rm')
    .description('delete an environment and its deployments (masters and up)')
    .argument('<project>', PROJECT_ARG)
    .argument('<id>', 'environment id (see `gantry environment list`)', positiveInt)
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (project: string, id: number, o: { yes?: boolean }, cmd: Command) => {
      const api = client(cmd);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('deleting needs confirmation', 'add --yes');
        if (!(await confirm(io, `Delete environment ${id} of ${project} and its deployments?`))) throw new CliError('not deleted');
      }
      const env = await api.delete<Environment>(environmentsPath(project, id));
      io.err(`Deleted environment ${env.id} "${env.name}" from ${project}.\n`);
    });
}

/** Registers the verbs of the `deployment` noun. */
export function registerDeployments(deployment: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(deployment.command('list').alias('ls').description('list the deployments of a project, oldest first (reporters and up)'))
    .argument('<project>', PROJECT_ARG)
    .action(async (project: string, o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Deployment>(`/projects/${idOrPath(project)}/deployments`, {}, listOptions(o));
      printList(io, page.items, DEPLOYMENT_COLUMNS, { json: Boolean(o.json), noun: 'deployments' });
      noteMorePages(io, page);
    });
}
