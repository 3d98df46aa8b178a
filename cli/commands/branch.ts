/** gantry branch list|create|delete|protect|unprotect: a project's branches and their protection. */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

/** A branch as the API sends it. */
export interface Branch {
  name: string;
  commit: { id: string; message: string; committed_date: string; author_name: string };
  protected: boolean;
  developers_can_push: boolean;
  developers_can_merge: boolean;
}

const title = (message: string) => message.split('\n', 1)[0] ?? '';

const COLUMNS: Column<Branch>[] = [
  { header: 'name', value: (b) => b.name },
  { header: 'commit', value: (b) => b.commit.id.slice(0, 8) },
  { header: 'protected', value: (b) => b.protected },
  { header: 'dev push', value: (b) => b.developers_can_push },
  { header: 'dev merge', value: (b) => b.developers_can_merge },
  { header: 'updated', value: (b) => shortTime(b.commit.committed_date) },
  { header: 'title', value: (b) => title(b.commit.message), max: 50 },
];

/** Show one branch as key/value lines, or JSON. */
function printBranch(io: Factory['io'], b: Branch, json?: boolean): void {
  if (json) return printJson(io, b);
  io.out(renderRecord([
    ['name', b.name],
    ['commit', b.commit.id],
    ['title', title(b.commit.message)],
    ['protected', b.protected],
    ['developers can push', b.developers_can_push],
    ['developers can merge', b.developers_can_merge],
  ]));
}

/** Registers the `branch` noun. */
export function registerBranch(program: Command, factory: Factory): void {
  const { io } = factory;
  const branch = program.command('branch').alias('branches').description('list, create, delete and protect branches');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));
  const path = (project: string, name?: string) => `/projects/${idOrPath(project)}/repository/branches${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

  listFlags(branch.command('list').alias('ls').description('list branches'))
    .argument('<project>', 'id or namespace/path')
    .action(async (id: string, o: Record<string, string | boolean | number | undefined>, cmd: Command) => {
      const page = await client(cmd).list<Branch>(path(id), {}, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'branches' });
      noteMorePages(io, page);
    });

  branch
    .command('show')
    .description('show one branch')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'branch name')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, name: string, o: { json?: boolean }, cmd: Command) => {
      printBranch(io, await client(cmd).get<Branch>(path(id, name)), o.json);
    });

  branch
    .command('create')
    .description('create a branch')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'new branch name')
    .option('--ref <ref>', 'branch, tag or commit to start from (default: the default branch)')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, name: string, o: { ref?: string; json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const ref = o.ref ?? ((await api.get<{ default_branch: string | null }>(`/projects/${idOrPath(id)}`)).default_branch || 'master');
      const b = await api.post<Branch>(path(id), { branch_name: name, ref });
      io.err(`Created branch ${b.name} at ${b.commit.id.slice(0, 8)}.\n`);
      if (o.json) printJson(io, b);
    });

  branch
    .command('delete')
    .alias('rm')
    .description('delete a branch (not the default branch, not a protected one)')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'branch name')
    .action(async (id: string, name: string, _o: unknown, cmd: Command) => {
      await client(cmd).delete(path(id, name));
      io.err(`Deleted branch ${name}.\n`);
    });

  branch
    .command('protect')
    .description('protect a branch (masters only)')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'branch name')
    .option('--developers-can-push', 'let developers push')
    .option('--no-developers-can-push', 'do not let developers push')
    .option('--developers-can-merge', 'let developers merge')
    .option('--no-developers-can-merge', 'do not let developers merge')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, name: string, o: { developersCanPush?: boolean; developersCanMerge?: boolean; json?: boolean }, cmd: Command) => {
      const body: Record<string, boolean> = {};
      if (o.developersCanPush !== undefined) body.developers_can_push = o.developersCanPush;
      if (o.developersCanMerge !== undefined) body.developers_can_merge = o.developersCanMerge;
      const b = await client(cmd).put<Branch>(`${path(id, name)}/protect`, body);
      io.err(`Protected branch ${b.name} (developers can push: ${b.developers_can_push ? 'yes' : 'no'}, merge: ${b.developers_can_merge ? 'yes' : 'no'}).\n`);
      if (o.json) printJson(io, b);
    });

  branch
    .command('unprotect')
    .description('remove the protection rule of a branch (masters only)')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'branch name')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, name: string, o: { json?: boolean }, cmd: Command) => {
      const b = await client(cmd).put<Branch>(`${path(id, name)}/unprotect`);
      io.err(`Unprotected branch ${b.name}${b.protected ? ' (it is still protected as the default branch or by a pattern)' : ''}.\n`);
      if (o.json) printJson(io, b);
    });
}
