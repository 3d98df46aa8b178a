/** gantry repo clone-url|tree: where to clone a project from, and what its repository holds. */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { printList, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

/** A tree entry as the API sends it. */
export interface TreeEntry {
  id: string;
  name: string;
  type: string;
  mode: string;
  path: string;
}

const TREE_COLUMNS: Column<TreeEntry>[] = [
  { header: 'mode', value: (e) => e.mode },
  { header: 'type', value: (e) => e.type },
  { header: 'id', value: (e) => e.id.slice(0, 8) },
  { header: 'path', value: (e) => (e.type === 'tree' ? `${e.path}/` : e.path) },
];

/** Registers the `repo` noun. */
export function registerRepo(program: Command, factory: Factory): void {
  const { io } = factory;
  const repo = program.command('repo').alias('repository').description('clone URLs and the contents of a project\'s repository');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  repo
    .command('clone-url')
    .description('print the URL to clone a project from (HTTP by default)')
    .argument('<project>', 'id or namespace/path')
    .option('--ssh', 'the SSH URL instead')
    .addHelpText('after', '\nExample:\n  git clone "$(gantry repo clone-url root/my-app)"')
    .action(async (id: string, o: { ssh?: boolean }, cmd: Command) => {
      const p = await client(cmd).get<{ http_url_to_repo: string; ssh_url_to_repo: string }>(`/projects/${idOrPath(id)}`);
      io.out(`${o.ssh ? p.ssh_url_to_repo : p.http_url_to_repo}\n`);
    });

  listFlags(repo.command('tree').alias('ls').description('list the files and directories of a repository'))
    .argument('<project>', 'id or namespace/path')
    .option('--ref <ref>', 'branch, tag or commit (default: the default branch)')
    .option('--path <dir>', 'directory to list (default: the root)')
    .option('-r, --recursive', 'list the whole subtree')
    .action(async (id: string, o: Record<string, string | boolean | number | undefined>, cmd: Command) => {
      const page = await client(cmd).list<TreeEntry>(`/projects/${idOrPath(id)}/repository/tree`, {
        ref_name: o.ref as string | undefined, path: o.path as string | undefined, recursive: o.recursive ? true : undefined,
      }, listOptions(o));
      printList(io, page.items, TREE_COLUMNS, { json: Boolean(o.json), noun: 'files' });
      noteMorePages(io, page);
    });
}
