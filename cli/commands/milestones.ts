/** gantry milestone list|show|create|close|activate: a project's milestones (masters and up change them). */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { at, findMilestone, type Issue, type Milestone } from './collaboration.js';
import { connectionFlags, idOrPath, listFlags, listOptions } from './common.js';

const COLUMNS: Column<Milestone>[] = [
  { header: 'iid', value: (m) => `%${m.iid}` },
  { header: 'title', value: (m) => m.title, max: 40 },
  { header: 'state', value: (m) => m.state },
  { header: 'due', value: (m) => m.due_date ?? '' },
  { header: 'description', value: (m) => m.description, max: 50 },
];

/** Milestone metadata as key/value lines. */
function milestoneRecord(m: Milestone): string {
  return renderRecord([
    ['milestone', `%${m.iid} ${m.title}`],
    ['id', m.id],
    ['state', m.state],
    ['due date', m.due_date ?? ''],
    ['description', m.description],
    ['created', shortTime(m.created_at)],
    ['updated', shortTime(m.updated_at)],
  ]);
}

const milestonesPath = (project: string) => `/projects/${idOrPath(project)}/milestones`;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Adds the verbs of the `milestone` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerMilestones(milestone: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));
  const print = (m: Milestone, json?: boolean) => (json ? printJson(io, m) : io.out(milestoneRecord(m)));

  listFlags(milestone.command('list').alias('ls').description('list the milestones of a project'))
    .argument('<project>', 'id or namespace/path')
    .option('-s, --state <state>', 'active, closed or all (default: all)')
    .action(async (project: string, o: { state?: string; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      if (o.state !== undefined && !['active', 'closed', 'all'].includes(o.state)) throw new UsageError(`--state must be active, closed or all, not "${o.state}"`);
      const state = o.state === 'all' ? undefined : o.state;
      const page = await client(cmd).list<Milestone>(milestonesPath(project), { state }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'milestones' });
      noteMorePages(io, page);
    });

  milestone
    .command('show')
    .alias('view')
    .description('show a milestone and its issues')
    .argument('<project>', 'id or namespace/path')
    .argument('<milestone>', 'title, or number (3 or %3)')
    .option('--json', 'print the milestone JSON with `issues` added')
    .action(async (project: string, ref: string, o: { json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const m = await findMilestone(api, project, ref);
      const issues = (await api.list<Issue>(`${milestonesPath(project)}/${m.id}/issues`, {}, { all: true })).items;
      if (o.json) return printJson(io, { ...m, issues });
      const open = issues.filter((i) => i.state !== 'closed').length;
      io.out(milestoneRecord(m));
      io.out(`issues:      ${issues.length} (${open} open, ${issues.length - open} closed)\n`);
      for (const i of issues) io.out(`  #${i.iid}  ${i.state.padEnd(6)}  ${i.title}${i.assignee ? `  ${at(i.assignee)}` : ''}\n`);
    });

  milestone
    .command('create')
    .description('create a milestone (masters and up)')
    .argument('<project>', 'id or namespace/path')
    .argument('<title>', 'milestone title')
    .option('-d, --description <text>', 'description')
    .option('--due-date <date>', 'YYYY-MM-DD')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExample:\n  gantry milestone create root/my-app v1.0 --due-date 2026-12-31')
    .action(async (project: string, title: string, o: { description?: string; dueDate?: string; json?: boolean }, cmd: Command) => {
      if (o.dueDate !== undefined && !DATE.test(o.dueDate)) throw new UsageError(`--due-date must be YYYY-MM-DD, not "${o.dueDate}"`);
      const body: Record<string, unknown> = { title };
      if (o.description !== undefined) body.description = o.description;
      if (o.dueDate !== undefined) body.due_date = o.dueDate;
      const created = await client(cmd).post<Milestone>(milestonesPath(project), body);
      io.err(`Created milestone %${created.iid} ${created.title} in ${project}.\n`);
      print(created, o.json);
    });

  const stateChange = (verb: 'close' | 'activate', target: string, done: string) =>
    milestone
      .command(verb)
      .description(`${verb} a milestone (masters and up)`)
      .argument('<project>', 'id or namespace/path')
      .argument('<milestone>', 'title, or number (3 or %3)')
      .option('--json', 'print the raw API JSON')
      .action(async (project: string, ref: string, o: { json?: boolean }, cmd: Command) => {
        const api = client(cmd);
        const m = await findMilestone(api, project, ref);
        if (m.state === target) {
          io.err(`Milestone ${m.title} is already ${target}.\n`);
          if (o.json) printJson(io, m);
          return;
        }
        const updated = await api.put<Milestone>(`${milestonesPath(project)}/${m.id}`, { state_event: verb });
        io.err(`${done} milestone ${updated.title} in ${project}.\n`);
        if (o.json) printJson(io, updated);
      });
  stateChange('close', 'closed', 'Closed');
  stateChange('activate', 'active', 'Activated');
}
