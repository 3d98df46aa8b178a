/** gantry label list|create|update|delete: a project's labels (reporters and up change them). */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import type { Label } from './collaboration.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

const COLOR = /^#[0-9A-Fa-f]{6}$/;

const COLUMNS: Column<Label>[] = [
  { header: 'name', value: (l) => l.name },
  { header: 'color', value: (l) => l.color },
  { header: 'open issues', value: (l) => l.open_issues_count ?? '' },
  { header: 'closed issues', value: (l) => l.closed_issues_count ?? '' },
  { header: 'open mrs', value: (l) => l.open_merge_requests_count ?? '' },
  { header: 'subscribed', value: (l) => l.subscribed ?? '' },
  { header: 'description', value: (l) => l.description, max: 50 },
];

/** Show one label as key/value lines, or JSON. */
function printLabel(io: IO, l: Label, json?: boolean): void {
  if (json) return printJson(io, l);
  io.out(renderRecord([['name', l.name], ['color', l.color], ['description', l.description ?? '']]));
}

/** A colour as the API wants it: `#RRGGBB` (the # may be left out on the command line). */
function color(value: string): string {
  const c = value.startsWith('#') ? value : `#${value}`;
  if (!COLOR.test(c)) throw new UsageError(`"${value}" is not a colour`, 'use # and 6 hex digits, like #d9534f');
  return c;
}

const labelsPath = (project: string) => `/projects/${idOrPath(project)}/labels`;

/** Adds the verbs of the `label` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerLabels(label: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(label.command('list').alias('ls').description('list the labels of a project with their issue counts'))
    .argument('<project>', 'id or namespace/path')
    .action(async (project: string, o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Label>(labelsPath(project), {}, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'labels' });
      noteMorePages(io, page);
    });

  label
    .command('create')
    .description('create a label (reporters and up)')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'label name')
    .requiredOption('-c, --color <color>', '# and 6 hex digits, like #d9534f')
    .option('-d, --description <text>', 'description')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry label create root/my-app bug --color "#d9534f" --description "Something is broken"')
    .action(async (project: string, name: string, o: { color: string; description?: string; json?: boolean }, cmd: Command) => {
      const body: Record<string, unknown> = { name, color: color(o.color) };
      if (o.description !== undefined) body.description = o.description;
      const created = await client(cmd).post<Label>(labelsPath(project), body);
      io.err(`Created label ${created.name} in ${project}.\n`);
      printLabel(io, created, o.json);
    });

  label
    .command('update')
    .alias('edit')
    .description('rename a label or change its colour or description')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'current label name')
    .option('--new-name <name>', 'new name')
    .option('-c, --color <color>', 'new colour, # and 6 hex digits')
    .option('-d, --description <text>', 'new description')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry label update root/my-app bug --new-name defect --color "#ff0000"')
    .action(async (project: string, name: string, o: { newName?: string; color?: string; description?: string; json?: boolean }, cmd: Command) => {
      if (o.newName === undefined && o.color === undefined) throw new UsageError('nothing to change', 'give --new-name and/or --color (and optionally --description)');
      const body: Record<string, unknown> = { name };
      if (o.newName !== undefined) body.new_name = o.newName;
      if (o.color !== undefined) body.color = color(o.color);
      if (o.description !== undefined) body.description = o.description;
      const updated = await client(cmd).put<Label>(labelsPath(project), body);
      io.err(`Updated label ${updated.name} in ${project}.\n`);
      printLabel(io, updated, o.json);
    });

  label
    .command('delete')
    .alias('rm')
    .description('delete a label (it is removed from every issue and merge request)')
    .argument('<project>', 'id or namespace/path')
    .argument('<name>', 'label name')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .option('--json', 'print the deleted label as JSON')
    .action(async (project: string, name: string, o: { yes?: boolean; json?: boolean }, cmd: Command) => {
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('deleting needs confirmation', 'add --yes');
        if (!(await confirm(io, `Delete label "${name}" of ${project}?`))) throw new CliError('not deleted');
      }
      const res = await client(cmd).request<Record<string, unknown>>('DELETE', labelsPath(project), { query: { name } });
      io.err(`Deleted label ${name} of ${project}.\n`);
      if (o.json) printJson(io, res.data);
    });
}
