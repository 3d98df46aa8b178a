/** gantry build list|show|retry|cancel|play|erase|artifacts|trace. */
import { createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { pipeline as pipe } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Command } from 'commander';
import { HttpClient, HttpError } from '../../shared/http.js';
import { authHeaders, noteMorePages, toCliError, type ApiClient, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { printJson, printList, renderRecord, shortTime, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { elapsed, formatBytes, shortSha, type Build, type Pipeline } from '../views/ci-format.js';
import { followTrace } from '../views/trace-stream.js';
import { cloneProject } from '../current-project.js';
import { connectionFlags, idOrPath, listFlags, listOptions, positiveInt } from './common.js';
import { pipelineBuilds } from './pipelines.js';

const BUILD_SCOPES = ['created', 'pending', 'running', 'failed', 'success', 'canceled', 'skipped'];

const COLUMNS: Column<Build>[] = [
  { header: 'id', value: (b) => b.id },
  { header: 'status', value: (b) => b.status },
  { header: 'stage', value: (b) => b.stage },
  { header: 'name', value: (b) => b.name, max: 30 },
  { header: 'ref', value: (b) => b.ref, max: 24 },
  { header: 'pipeline', value: (b) => b.pipeline?.id },
  { header: 'duration', value: (b) => elapsed(b.started_at, b.finished_at) },
  { header: 'created', value: (b) => shortTime(b.created_at) },
];

function buildId(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`"${value}" is not a build id`, 'build ids are positive numbers (see `gantry build list <project>`)');
  return n;
}

/** One build as key/value lines, or JSON. */
function printBuild(io: IO, b: Build, json?: boolean): void {
  if (json) return printJson(io, b);
  io.out(renderRecord([
    ['id', b.id],
    ['name', b.name],
    ['stage', b.stage],
    ['status', b.status],
    ['ref', `${b.ref}${b.tag ? ' (tag)' : ''}`],
    ['pipeline', b.pipeline ? `#${b.pipeline.id} (${b.pipeline.status})` : ''],
    ['commit', b.commit ? `${shortSha(b.commit.id)} ${b.commit.title}` : ''],
    ['user', b.user?.username],
    ['runner', b.runner ? `#${b.runner.id} ${b.runner.description ?? ''}` : ''],
    ['created', shortTime(b.created_at)],
    ['started', shortTime(b.started_at)],
    ['finished', shortTime(b.finished_at)],
    ['duration', elapsed(b.started_at, b.finished_at)],
    ['coverage', b.coverage],
    ['artifacts', b.artifacts_file ? `${b.artifacts_file.filename} (${formatBytes(b.artifacts_file.size)})` : b.download_url ?? ''],
  ]));
}

/** The file name from a Content-Disposition header (filename*= preferred), reduced to a base name. */
export function dispositionFilename(header: string | undefined): string | null {
  if (!header) return null;
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  let name: string | null = null;
  if (star) {
    try {
      name = decodeURIComponent(star[1].trim());
    } catch {
      name = null;
    }
  }
  if (!name) name = /filename\s*=\s*(?:"([^"]*)"|([^;]+))/.exec(header)?.slice(1).find((x) => x !== undefined)?.trim() ?? null;
  if (!name) return null;
  const base = basename(name.replace(/\\/g, '/'));
  return base && base !== '.' && base !== '..' ? base : null;
}

