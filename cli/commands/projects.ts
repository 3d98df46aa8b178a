/** gantry project list|create|show|update|delete|star|unstar|archive|unarchive|fork. */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, visibilityName, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, idOrPath, listFlags, listOptions, visibilityLevel } from './common.js';

/** The project fields the CLI shows (the API sends more; --json prints everything). */
export interface Project {
  id: number;
  name: string;
  path: string;
  path_with_namespace: string;
  description: string | null;
  visibility_level: number;
  default_branch: string | null;
  archived: boolean;
  star_count: number;
  forks_count: number;
  open_issues_count?: number;
  web_url: string;
  http_url_to_repo: string;
  ssh_url_to_repo: string;
  created_at: string;
  last_activity_at: string;
  forked_from_project?: { path_with_namespace: string } | null;
}

const COLUMNS: Column<Project>[] = [
  { header: 'id', value: (p) => p.id },
  { header: 'path', value: (p) => p.path_with_namespace },
  { header: 'visibility', value: (p) => visibilityName(p.visibility_level) },
  { header: 'stars', value: (p) => p.star_count },
  { header: 'archived', value: (p) => p.archived },
  { header: 'last activity', value: (p) => shortTime(p.last_activity_at) },
  { header: 'description', value: (p) => p.description, max: 50 },
];

/** Show one project as key/value lines, or JSON. */
function printProject(io: IO, p: Project, json?: boolean): void {
  if (json) return printJson(io, p);
  io.out(renderRecord([
    ['id', p.id],
    ['path', p.path_with_namespace],
    ['name', p.name],
    ['description', p.description],
    ['visibility', visibilityName(p.visibility_level)],
    ['default branch', p.default_branch],
    ['archived', p.archived],
    ['stars', p.star_count],
    ['forks', p.forks_count],
    ...(p.forked_from_project ? [['forked from', p.forked_from_project.path_with_namespace] as [string, unknown]] : []),
    ['web url', p.web_url],
    ['clone (http)', p.http_url_to_repo],
    ['created', shortTime(p.created_at)],
    ['last activity', shortTime(p.last_activity_at)],
  ]));
}

const FEATURES = [
  ['issues', 'issues_enabled'],
  ['merge-requests', 'merge_requests_enabled'],
  ['builds', 'builds_enabled'],
  ['wiki', 'wiki_enabled'],
  ['snippets', 'snippets_enabled'],
  ['public-builds', 'public_builds'],
] as const;

/** Add --<feature>/--no-<feature> pairs and the common attribute flags of create and update. */
function attributeFlags(cmd: Command): Command {
  cmd
    .option('--path <path>', 'URL path (default: generated from the name)')
    .option('--description <text>', 'description')
    .option('--visibility <level>', 'private, internal or public', visibilityLevel);
  for (const [flag] of FEATURES) cmd.option(`--${flag}`, `enable ${flag.replace('-', ' ')}`).option(`--no-${flag}`, `disable ${flag.replace('-', ' ')}`);
  return cmd;
}

/** The API body of the attribute flags that were given. */
function attributes(o: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.name !== undefined) body.name = o.name;
  if (o.path !== undefined) body.path = o.path;
  if (o.description !== undefined) body.description = o.description;
  if (o.visibility !== undefined) body.visibility_level = o.visibility;
  if (o.defaultBranch !== undefined) body.default_branch = o.defaultBranch;
  for (const [flag, field] of FEATURES) {
    const key = flag.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    if (o[key] !== undefined) body[field] = o[key];
  }
  return body;
}

/** A namespace given as id or path -> its id (GET /namespaces?search=). */
export async function namespaceId(client: ApiClient, value: string): Promise<number> {
  if (/^\d+$/.test(value)) return Number(value);
  const found = await client.get<Array<{ id: number; path: string }>>('/namespaces', { search: value, per_page: 100 });
  const match = found.find((n) => n.path.toLowerCase() === value.toLowerCase());
  if (!match) throw new CliError(`no namespace "${value}" you can create projects in`, 'use your user name or a group you belong to (`gantry group list`)');
  return match.id;
}

