/**
 * gantry member list|add|edit|remove: the members of a project (default) or of a group (`--group`), by user name and
 * role name (guest, reporter, developer, master, owner) instead of the API's numeric ids and access levels.
 */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';
import { findUser } from './users.js';

/** GitLab's access levels by role name. */
export const ROLES: Readonly<Record<string, number>> = { guest: 10, reporter: 20, developer: 30, master: 40, owner: 50 };
const ROLE_NAMES = Object.fromEntries(Object.entries(ROLES).map(([name, level]) => [level, name]));

/** A role name (or its number) as an access level. */
export function accessLevel(role: string): number {
  const level = ROLES[role.toLowerCase()] ?? (/^\d+$/.test(role) && ROLE_NAMES[Number(role)] ? Number(role) : undefined);
  if (level === undefined) throw new UsageError(`unknown role "${role}"`, `give one of ${Object.keys(ROLES).join(', ')}`);
  return level;
}

/** A member as the API shows it. */
interface Member {
  id: number;
  username: string;
  name: string;
  state: string;
  access_level: number;
  expires_at?: string | null;
  created_at?: string;
}

const COLUMNS: Column<Member>[] = [
  { header: 'username', value: (m) => m.username },
  { header: 'name', value: (m) => m.name },
  { header: 'role', value: (m) => ROLE_NAMES[m.access_level] ?? m.access_level },
  { header: 'expires', value: (m) => m.expires_at ?? '' },
  { header: 'state', value: (m) => m.state },
];

function printMember(io: IO, m: Member, json?: boolean): void {
  if (json) return printJson(io, m);
  io.out(renderRecord([
    ['username', m.username], ['name', m.name], ['role', ROLE_NAMES[m.access_level] ?? m.access_level], ['expires', m.expires_at ?? 'never'],
    ['since', shortTime(m.created_at)],
  ]));
}

/**
 * `/projects/:id/<what>` (the project argument or the clone's) or `/groups/:id/<what>` (`--group`): the members, or
 * the access requests (access-requests.ts).
 */
export function sourcePath(project: string | undefined, group: string | undefined, what: 'members' | 'access_requests' = 'members'): string {
  if (group !== undefined && project !== undefined) throw new UsageError('a project and --group together', 'give one of them');
  if (group !== undefined) return `/groups/${idOrPath(group)}/${what}`;
  if (project === undefined) throw new UsageError('no project given', 'name the project (namespace/path), run it inside a clone, or pass --group <group>');
  return `/projects/${idOrPath(project)}/${what}`;
}
const membersPath = (project: string | undefined, group: string | undefined) => sourcePath(project, group);

/** Adds the verbs of the `member` noun. */
export function registerMembers(member: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command): ApiClient => factory.client(connectionFlags(cmd));
  const groupOption = (cmd: Command) => cmd.option('--group <group>', 'the members of this group instead of a project');

  groupOption(listFlags(member.command('list').alias('ls').description('list the members and their roles')))
    .argument('[project]', 'id or namespace/path (default: the clone\'s)')
    .option('--search <text>', 'only members whose name or user name matches')
    .action(async (project: string | undefined, o: { group?: string; search?: string; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Member>(membersPath(project, o.group), { query: o.search }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: o.json, noun: 'members' });
      noteMorePages(io, page);
    });

  const write = (verb: 'add' | 'edit', description: string) =>
    groupOption(member.command(verb).description(description))
      .argument('[project]', 'id or namespace/path (default: the clone\'s)')
      .argument('<user>', 'user name or id')
      .argument('<role>', `${Object.keys(ROLES).join(', ')}`)
      .option('--expires <date>', 'when the membership ends (YYYY-MM-DD)')
      .option('--json', 'print the raw API JSON')
      .action(async (project: string | undefined, who: string, role: string, o: { group?: string; expires?: string; json?: boolean }, cmd: Command) => {
        const level = accessLevel(role);
        const api = client(cmd);
        const path = membersPath(project, o.group);
        const user = await findUser(api, who);
        const body = { access_level: level, ...(o.expires ? { expires_at: o.expires } : {}) };
        const m = verb === 'add'
          ? await api.post<Member>(path, { user_id: user.id, ...body })
          : await api.put<Member>(`${path}/${user.id}`, body);
        io.err(`${user.username} is now ${ROLE_NAMES[m.access_level] ?? m.access_level} of ${o.group ?? project}.\n`);
        printMember(io, m, o.json);
      });
  write('add', 'add a user as a member with a role (e.g. `gantry member add root/app alice developer`)');
  write('edit', 'change a member\'s role (or --expires)');

  groupOption(member.command('remove').alias('rm').description('remove a member'))
    .argument('[project]', 'id or namespace/path (default: the clone\'s)')
    .argument('<user>', 'user name or id')
    .action(async (project: string | undefined, who: string, o: { group?: string }, cmd: Command) => {
      const api = client(cmd);
      const path = membersPath(project, o.group);
      const user = await findUser(api, who);
      await api.request('DELETE', `${path}/${user.id}`);
      io.err(`Removed ${user.username} from ${o.group ?? project}.\n`);
    });
}