/** Download a URL path of the API to a file with progress on stderr; returns the file and its size. */
async function download(io: IO, api: ApiClient, path: string, query: Record<string, string>, out: string | undefined, fallbackName: string, force: boolean): Promise<{ file: string; size: number }> {
  const http = new HttpClient({ baseUrl: `${api.connection.url}/api/v3`, headers: authHeaders(await api.fresh()), timeoutMs: 120_000 });
  try {
    let res;
    try {
      res = await http.send('GET', path, { query, headers: { accept: '*/*' } });
    } catch (e) {
      throw toCliError(e, api.connection.url);
    }
    if (res.status !== 200) {
      const text = await res.body.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* text */
      }
      throw toCliError(new HttpError('GET', path, res.status, body), api.connection.url);
    }
    const file = resolve(out ?? dispositionFilename(res.headers['content-disposition']) ?? fallbackName);
    if (existsSync(file) && !force) {
      await res.body.dump();
      throw new CliError(`${file} exists`, 'choose another file with -o, or add --force to overwrite it');
    }
    const total = Number(res.headers['content-length']) || null;
    let done = 0;
    let lastDraw = 0;
    const draw = (final: boolean) => {
      if (!io.stderrIsTTY) return;
      const now = Date.now();
      if (!final && now - lastDraw < 100) return;
      lastDraw = now;
      const pct = total ? ` (${Math.floor((done / total) * 100)}%)` : '';
      io.err(`\rDownloading ${formatBytes(done)}${total ? ` of ${formatBytes(total)}` : ''}${pct}   ${final ? '\n' : ''}`);
    };
    const progress = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        done += chunk.length;
        draw(false);
        cb(null, chunk);
      },
    });
    const tmp = `${file}.part`;
    try {
      await pipe(res.body, progress, createWriteStream(tmp));
      renameSync(tmp, file);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw new CliError(`download failed: ${(e as Error).message}`, 'try again; the server log has details if it keeps failing');
    }
    draw(true);
    return { file, size: done };
  } finally {
    await http.close();
  }
}

