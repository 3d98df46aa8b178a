/** gantry variable list|set|get|remove: a project's secret build variables (masters and owners). */
import type { Command } from 'commander';
import { ApiError, noteMorePages, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import { printJson, printList, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

/** A project variable as the API shows it. */
export interface ProjectVariable {
  key: string;
  value: string;
}

const KEY = /^[A-Za-z0-9_]{1,255}$/;
const HIDDEN = '********';

function checkKey(key: string): void {
  if (!KEY.test(key)) throw new UsageError(`"${key}" is not a valid variable key`, "use 1-255 characters of letters, digits and '_'");
}

const path = (project: string, key?: string) => `/projects/${idOrPath(project)}/variables${key === undefined ? '' : `/${encodeURIComponent(key)}`}`;

/** Registers the `variable` noun. */
export function registerVariables(program: Command, factory: Factory): void {
  const { io } = factory;
  const variable = program.command('variable').alias('variables').description('list, set, show and remove a project\'s secret build variables (masters and owners)');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(variable.command('list').alias('ls').description('list the variables of a project (values hidden unless --show-values or --json)'))
    .argument('<project>', 'id or namespace/path')
    .option('--show-values', 'print the values too')
    .action(async (project: string, o: { json?: boolean; showValues?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<ProjectVariable>(path(project), {}, listOptions(o));
      const columns: Column<ProjectVariable>[] = [
        { header: 'key', value: (v) => v.key },
        { header: 'value', value: (v) => (o.showValues ? v.value : HIDDEN), max: 60 },
      ];
      printList(io, page.items, columns, { json: Boolean(o.json), noun: 'variables' });
      noteMorePages(io, page);
    });

  variable
    .command('get')
    .alias('show')
    .description('print the value of one variable')
    .argument('<project>', 'id or namespace/path')
    .argument('<key>', 'variable key')
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, key: string, o: { json?: boolean }, cmd: Command) => {
      checkKey(key);
      const v = await client(cmd).get<ProjectVariable>(path(project, key));
      if (o.json) return printJson(io, v);
      io.out(`${v.value}\n`);
    });

  variable
    .command('set')
    .description('create a variable, or change the value of an existing one')
    .argument('<project>', 'id or namespace/path')
    .argument('<key>', "variable key: letters, digits and '_'")
    .argument('<value>', 'the value (stored encrypted; sent to the project\'s builds)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry variable set root/my-app DEPLOY_TOKEN s3cret\n')
    .action(async (project: string, key: string, value: string, o: { json?: boolean }, cmd: Command) => {
      checkKey(key);
      if (value === '') throw new UsageError('the value must not be empty');
      const api = client(cmd);
      let v: ProjectVariable;
      let created = false;
      try {
        v = await api.put<ProjectVariable>(path(project, key), { value });
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 404 && e.message.includes('Variable Not Found'))) throw e;
        v = await api.post<ProjectVariable>(path(project), { key, value });
        created = true;
      }
      io.err(`${created ? 'Created' : 'Updated'} variable ${v.key} in ${project}.\n`);
      if (o.json) printJson(io, v);
    });

  variable
    .command('remove')
    .alias('rm')
    .alias('delete')
    .description('remove a variable')
    .argument('<project>', 'id or namespace/path')
    .argument('<key>', 'variable key')
    .option('--json', 'print the removed variable as JSON')
    .action(async (project: string, key: string, o: { json?: boolean }, cmd: Command) => {
      checkKey(key);
      const v = await client(cmd).delete<ProjectVariable>(path(project, key));
      io.err(`Removed variable ${v.key} from ${project}.\n`);
      if (o.json) printJson(io, v);
    });
}
