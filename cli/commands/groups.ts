/** gantry group list|create|show. */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, renderTable, visibilityName, type Column } from '../output.js';
import { connectionFlags, idOrPath, listFlags, listOptions, visibilityLevel } from './common.js';
import type { Project } from './projects.js';

/** Group fields the CLI shows. */
interface Group {
  id: number;
  name: string;
  path: string;
  description: string | null;
  visibility_level?: number;
  web_url?: string;
  projects?: Project[];
}

const COLUMNS: Column<Group>[] = [
  { header: 'id', value: (g) => g.id },
  { header: 'path', value: (g) => g.path },
  { header: 'name', value: (g) => g.name },
  { header: 'visibility', value: (g) => (g.visibility_level === undefined ? '' : visibilityName(g.visibility_level)) },
  { header: 'description', value: (g) => g.description, max: 50 },
];

/** Show one group (and its projects) as key/value lines, or JSON. */
function printGroup(io: IO, g: Group, json?: boolean): void {
  if (json) return printJson(io, g);
  io.out(renderRecord([
    ['id', g.id],
    ['path', g.path],
    ['name', g.name],
    ['description', g.description],
    ['visibility', g.visibility_level === undefined ? null : visibilityName(g.visibility_level)],
    ['web url', g.web_url],
  ]));
  if (g.projects?.length) {
    io.out('\n');
    io.out(renderTable(g.projects, [
      { header: 'project id', value: (p) => p.id },
      { header: 'path', value: (p) => p.path_with_namespace },
      { header: 'visibility', value: (p) => visibilityName(p.visibility_level) },
    ]));
  }
}

/** Registers the `group` noun. */
export function registerGroups(program: Command, factory: Factory): void {
  const { io } = factory;
  const group = program.command('group').alias('groups').description('list, create and show groups');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(group.command('list').alias('ls').description('list your groups (every group for administrators)'))
    .option('--search <text>', 'match name or path')
    .action(async (o: { search?: string; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Group>('/groups', { search: o.search }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: o.json, noun: 'groups' });
      noteMorePages(io, page);
    });

  group
    .command('create')
    .description('create a group (you become its owner)')
    .argument('<name>', 'group name')
    .option('--path <path>', 'URL path (default: the name, lower-cased with dashes)')
    .option('--description <text>', 'description')
    .option('--visibility <level>', 'private, internal or public', visibilityLevel)
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry group create Platform --path platform --visibility internal')
    .action(async (name: string, o: { path?: string; description?: string; visibility?: number; json?: boolean }, cmd: Command) => {
      const path = o.path ?? name.trim().toLowerCase().replace(/[^a-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '');
      const body: Record<string, unknown> = { name, path };
      if (o.description !== undefined) body.description = o.description;
      if (o.visibility !== undefined) body.visibility_level = o.visibility;
      const created = await client(cmd).post<Group>('/groups', body);
      io.err(`Created group ${created.path} (id ${created.id}).\n`);
      printGroup(io, created, o.json);
    });

  group
    .command('show')
    .alias('view')
    .description('show a group and its projects')
    .argument('<group>', 'id or path')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, o: { json?: boolean }, cmd: Command) => {
      printGroup(io, await client(cmd).get<Group>(`/groups/${idOrPath(id)}`), o.json);
    });
}
