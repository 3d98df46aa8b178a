/**
 * gantry trigger list|create|remove|run: a project's build triggers (masters and up), and starting a pipeline with one.
 * The project is the one named, -R, or the clone's (main.ts fills it in).
 */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, printList, shortTime, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

/** A trigger as the API shows it. */
export interface Trigger {
  token: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  last_used: string | null;
}

/** What POST /projects/:id/trigger/builds answers: the trigger request and the pipeline it started. */
interface TriggerRequest {
  id: number;
  variables: Record<string, string> | null;
  pipeline: { id: number; sha: string; ref: string | null; status: string };
}

const PROJECT_ARG = 'id or namespace/path (default: the project of the clone you are in)';
const TOKEN = /^[A-Za-z0-9_-]{1,255}$/;
const triggersPath = (project: string, token?: string) => `/projects/${idOrPath(project)}/triggers${token === undefined ? '' : `/${token}`}`;

const COLUMNS: Column<Trigger>[] = [
  { header: 'token', value: (t) => t.token },
  { header: 'created', value: (t) => shortTime(t.created_at) },
  { header: 'last used', value: (t) => (t.last_used ? shortTime(t.last_used) : 'never') },
];

function checkToken(token: string): string {
  if (!TOKEN.test(token)) throw new UsageError(`"${token}" is not a trigger token`, 'see `gantry trigger list <project>`');
  return token;
}

/** `--var KEY=VALUE`, repeatable: collected into an object (a later KEY wins). */
function collectVar(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`--var ${value}: expected KEY=VALUE`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/** The token to run with: the one given, else the project's first trigger, else a new one (said on stderr). */
async function tokenFor(factory: Factory, api: ApiClient, project: string, given: string | undefined): Promise<string> {
  if (given !== undefined) return checkToken(given);
  const [first] = (await api.list<Trigger>(triggersPath(project), {}, { perPage: 1 })).items;
  if (first) return first.token;
  const created = await api.post<Trigger>(triggersPath(project));
  factory.io.err(`Created trigger ${created.token} on ${project} (the project had none; remove it with \`gantry trigger remove ${project} ${created.token}\`).\n`);
  return created.token;
}

/** Registers the verbs of the `trigger` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerTriggers(trigger: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(trigger.command('list').alias('ls').description('list the build triggers of a project with their tokens'))
    .argument('<project>', PROJECT_ARG)
    .action(async (project: string, o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Trigger>(triggersPath(project), {}, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'triggers' });
      noteMorePages(io, page);
    });

  trigger
    .command('create')
    .description('create a build trigger and print its token (anyone holding it can start pipelines of the project)')
    .argument('<project>', PROJECT_ARG)
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, o: { json?: boolean }, cmd: Command) => {
      const t = await client(cmd).post<Trigger>(triggersPath(project));
      io.err(`Created trigger on ${project}. Start a pipeline with it: gantry trigger run ${project} --ref <branch> --trigger-token ${t.token}\n`);
      if (o.json) printJson(io, t);
      else io.out(`${t.token}\n`);
    });

  trigger
    .command('remove')
    .alias('rm')
    .alias('delete')
    .description('delete a build trigger: its token stops working')
    .argument('<project>', PROJECT_ARG)
    .argument('<token>', 'the trigger token (see `gantry trigger list`)')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .option('--json', 'print the deleted trigger as JSON')
    .action(async (project: string, token: string, o: { yes?: boolean; json?: boolean }, cmd: Command) => {
      checkToken(token);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('removing needs confirmation', 'add --yes');
        if (!(await confirm(io, `Delete trigger ${token} of ${project}? Scripts using it will stop working.`))) throw new CliError('not removed');
      }
      const t = await client(cmd).delete<Trigger>(triggersPath(project, token));
      io.err(`Removed trigger ${token} from ${project}.\n`);
      if (o.json) printJson(io, t);
    });

  trigger
    .command('run')
    .description("start a pipeline for a branch or tag with a trigger token, passing variables to its builds")
    .argument('<project>', PROJECT_ARG)
    .option('--ref <ref>', "the branch or tag to build (default: the project's default branch)")
    .option('--var <KEY=VALUE>', 'a variable for every build of the pipeline (repeatable)', collectVar)
    .option('--trigger-token <token>', "the trigger's token (default: the project's first trigger, created when it has none; needs a master)")
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry trigger run root/my-app --ref master --var DEPLOY_TO=staging\n  gantry trigger run root/my-app --ref v1.0 --trigger-token 0123abcd...\n')
    .action(async (project: string, o: { ref?: string; var?: Record<string, string>; triggerToken?: string; json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const token = await tokenFor(factory, api, project, o.triggerToken);
      const ref = o.ref ?? (await api.get<{ default_branch: string | null }>(`/projects/${idOrPath(project)}`)).default_branch;
      if (!ref) throw new UsageError(`${project} has no default branch`, 'name the branch or tag with --ref');
      const body: Record<string, unknown> = { token, ref };
      if (o.var) body.variables = o.var;
      const r = await api.post<TriggerRequest>(`/projects/${idOrPath(project)}/trigger/builds`, body);
      if (o.json) return printJson(io, r);
      io.out(`Pipeline #${r.pipeline.id} (${r.pipeline.status}) on ${r.pipeline.ref} at ${r.pipeline.sha.slice(0, 8)}, trigger request #${r.id}\n`);
      io.err(`Follow it: gantry pipeline watch ${project} ${r.pipeline.id}\n`);
    });
}
