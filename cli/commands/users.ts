/** gantry user list|create|show. */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { connectionFlags, listFlags, listOptions, nonNegativeInt } from './common.js';

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
    .requiredOption('--password <password>', 'password (at least 8 characters)')
    .option('--admin', 'make the user an administrator')
    .option('--can-create-group', 'allow the user to create groups')
    .option('--projects-limit <n>', 'how many personal projects the user may create', nonNegativeInt)
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry user create --username alice --email alice@example.com --name "Alice" --password s3cret-pass')
    .action(async (o: { username: string; email: string; name: string; password: string; admin?: boolean; canCreateGroup?: boolean; projectsLimit?: number; json?: boolean }, cmd: Command) => {
      const body: Record<string, unknown> = { username: o.username, email: o.email, name: o.name, password: o.password };
      if (o.admin) body.admin = true;
      if (o.canCreateGroup) body.can_create_group = true;
      if (o.projectsLimit !== undefined) body.projects_limit = o.projectsLimit;
      const created = await client(cmd).post<User>('/users', body);
      io.err(`Created user ${created.username} (id ${created.id}).\n`);
      printUser(io, created, o.json);
    });
}