/** Registers the `project` noun. */
export function registerProjects(program: Command, factory: Factory): void {
  const { io } = factory;
  const project = program.command('project').alias('projects').description('list, create, show, change and delete projects');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(project.command('list').alias('ls').description('list projects you can access'))
    .option('--owned', 'only projects you own')
    .option('--starred', 'only projects you starred')
    .option('--instance', 'every project on the instance (administrators)')
    .option('--search <text>', 'match name, path or description')
    .option('--visibility <level>', 'private, internal or public')
    .option('--archived', 'only archived projects')
    .option('--no-archived', 'only projects that are not archived')
    .option('--order-by <field>', 'id, name, path, created_at, updated_at or last_activity_at')
    .option('--sort <dir>', 'asc or desc')
    .addHelpText('after', '\nExamples:\n  gantry project list\n  gantry project list --owned --search api --json\n  gantry project list --instance --all')
    .action(async (o: Record<string, string | boolean | number | undefined>, cmd: Command) => {
      const scopes = ['owned', 'starred', 'instance'].filter((s) => o[s]);
      if (scopes.length > 1) throw new UsageError('choose one of --owned, --starred and --instance');
      const path = { owned: '/projects/owned', starred: '/projects/starred', instance: '/projects/all' }[scopes[0] as string] ?? '/projects';
      if (o.visibility !== undefined) visibilityLevel(String(o.visibility));
      const page = await client(cmd).list<Project>(path, {
        search: o.search as string | undefined,
        visibility: o.visibility as string | undefined,
        archived: o.archived as boolean | undefined,
        order_by: o.orderBy as string | undefined,
        sort: o.sort as string | undefined,
      }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'projects' });
      noteMorePages(io, page);
    });

  attributeFlags(project.command('create').description('create a project (in your namespace unless --namespace is given)'))
    .argument('<name>', 'project name')
    .option('--namespace <id|path>', 'group (or user) namespace to create it in')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry project create my-app\n  gantry project create api --namespace platform --visibility internal --description "Public API"')
    .action(async (name: string, o: Record<string, unknown>, cmd: Command) => {
      const api = client(cmd);
      const body = attributes({ ...o, name });
      if (o.namespace !== undefined) body.namespace_id = await namespaceId(api, String(o.namespace));
      const created = await api.post<Project>('/projects', body);
      io.err(`Created project ${created.path_with_namespace} (id ${created.id}).\n`);
      printProject(io, created, Boolean(o.json));
    });

  project
    .command('show')
    .alias('view')
    .description('show one project')
    .argument('<project>', 'id or namespace/path')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, o: { json?: boolean }, cmd: Command) => {
      printProject(io, await client(cmd).get<Project>(`/projects/${idOrPath(id)}`), o.json);
    });

  attributeFlags(project.command('update').alias('edit').description('change a project\'s name, path, description, visibility or features'))
    .argument('<project>', 'id or namespace/path')
    .option('--name <name>', 'new name')
    .option('--default-branch <branch>', 'default branch')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry project update root/my-app --description "Shop front" --visibility public --no-wiki')
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      const body = attributes(o);
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change', 'give at least one of --name, --path, --description, --visibility, --default-branch or a feature flag');
      const updated = await client(cmd).put<Project>(`/projects/${idOrPath(id)}`, body);
      io.err(`Updated project ${updated.path_with_namespace}.\n`);
      printProject(io, updated, Boolean(o.json));
    });

  project
    .command('delete')
    .alias('rm')
    .description('delete a project with its repository, issues, merge requests and builds')
    .argument('<project>', 'id or namespace/path')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (id: string, o: { yes?: boolean }, cmd: Command) => {
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('deleting needs confirmation', 'add --yes');
        if (!(await confirm(io, `Delete project ${id} and everything in it?`))) throw new CliError('not deleted');
      }
      await client(cmd).delete(`/projects/${idOrPath(id)}`);
      io.err(`Deleted project ${id}.\n`);
    });

  const toggle = (verb: string, method: 'POST' | 'DELETE', suffix: string, done: string, already: string, description: string) =>
    project
      .command(verb)
      .description(description)
      .argument('<project>', 'id or namespace/path')
      .option('--json', 'print the raw API JSON')
      .action(async (id: string, o: { json?: boolean }, cmd: Command) => {
        const res = await client(cmd).request<Project | null>(method, `/projects/${idOrPath(id)}/${suffix}`);
        if (res.status === 304 || !res.data) {
          io.err(`Project ${id} ${already}.\n`);
          return;
        }
        io.err(`${done} ${res.data.path_with_namespace} (stars: ${res.data.star_count}, archived: ${res.data.archived ? 'yes' : 'no'}).\n`);
        if (o.json) printJson(io, res.data);
      });
  toggle('star', 'POST', 'star', 'Starred', 'is already starred', 'star a project');
  toggle('unstar', 'DELETE', 'star', 'Unstarred', 'was not starred', 'remove your star from a project');
  toggle('archive', 'POST', 'archive', 'Archived', 'is already archived', 'archive a project (read-only; owners and administrators)');
  toggle('unarchive', 'POST', 'unarchive', 'Unarchived', 'is not archived', 'unarchive a project');

  project
    .command('fork')
    .description('fork a project into your namespace (or --namespace)')
    .argument('<project>', 'id or namespace/path')
    .option('--namespace <id|path>', 'namespace to fork into')
    .option('--json', 'print the raw API JSON')
    .action(async (id: string, o: { namespace?: string; json?: boolean }, cmd: Command) => {
      const body = o.namespace !== undefined ? { namespace: o.namespace } : {};
      const fork = await client(cmd).post<Project>(`/projects/fork/${idOrPath(id)}`, body);
      io.err(`Forked ${id} to ${fork.path_with_namespace} (id ${fork.id}).\n`);
      printProject(io, fork, o.json);
    });
}
