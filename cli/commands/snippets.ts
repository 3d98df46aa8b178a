/**
 * gantry snippet list|create|show|edit|delete: a project's snippets (code kept in the project with its own visibility).
 * The project is the one named, -R, or the clone's (main.ts fills it in). `show` prints the code itself, so it pipes.
 */
import { basename } from 'node:path';
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { readTextFile } from '../editor.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, idOrPath, listFlags, listOptions, positiveInt, visibilityLevel } from './common.js';

/** A project snippet as the API shows it (8.13 ProjectSnippet). */
export interface Snippet {
  id: number;
  title: string;
  file_name: string;
  author: { username: string } | null;
  created_at: string;
  updated_at: string;
  web_url: string;
}

const PROJECT_ARG = 'id or namespace/path (default: the project of the clone you are in)';
const snippetsPath = (project: string, id?: number) => `/projects/${idOrPath(project)}/snippets${id === undefined ? '' : `/${id}`}`;

const COLUMNS: Column<Snippet>[] = [
  { header: 'id', value: (s) => s.id },
  { header: 'title', value: (s) => s.title, max: 50 },
  { header: 'file', value: (s) => s.file_name, max: 40 },
  { header: 'author', value: (s) => s.author?.username ?? '' },
  { header: 'updated', value: (s) => shortTime(s.updated_at) },
];

/** The code of a new or changed snippet: a file, or stdin for `-` (or when no file is named and stdin is not a terminal). */
async function readCode(factory: Factory, file: string | undefined): Promise<{ code: string; name: string | null }> {
  const { io } = factory;
  if (file === undefined && io.stdinIsTTY) throw new UsageError('no code given', 'name a file, or pipe the code in (`-` reads stdin)');
  const source = file ?? '-';
  const code = await readTextFile(io, source);
  if (code.trim() === '') throw new UsageError(`${source === '-' ? 'stdin' : source} is empty`, 'a snippet needs some code');
  return { code, name: source === '-' ? null : basename(source) };
}

/** Print a snippet's fields (or its JSON). */
function printSnippet(factory: Factory, s: Snippet, json?: boolean): void {
  if (json) return printJson(factory.io, s);
  factory.io.out(renderRecord([
    ['id', s.id], ['title', s.title], ['file', s.file_name], ['author', s.author?.username ?? ''], ['updated', shortTime(s.updated_at)], ['url', s.web_url],
  ]));
}

/** Registers the verbs of the `snippet` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerSnippets(snippet: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(snippet.command('list').alias('ls').description('list the snippets of a project you may see, newest first'))
    .argument('<project>', PROJECT_ARG)
    .action(async (project: string, o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Snippet>(snippetsPath(project), {}, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'snippets' });
      noteMorePages(io, page);
    });

  snippet
    .command('create')
    .alias('new')
    .description('create a snippet from a file or stdin (reporters and up; the project needs snippets enabled)')
    .argument('<project>', PROJECT_ARG)
    .argument('[file]', 'the code: a file, or - for stdin (the default when stdin is piped)')
    .requiredOption('-t, --title <title>', 'the title')
    .option('-n, --file-name <name>', 'the file name shown (default: the file\'s own name; required with stdin)')
    .option('--visibility <level>', 'private (members, the default), internal (signed-in users) or public', visibilityLevel, 0)
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry snippet create root/my-app deploy.sh --title "Deploy script"\n  kubectl get pods | gantry snippet create root/my-app -t Pods -n pods.txt')
    .action(async (project: string, file: string | undefined, o: { title: string; fileName?: string; visibility: number; json?: boolean }, cmd: Command) => {
      const { code, name } = await readCode(factory, file);
      const fileName = o.fileName ?? name;
      if (!fileName) throw new UsageError('no file name for code read from stdin', 'add --file-name <name>');
      const s = await client(cmd).post<Snippet>(snippetsPath(project), { title: o.title, file_name: fileName, code, visibility_level: o.visibility });
      io.err(`Created snippet ${s.id} "${s.title}" in ${project}: ${s.web_url}\n`);
      if (o.json) printJson(io, s);
    });

  snippet
    .command('show')
    .alias('view')
    .description('print the code of a snippet (--info: its fields instead)')
    .argument('<project>', PROJECT_ARG)
    .argument('<id>', 'snippet id', positiveInt)
    .option('--info', 'print the title, file name, author and URL instead of the code')
    .option('--json', 'print the raw API JSON of the snippet')
    .action(async (project: string, id: number, o: { info?: boolean; json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      if (o.info || o.json) return printSnippet(factory, await api.get<Snippet>(snippetsPath(project, id)), o.json);
      const code = await api.get<string>(`${snippetsPath(project, id)}/raw`);
      io.out(typeof code === 'string' ? code : JSON.stringify(code));
    });

  snippet
    .command('edit')
    .description('change a snippet\'s title, file name, visibility or code (your own; admins any)')
    .argument('<project>', PROJECT_ARG)
    .argument('<id>', 'snippet id', positiveInt)
    .option('-t, --title <title>', 'a new title')
    .option('-n, --file-name <name>', 'a new file name')
    .option('--visibility <level>', 'private, internal or public', visibilityLevel)
    .option('-f, --file <file>', 'new code from a file, or - for stdin')
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, id: number, o: { title?: string; fileName?: string; visibility?: number; file?: string; json?: boolean }, cmd: Command) => {
      const body: Record<string, unknown> = {};
      if (o.title !== undefined) body.title = o.title;
      if (o.fileName !== undefined) body.file_name = o.fileName;
      if (o.visibility !== undefined) body.visibility_level = o.visibility;
      if (o.file !== undefined) body.code = (await readCode(factory, o.file)).code;
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change', 'give --title, --file-name, --visibility or --file');
      const s = await client(cmd).put<Snippet>(snippetsPath(project, id), body);
      io.err(`Updated snippet ${s.id} "${s.title}".\n`);
      if (o.json) printJson(io, s);
    });

  snippet
    .command('delete')
    .alias('rm')
    .description('delete a snippet with its comments (your own; admins any)')
    .argument('<project>', PROJECT_ARG)
    .argument('<id>', 'snippet id', positiveInt)
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (project: string, id: number, o: { yes?: boolean }, cmd: Command) => {
      const api = client(cmd);
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('deleting needs confirmation', 'add --yes');
        const s = await api.get<Snippet>(snippetsPath(project, id));
        if (!(await confirm(io, `Delete snippet ${id} "${s.title}" of ${project}?`))) throw new CliError('not deleted');
      }
      await api.delete(snippetsPath(project, id));
      io.err(`Deleted snippet ${id} of ${project}.\n`);
    });
}
