/**
 * gantry access-request list|request|approve|deny: requests to join a project (default) or a group (`--group`).
 * Masters and owners of a project (owners of a group) list, approve with a role and deny them; anyone asks with
 * `request` and withdraws with `deny` naming themself.
 */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import { printJson, printList, shortTime, type Column } from '../output.js';
import { connectionFlags, listFlags, listOptions } from './common.js';
import { accessLevel, ROLES, sourcePath } from './members.js';
import { findUser } from './users.js';

/** An access requester as the API shows it. */
interface Requester {
  id: number;
  username: string;
  name: string;
  state: string;
  requested_at: string;
}

const ROLE_NAMES = Object.fromEntries(Object.entries(ROLES).map(([name, level]) => [level, name]));
const PROJECT_ARG = "id or namespace/path (default: the clone's)";
const COLUMNS: Column<Requester>[] = [
  { header: 'username', value: (r) => r.username },
  { header: 'name', value: (r) => r.name },
  { header: 'requested', value: (r) => shortTime(r.requested_at) },
];

const requestsPath = (project: string | undefined, group: string | undefined) => sourcePath(project, group, 'access_requests');

/** Adds the verbs of the `access-request` noun. */
export function registerAccessRequests(noun: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command): ApiClient => factory.client(connectionFlags(cmd));
  const groupOption = (cmd: Command) => cmd.option('--group <group>', 'the access requests of this group instead of a project');

  listFlags(groupOption(noun.command('list').alias('ls').description('list pending requests to join (masters and owners of the project, owners of the group)')))
    .argument('[project]', PROJECT_ARG)
    .action(async (project: string | undefined, o: { group?: string; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Requester>(requestsPath(project, o.group), {}, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'access requests' });
      noteMorePages(io, page);
    });

  groupOption(noun.command('request').description('ask to join a project or group (it must have request_access_enabled; withdraw with `deny <you>`)'))
    .argument('[project]', PROJECT_ARG)
    .option('--json', 'print the raw API JSON')
    .action(async (project: string | undefined, o: { group?: string; json?: boolean }, cmd: Command) => {
      const r = await client(cmd).post<Requester>(requestsPath(project, o.group));
      io.err(`Requested access to ${o.group ?? project} as ${r.username}; its masters and owners can approve it.\n`);
      if (o.json) printJson(io, r);
    });

  groupOption(noun.command('approve').description('approve a request: the user becomes a member with the role (default developer)'))
    .argument('[project]', PROJECT_ARG)
    .argument('<user>', 'user name or id of the requester')
    .argument('[role]', `${Object.keys(ROLES).join(', ')} (default: developer)`)
    .option('--json', 'print the raw API JSON')
    .action(async (project: string | undefined, who: string, role: string | undefined, o: { group?: string; json?: boolean }, cmd: Command) => {
      const level = role === undefined ? undefined : accessLevel(role);
      const api = client(cmd);
      const path = requestsPath(project, o.group);
      const user = await findUser(api, who);
      const m = await api.put<{ username: string; access_level: number }>(`${path}/${user.id}/approve`, level === undefined ? {} : { access_level: level });
      io.err(`${m.username} is now ${ROLE_NAMES[m.access_level] ?? m.access_level} of ${o.group ?? project}.\n`);
      if (o.json) printJson(io, m);
    });

  groupOption(noun.command('deny').alias('withdraw').description('deny a request (masters, owners), or withdraw your own'))
    .argument('[project]', PROJECT_ARG)
    .argument('<user>', 'user name or id of the requester')
    .action(async (project: string | undefined, who: string, o: { group?: string }, cmd: Command) => {
      const api = client(cmd);
      const path = requestsPath(project, o.group);
      const user = await findUser(api, who);
      await api.request('DELETE', `${path}/${user.id}`);
      io.err(`Removed the access request of ${user.username} to ${o.group ?? project}.\n`);
    });
}
