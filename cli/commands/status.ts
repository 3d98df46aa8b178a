/** gantry status set|list: commit statuses (external CI results shown with a commit's pipeline). */
import { InvalidArgumentError, type Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { printJson, printList, shortTime, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

/** A commit status as the API sends it. */
export interface CommitStatus {
  id: number;
  sha: string;
  ref: string | null;
  status: string;
  name: string;
  target_url: string | null;
  description: string | null;
  created_at: string;
  author?: { username: string } | null;
}

/** The states a status may be set to. */
export const STATUS_STATES = ['pending', 'running', 'success', 'failed', 'canceled'];

/** commander parser for the state argument. */
function stateArg(value: string): string {
  if (!STATUS_STATES.includes(value)) throw new InvalidArgumentError(`use one of ${STATUS_STATES.join(', ')}`);
  return value;
}

const COLUMNS: Column<CommitStatus>[] = [
  { header: 'id', value: (s) => s.id },
  { header: 'name', value: (s) => s.name },
  { header: 'status', value: (s) => s.status },
  { header: 'ref', value: (s) => s.ref },
  { header: 'created', value: (s) => shortTime(s.created_at) },
  { header: 'description', value: (s) => s.description, max: 40 },
  { header: 'url', value: (s) => s.target_url },
];

/** Registers the `status` noun. */
export function registerStatus(program: Command, factory: Factory): void {
  const { io } = factory;
  const status = program.command('status').alias('statuses').description('set and list commit statuses');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  status
    .command('set')
    .description('add or update the status of a commit (developers and up)')
    .argument('<project>', 'id or namespace/path')
    .argument('<sha>', 'commit sha')
    .argument('<state>', STATUS_STATES.join(', '), stateArg)
    .option('--name <name>', 'the status name (default "default")')
    .option('--ref <ref>', 'the branch or tag (default: a branch containing the commit)')
    .option('--target-url <url>', 'link to the details')
    .option('--description <text>', 'a short description')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry status set root/app 1a2b3c4d success --name lint --target-url https://ci.example.com/1')
    .action(async (id: string, sha: string, state: string, o: { name?: string; ref?: string; targetUrl?: string; description?: string; json?: boolean }, cmd: Command) => {
      const body: Record<string, string> = { state };
      if (o.name !== undefined) body.name = o.name;
      if (o.ref !== undefined) body.ref = o.ref;
      if (o.targetUrl !== undefined) body.target_url = o.targetUrl;
      if (o.description !== undefined) body.description = o.description;
      const s = await client(cmd).post<CommitStatus>(`/projects/${idOrPath(id)}/statuses/${encodeURIComponent(sha)}`, body);
      io.err(`Status ${s.name} of ${s.sha.slice(0, 8)} is ${s.status}.\n`);
      if (o.json) printJson(io, s);
    });

  listFlags(status.command('list').alias('ls').description('list the statuses of a commit (newest per name unless --every)'))
    .argument('<project>', 'id or namespace/path')
    .argument('<sha>', 'commit sha, branch or tag')
    .option('--ref <ref>', 'only statuses of this branch or tag')
    .option('--stage <stage>', 'only statuses of this stage')
    .option('--name <name>', 'only statuses with this name')
    .option('--every', 'every status, not only the newest of each name')
    .action(async (id: string, sha: string, o: Record<string, string | boolean | number | undefined>, cmd: Command) => {
      const page = await client(cmd).list<CommitStatus>(`/projects/${idOrPath(id)}/repository/commits/${encodeURIComponent(sha)}/statuses`, {
        ref: o.ref as string | undefined, stage: o.stage as string | undefined, name: o.name as string | undefined, all: o.every ? true : undefined,
      }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'statuses' });
      noteMorePages(io, page);
    });
}
