/** gantry pipeline list|show|retry|cancel|watch. */
import type { Command } from 'commander';
import { noteMorePages, type ApiClient, type Factory } from '../client.js';
import { CliError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, renderTable, shortTime, type Column } from '../output.js';
import { elapsed, formatSeconds, latestBuilds, pipelineLines, shortSha, stagesOf, type Build, type Pipeline } from '../views/ci-format.js';
import { ciHints, withManualStatus } from '../views/ci-hints.js';
import { watchPipeline, type PipelineSnapshot } from '../views/pipeline-watch.js';
import { connectionFlags, idOrPath, listFlags, listOptions, positiveInt } from './common.js';

const COLUMNS: Column<Pipeline>[] = [
  { header: 'id', value: (p) => p.id },
  { header: 'status', value: (p) => p.status },
  { header: 'ref', value: (p) => p.ref, max: 30 },
  { header: 'sha', value: (p) => shortSha(p.sha) },
  { header: 'user', value: (p) => p.user?.username },
  { header: 'created', value: (p) => shortTime(p.created_at) },
  { header: 'duration', value: (p) => (p.duration !== null ? formatSeconds(p.duration) : elapsed(p.started_at, p.finished_at)) },
];

/** Every build of a pipeline (the builds of its commit, kept when they belong to this pipeline). */
export async function pipelineBuilds(client: ApiClient, project: string, pipeline: Pipeline): Promise<Build[]> {
  const page = await client.list<Build>(`/projects/${idOrPath(project)}/repository/commits/${pipeline.sha}/builds`, {}, { all: true });
  return page.items.filter((b) => !b.pipeline || b.pipeline.id === pipeline.id);
}

/** The pipeline of `id`, or the project's newest one when no id is given. */
async function findPipeline(client: ApiClient, project: string, id: string | undefined): Promise<Pipeline> {
  if (id !== undefined) return client.get<Pipeline>(`/projects/${idOrPath(project)}/pipelines/${pipelineId(id)}`);
  const newest = await client.get<Pipeline[]>(`/projects/${idOrPath(project)}/pipelines`, { per_page: 1 });
  if (!Array.isArray(newest) || newest.length === 0) throw new CliError(`project ${project} has no pipelines`, 'push a commit with a .gitlab-ci.yml to start one');
  return newest[0];
}

function pipelineId(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`"${value}" is not a pipeline id`, 'pipeline ids are positive numbers (see `gantry pipeline list <project>`)', 2);
  return n;
}

