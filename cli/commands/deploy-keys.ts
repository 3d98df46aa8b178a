/**
 * gantry deploy-key list|add|remove|enable: a project's deploy keys (read-only SSH keys for machines; masters and up).
 * The project is the one named, -R, or the clone's (main.ts fills it in).
 */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printList } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, idOrPath, listFlags, listOptions, positiveInt } from './common.js';
import { defaultTitle, KEY_COLUMNS, keyRefused, printKey, readPublicKey, type SshKey } from './ssh-keys.js';

const PROJECT_ARG = 'id or namespace/path (default: the project of the clone you are in)';
const keysPath = (project: string) => `/projects/${idOrPath(project)}/deploy_keys`;

/** Registers the verbs of the `deploy-key` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerDeployKeys(deployKey: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(deployKey.command('list').alias('ls').description('list the deploy keys of a project'))
    .argument('<project>', PROJECT_ARG)
    .action(async (project: string, o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<SshKey>(keysPath(project), {}, listOptions(o));
      printList(io, page.items, KEY_COLUMNS, { json: Boolean(o.json), noun: 'deploy keys' });
      noteMorePages(io, page);
    });

  deployKey
    .command('add')
    .description('add a read-only deploy key to a project (one already on another project of yours is enabled instead)')
    .argument('<project>', PROJECT_ARG)
    .argument('<file>', 'public key file (.pub); - reads stdin')
    .option('-t, --title <title>', 'a name for the key (default: its comment, else user@host)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  ssh-keygen -t ed25519 -N "" -f deploy_key\n  gantry deploy-key add root/my-app deploy_key.pub --title "CI server"')
    .action(async (project: string, file: string, o: { title?: string; json?: boolean }, cmd: Command) => {
      const { line, comment } = await readPublicKey(io, file);
      const key = await client(cmd).post<SshKey>(keysPath(project), { title: o.title ?? defaultTitle(comment), key: line })
        .catch((e: unknown) => { throw keyRefused(e); });
      io.err(`Deploy key ${key.id} "${key.title}" is enabled on ${project} (read-only).\n`);
      printKey(io, key, o.json);
    });

  deployKey
    .command('enable')
    .description('enable on a project a deploy key of another project you are a master of')
    .argument('<project>', PROJECT_ARG)
    .argument('<id>', 'deploy key id (see `gantry deploy-key list OTHER-PROJECT`)', positiveInt)
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, id: number, o: { json?: boolean }, cmd: Command) => {
      const key = await client(cmd).post<SshKey>(`${keysPath(project)}/${id}/enable`);
      io.err(`Deploy key ${key.id} "${key.title}" is enabled on ${project}.\n`);
      printKey(io, key, o.json);
    });

  deployKey
    .command('remove')
    .alias('rm')
    .description('remove a deploy key from a project (deleted when no other project uses it)')
    .argument('<project>', PROJECT_ARG)
    .argument('<id>', 'deploy key id', positiveInt)
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (project: string, id: number, o: { yes?: boolean }, cmd: Command) => {
      const api = client(cmd);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('removing needs confirmation', 'add --yes');
        const key = await api.get<SshKey>(`${keysPath(project)}/${id}`);
        if (!(await confirm(io, `Remove deploy key ${id} "${key.title}" from ${project}?`))) throw new CliError('not removed');
      }
      await api.delete(`${keysPath(project)}/${id}`);
      io.err(`Removed deploy key ${id} from ${project}.\n`);
    });
}
