/** gantry repo clone-url|clone|tree: where to clone a project from, cloning it, and what its repository holds. */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import { basename, resolve } from 'node:path';
import { gitOrFail, tokenAuthEnv } from '../local-git.js';
import { printList, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';
import { registerCredentialHelper, serverOrigin } from './git-credential.js';

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

/** What clone-url and clone need of a project. */
interface CloneUrls {
  path_with_namespace: string;
  http_url_to_repo: string;
  ssh_url_to_repo: string;
}

/** Whether to clone over SSH: as forced by --ssh / --http, else when the account has at least one SSH key. */
async function useSsh(api: ApiClient, o: { ssh?: boolean; http?: boolean }): Promise<boolean> {
  if (o.ssh && o.http) throw new UsageError('--ssh and --http together', 'choose one of them');
  if (o.ssh || o.http) return Boolean(o.ssh);
  return (await api.list<unknown>('/user/keys', {}, { perPage: 1 })).items.length > 0;
}

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

  repo
    .command('clone')
    .description('clone a project with git: over SSH when your account has an SSH key (`gantry ssh-key add`), else over HTTP')
    .argument('<project>', 'id or namespace/path')
    .argument('[directory]', 'where to clone to (default: the project\'s path)')
    .option('--ssh', 'clone over SSH')
    .option('--http', 'clone over HTTP with your token (the clone asks gantry for it: `gantry auth git-credential`)')
    .addHelpText('after', '\nExamples:\n  gantry repo clone root/my-app\n  gantry repo clone root/my-app work/app --http')
    .action(async (id: string, directory: string | undefined, o: { ssh?: boolean; http?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const p = await api.get<CloneUrls>(`/projects/${idOrPath(id)}`);
      const ssh = await useSsh(api, o);
      const url = ssh ? p.ssh_url_to_repo : p.http_url_to_repo;
      io.err(`Cloning ${p.path_with_namespace} over ${ssh ? 'SSH' : 'HTTP'} (${url})...\n`);
      const env = ssh ? undefined : tokenAuthEnv(p.http_url_to_repo, (await api.fresh()).token, Boolean(api.connection.oauth));
      const hint = ssh
        ? 'check that ssh offers the key you added (`ssh-add -l`, ~/.ssh/config or GIT_SSH_COMMAND), or clone over HTTP with --http'
        : 'check that you can read the project (`gantry project show`) and that the server is reachable';
      await gitOrFail(io, ['clone', '--', url, ...(directory ? [directory] : [])], hint, { env, showProgress: true });
      if (!ssh) {
        // The token was lent to the clone only: the clone's own config now asks gantry for it, so pushes go through.
        const dir = resolve(io.cwd ?? process.cwd(), directory ?? basename(p.path_with_namespace));
        await registerCredentialHelper({ ...io, cwd: dir }, serverOrigin(p.http_url_to_repo), ['--local']);
      }
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