/** A pipeline as key/value lines, then its stages and builds. */
function printPipeline(io: IO, p: Pipeline, builds: Build[] | null): void {
  io.out(renderRecord([
    ['id', p.id],
    ['status', p.status],
    ['ref', `${p.ref}${p.tag ? ' (tag)' : ''}`],
    ['sha', p.sha],
    ['user', p.user?.username],
    ['created', shortTime(p.created_at)],
    ['started', shortTime(p.started_at)],
    ['finished', shortTime(p.finished_at)],
    ['duration', p.duration !== null ? formatSeconds(p.duration) : elapsed(p.started_at, p.finished_at)],
    ...(p.yaml_errors ? [['yaml errors', p.yaml_errors] as [string, unknown]] : []),
  ]));
  if (!builds) return;
  if (builds.length === 0) {
    io.out('\nNo builds.\n');
    return;
  }
  const rows = stagesOf(latestBuilds(builds), builds).flatMap((s) => s.builds.map((b) => ({ ...b, stageName: s.name })));
  io.out(`\n${renderTable(rows, [
    { header: 'stage', value: (b) => b.stageName },
    { header: 'build', value: (b) => b.id },
    { header: 'name', value: (b) => b.name },
    { header: 'status', value: (b) => b.status },
    { header: 'duration', value: (b) => elapsed(b.started_at, b.finished_at) },
    { header: 'runner', value: (b) => b.runner?.description ?? (b.runner ? `#${b.runner.id}` : '') },
  ])}`);
}

/** Registers the `pipeline` noun. */
export function registerPipelines(program: Command, factory: Factory): void {
  const { io } = factory;
  const pipeline = program.command('pipeline').alias('pipelines').description('list, show, retry, cancel and watch CI pipelines');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  listFlags(pipeline.command('list').alias('ls').description('list the pipelines of a project, newest first'))
    .argument('<project>', 'id or namespace/path')
    .option('--scope <scope>', 'running (running or pending), branches (newest per branch) or tags')
    .addHelpText('after', '\nExamples:\n  gantry pipeline list root/my-app\n  gantry pipeline list root/my-app --scope running --json')
    .action(async (project: string, o: { scope?: string; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<Pipeline>(`/projects/${idOrPath(project)}/pipelines`, { scope: o.scope }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: o.json, noun: 'pipelines' });
      noteMorePages(io, page);
    });

  pipeline
    .command('show')
    .alias('view')
    .description('show a pipeline with its stages and builds (default: the newest pipeline)')
    .argument('<project>', 'id or namespace/path')
    .argument('[id]', 'pipeline id')
    .option('--json', 'print the raw API JSON ({pipeline, builds})')
    .action(async (project: string, id: string | undefined, o: { json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const p = await findPipeline(api, project, id);
      const builds = await pipelineBuilds(api, project, p);
      if (o.json) return printJson(io, { pipeline: p, builds });
      const shown = await withManualStatus(api, project, p, builds);
      printPipeline(io, p, shown);
      for (const hint of ciHints(project, latestBuilds(shown))) io.err(`${hint}\n`);
    });

  const action = (verb: 'retry' | 'cancel', description: string, done: string) =>
    pipeline
      .command(verb)
      .description(description)
      .argument('<project>', 'id or namespace/path')
      .argument('<id>', 'pipeline id')
      .option('--json', 'print the raw API JSON')
      .action(async (project: string, id: string, o: { json?: boolean }, cmd: Command) => {
        const p = await client(cmd).post<Pipeline>(`/projects/${idOrPath(project)}/pipelines/${pipelineId(id)}/${verb}`);
        io.err(`${done} pipeline #${p.id}; it is now ${p.status}.\n`);
        if (o.json) printJson(io, p);
        else printPipeline(io, p, null);
      });
  action('retry', 'retry the failed builds of a pipeline', 'Retried');
  action('cancel', 'cancel the pending and running builds of a pipeline', 'Canceled');

  pipeline
    .command('watch')
    .description('show a pipeline live until it finishes (default: the newest pipeline); exits 0 when it succeeded')
    .argument('<project>', 'id or namespace/path')
    .argument('[id]', 'pipeline id')
    .option('--interval <seconds>', 'refresh interval', positiveInt, 1)
    .option('--timeout <seconds>', 'give up after this long', positiveInt)
    .option('--json', 'print the final pipeline and builds as JSON (no live view)')
    .addHelpText('after', '\nOn a terminal the view is redrawn in place; otherwise one line is printed per change.\n\nExample:\n  gantry pipeline watch root/my-app')
    .action(async (project: string, id: string | undefined, o: { interval: number; timeout?: number; json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const first = await findPipeline(api, project, id);
      const fetch = async (): Promise<PipelineSnapshot> => {
        const p = await api.get<Pipeline>(`/projects/${idOrPath(project)}/pipelines/${first.id}`);
        return { pipeline: p, builds: await pipelineBuilds(api, project, p) };
      };
      const live = io.stdoutIsTTY && !o.json;
      const watched = await watchPipeline(io, fetch, {
        intervalMs: o.interval * 1000, live, timeoutMs: o.timeout !== undefined ? o.timeout * 1000 : undefined,
        hints: o.json ? undefined : (snap) => ciHints(project, latestBuilds(snap.builds)),
      });
      // Manual builds wait as skipped: say which, and how to start them, once the rest is done.
      const last = o.json ? watched : { ...watched, builds: await withManualStatus(api, project, watched.pipeline, watched.builds) };
      if (!o.json) for (const hint of ciHints(project, latestBuilds(last.builds)).filter((h) => h.includes('manual job'))) io.err(`${hint}\n`);
      if (o.json) printJson(io, last);
      else if (!io.stdoutIsTTY) for (const line of pipelineLines(last.pipeline, last.builds).slice(1)) io.out(`${line}\n`);
      const status = last.pipeline.status;
      if (status === 'success') return;
      if (status === 'failed' || status === 'canceled' || status === 'skipped') throw new CliError(`pipeline #${last.pipeline.id} ${status}`, finishedHint(project, last.pipeline.id, last.builds));
      throw new CliError(`pipeline #${last.pipeline.id} is still ${status} after ${o.timeout} s`);
    });
}

/** What to look at next after a pipeline that did not succeed: the log of its (first) failed build, named by id. */
export function finishedHint(project: string, pipelineId: number, builds: readonly Build[]): string {
  const failed = builds.filter((b) => b.status === 'failed');
  if (failed.length) {
    const more = failed.length > 1 ? ` (${failed.length - 1} more failed: ${failed.slice(1).map((b) => `${b.name} #${b.id}`).join(', ')})` : '';
    return `see the log of ${failed[0]!.name}: gantry build trace ${project} ${failed[0]!.id}${more}`;
  }
  return `see its builds: gantry build list ${project} --pipeline ${pipelineId}`;
}
