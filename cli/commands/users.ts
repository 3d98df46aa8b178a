/** gantry user list|create|show|password. */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { CliError, UsageError } from '../errors.js';
import { promptSecret, readStdinLine } from '../prompt.js';
import { connectionFlags, listFlags, listOptions, nonNegativeInt } from './common.js';

/**
 * A new password: --password, else the first line of stdin with --password-stdin, else typed twice on a terminal. It
 * never has to appear in a command line (shell history, `ps`).
 */
async function newPassword(io: IO, o: { password?: string; passwordStdin?: boolean }, whose: string): Promise<string> {
  if (o.password !== undefined && o.passwordStdin) throw new UsageError('--password and --password-stdin together', 'give one of them');
  if (o.password !== undefined) return o.password;
  if (o.passwordStdin) return readStdinLine(io);
  if (!io.stdinIsTTY) throw new UsageError('no password given', 'pipe it with --password-stdin (or pass --password)');
  const first = await promptSecret(io, `New password for ${whose}: `);
  const again = await promptSecret(io, 'Again: ');
  if (first !== again) throw new UsageError('the two passwords differ', 'run the command again');
  return first;
}

/** User fields the CLI shows (email and is_admin only reach administrators). */
interface User {
  id: number;
  username: string;
  name: string;
  state: string;
  email?: string;
  is_admin?: boolean;
  created_at?: string;
  web_url?: string;
}

const COLUMNS: Column<User>[] = [
  { header: 'id', value: (u) => u.id },
  { header: 'username', value: (u) => u.username },
  { header: 'name', value: (u) => u.name },
  { header: 'state', value: (u) => u.state },
  { header: 'admin', value: (u) => u.is_admin },
  { header: 'email', value: (u) => u.email },
];

/** Show one user as key/value lines, or JSON. */
function printUser(io: IO, u: User, json?: boolean): void {
  if (json) return printJson(io, u);
  io.out(renderRecord([
    ['id', u.id], ['username', u.username], ['name', u.name], ['email', u.email], ['state', u.state],
    ['admin', u.is_admin], ['created', shortTime(u.created_at)], ['web url', u.web_url],
  ]));
}

/** Registers the `user` noun. */
export function registerUsers(program: Command, factory: Factory): void {
  const { io } = factory;
  const user = program.command('user').alias('users').description('list, show and create users');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(user.command('list').alias('ls').description('list users'))
    .option('--search <text>', 'match name, email or username')
    .option('--active', 'only active users')
    .option('--blocked', 'only blocked users')
    .action(async (o: { search?: string; active?: boolean; blocked?: boolean; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<User>('/users', {
        search: o.search, active: o.active ? true : undefined, blocked: o.blocked ? true : undefined,
      }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: o.json, noun: 'users' });
      noteMorePages(io, page);
    });

  user
    .command('show')
    .alias('view')
    .description('show a user (yourself when no id is given)')
    .argument('[id]', 'user id')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string | undefined, o: { json?: boolean }, cmd: Command) => {
      const path = id === undefined ? '/user' : `/users/${encodeURIComponent(id)}`;
      printUser(io, await client(cmd).get<User>(path), o.json);
    });

  user
    .command('create')
    .description('create a user (administrators)')
    .requiredOption('--username <name>', 'user name')
    .requiredOption('--email <email>', 'email address')
    .requiredOption('--name <name>', 'full name')
    .option('--password <password>', 'password (at least 8 characters; better: --password-stdin, or type it when asked)')
    .option('--password-stdin', 'read the password from the first line of stdin')
    .option('--admin', 'make the user an administrator')
    .option('--can-create-group', 'allow the user to create groups')
    .option('--projects-limit <n>', 'how many personal projects the user may create', nonNegativeInt)
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  pass show gantry/alice | gantry user create --username alice --email alice@example.com --name "Alice" --password-stdin')
    .action(async (o: { username: string; email: string; name: string; password?: string; passwordStdin?: boolean; admin?: boolean; canCreateGroup?: boolean; projectsLimit?: number; json?: boolean }, cmd: Command) => {
      const password = await newPassword(io, o, o.username);
      const body: Record<string, unknown> = { username: o.username, email: o.email, name: o.name, password };
      if (o.admin) body.admin = true;
      if (o.canCreateGroup) body.can_create_group = true;
      if (o.projectsLimit !== undefined) body.projects_limit = o.projectsLimit;
      const created = await client(cmd).post<User>('/users', body);
      io.err(`Created user ${created.username} (id ${created.id}).\n`);
      printUser(io, created, o.json);
    });

  user
    .command('password')
    .alias('passwd')
    .description('change a user\'s password (administrators; yourself when no user is given)')
    .argument('[user]', 'user name or id (default: you)')
    .option('--password <password>', 'the new password (better: --password-stdin, or type it when asked)')
    .option('--password-stdin', 'read the new password from the first line of stdin')
    .addHelpText('after', '\nThe API of GitLab 8.x lets only administrators set passwords (PUT /users/:id), root included: change the\ninitial root password with `gantry user password` right after the first login.\n\nExamples:\n  gantry user password\n  gantry user password alice --password-stdin < alice-password.txt')
    .action(async (who: string | undefined, o: { password?: string; passwordStdin?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const target = who === undefined ? await api.get<User>('/user') : await findUser(api, who);
      const password = await newPassword(io, o, target.username);
      await api.put(`/users/${target.id}`, { password });
      io.err(`Changed the password of ${target.username}.${who === undefined ? ' Other sessions keep their tokens; log in again where you used the old password.' : ''}\n`);
    });
}

/** A user by name (exactly) or id. */
export async function findUser(api: ApiClient, who: string): Promise<User> {
  if (/^\d+$/.test(who)) return api.get<User>(`/users/${who}`);
  const found = (await api.get<User[]>('/users', { username: who })).find((u) => u.username.toLowerCase() === who.toLowerCase());
  if (!found) throw new CliError(`no user named ${who}`, 'check the name with `gantry user list --search <text>`');
  return found;
}