/** Registers the `build` noun. */
export function registerBuilds(program: Command, factory: Factory): void {
  const { io } = factory;
  const build = program.command('build').alias('builds').description('list, show, retry, cancel, play and erase CI builds; their traces and artifacts');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));
  const buildPath = (project: string, id: string) => `/projects/${idOrPath(project)}/builds/${buildId(id)}`;

  listFlags(build.command('list').alias('ls').description('list the builds of a project (or of one pipeline), newest first'))
    .argument('<project>', 'id or namespace/path')
    .option('--scope <statuses>', `only these statuses, comma-separated (${BUILD_SCOPES.join(', ')})`)
    .option('--pipeline <id>', 'only the builds of this pipeline', positiveInt)
    .addHelpText('after', '\nExamples:\n  gantry build list root/my-app --scope running,pending\n  gantry build list root/my-app --pipeline 12 --json')
    .action(async (project: string, o: { scope?: string; pipeline?: number; json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const api = client(cmd);
      const scope = o.scope ? o.scope.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
      const bad = scope?.filter((s) => !BUILD_SCOPES.includes(s)) ?? [];
      if (bad.length) throw new UsageError(`unknown build status ${bad.map((s) => `"${s}"`).join(', ')}`, `use ${BUILD_SCOPES.join(', ')}`);
      if (o.pipeline !== undefined) {
        const p = await api.get<Pipeline>(`/projects/${idOrPath(project)}/pipelines/${o.pipeline}`);
        const builds = (await pipelineBuilds(api, project, p)).filter((b) => !scope || scope.includes(b.status));
        return printList(io, builds, COLUMNS, { json: o.json, noun: 'builds' });
      }
      const page = await api.list<Build>(`/projects/${idOrPath(project)}/builds`, { scope }, listOptions(o));
      printList(io, page.items, COLUMNS, { json: o.json, noun: 'builds' });
      noteMorePages(io, page);
    });

  build
    .command('show')
    .alias('view')
    .description('show one build')
    .argument('<project>', 'id or namespace/path')
    .argument('<id>', 'build id')
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, id: string, o: { json?: boolean }, cmd: Command) => {
      printBuild(io, await client(cmd).get<Build>(buildPath(project, id)), o.json);
    });

  const action = (verb: 'retry' | 'cancel' | 'play', description: string, done: (b: Build, id: string) => string) =>
    build
      .command(verb)
      .description(description)
      .argument('<project>', 'id or namespace/path')
      .argument('<id>', 'build id')
      .option('--json', 'print the raw API JSON')
      .action(async (project: string, id: string, o: { json?: boolean }, cmd: Command) => {
        const b = await client(cmd).post<Build>(`${buildPath(project, id)}/${verb}`);
        io.err(done(b, id));
        printBuild(io, b, o.json);
      });
  action('retry', 'run a finished build again (as a new build)', (b, id) => `Retried build #${id} as build #${b.id} (${b.status}).\n`);
  action('cancel', 'cancel a pending or running build', (b) => `Build #${b.id} is ${b.status}.\n`);
  action('play', 'start a manual build', (b) => `Started manual build #${b.id} (${b.name}); it is ${b.status}.\n`);

  build
    .command('erase')
    .description('erase a finished build\'s trace and artifacts')
    .argument('<project>', 'id or namespace/path')
    .argument('<id>', 'build id')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .option('--json', 'print the raw API JSON')
    .action(async (project: string, id: string, o: { yes?: boolean; json?: boolean }, cmd: Command) => {
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('erasing needs confirmation', 'add --yes');
        if (!(await confirm(io, `Erase the trace and artifacts of build #${id}?`))) throw new CliError('not erased');
      }
      const b = await client(cmd).post<Build>(`${buildPath(project, id)}/erase`);
      io.err(`Erased build #${b.id}.\n`);
      printBuild(io, b, o.json);
    });

  build
    .command('artifacts')
    .description('download a build\'s artifacts archive (or the newest successful one of --ref and --job)')
    .argument('<project>', 'id or namespace/path')
    .argument('[id]', 'build id')
    .option('-o, --output <file>', 'where to save it (default: the archive\'s file name, in the current directory)')
    .option('--ref <ref>', 'with --job: the newest successful build of this branch or tag')
    .option('--job <name>', 'with --ref: the build (job) name')
    .option('-f, --force', 'overwrite the output file')
    .addHelpText('after', '\nExamples:\n  gantry build artifacts root/my-app 42 -o out.tar.gz\n  gantry build artifacts root/my-app --ref master --job package')
    .action(async (project: string, id: string | undefined, o: { output?: string; ref?: string; job?: string; force?: boolean }, cmd: Command) => {
      const api = client(cmd);
      let saved: { file: string; size: number };
      if (id === undefined && !o.ref && !o.job && /^\d+$/.test(project) && !cmd.opts<{ repo?: string }>().repo) {
        // `gantry build artifacts 42` inside a clone: the one word is the build (as for `build show 42`), the clone the project.
        const remote = await cloneProject(io, api.connection.url);
        if (remote) [project, id] = [remote.project, project];
      }
      if (id !== undefined) {
        if (o.ref || o.job) throw new UsageError('give a build id or --ref and --job, not both');
        saved = await download(io, api, `${buildPath(project, id)}/artifacts`, {}, o.output, `artifacts-${buildId(id)}.tar.gz`, Boolean(o.force));
      } else {
        if (!o.ref || !o.job) throw new UsageError('which build?', 'give a build id, or --ref <branch> and --job <name>');
        saved = await download(io, api, `/projects/${idOrPath(project)}/builds/artifacts/${encodeURIComponent(o.ref)}/download`, { job: o.job }, o.output, `artifacts-${o.job}.tar.gz`, Boolean(o.force));
      }
      io.err(`Saved ${saved.file} (${formatBytes(saved.size)}).\n`);
    });

  build
    .command('trace')
    .alias('log')
    .description('print a build\'s trace (log); --follow streams it live and exits with the build\'s result')
    .argument('<project>', 'id or namespace/path')
    .argument('<id>', 'build id')
    .option('-f, --follow', 'keep printing as the build runs, until it finishes (exit 0 only when it succeeded)')
    .action(async (project: string, id: string, o: { follow?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const path = buildPath(project, id);
      if (!o.follow) {
        const trace = (await api.request<string | null>('GET', `${path}/trace`)).data;
        io.out(typeof trace === 'string' ? trace : trace === null ? '' : JSON.stringify(trace));
        return;
      }
      const b = await api.get<Build>(path); // a clear 404/403 before streaming
      let status: string;
      try {
        status = await followTrace({
          url: api.connection.url, headers: authHeaders(await api.fresh()), buildId: b.id,
          write: (text) => io.out(text),
          note: (text) => io.err(text),
          poll: async () => {
            const [now, trace] = await Promise.all([api.get<Build>(path), api.request<string | null>('GET', `${path}/trace`).then((r) => r.data).catch(() => '')]);
            return { status: now.status, trace: typeof trace === 'string' ? trace : '' };
          },
        });
      } catch (e) {
        const err = e as Error & { status?: number };
        if (err.status) throw toCliError(new HttpError('GET', `/-/live/builds/${b.id}/trace`, err.status, { message: err.message }), api.connection.url);
        throw e;
      }
      io.err(`\nBuild #${b.id} ${status}.\n`);
      if (status !== 'success') throw new CliError('', null);
    });
}
