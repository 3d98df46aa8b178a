/** gantry browse [path]: the web URL of the project, an issue, a merge request, a pipeline or a file at a line; opened or printed. */
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { connectionFlags, idOrPath } from './common.js';

/** What `browse` points at. */
export interface BrowseTarget {
  issue?: string;
  mr?: string;
  pipeline?: string;
  branch?: string;
  settings?: boolean;
}

/**
 * The web URL for a project's `web_url` and a target: `123` or `#123` an issue, `!12` (or --mr) a merge request,
 * --pipeline a pipeline, `path/to/file[:line]` a file on the branch (--branch, else the default branch).
 */
export function browseUrl(webUrl: string, defaultBranch: string | null, path: string | undefined, t: BrowseTarget): string {
  const given = [path !== undefined, t.issue !== undefined, t.mr !== undefined, t.pipeline !== undefined, Boolean(t.settings)].filter(Boolean).length;
  if (given > 1) throw new UsageError('give one thing to browse: a path, an issue, --mr, --pipeline or --settings');
  if (t.settings) return `${webUrl}/edit`;
  const issue = t.issue ?? (path && /^#?\d+$/.test(path) ? path.replace('#', '') : undefined);
  if (issue !== undefined) return `${webUrl}/issues/${issue}`;
  const mr = t.mr ?? (path && /^!\d+$/.test(path) ? path.slice(1) : undefined);
  if (mr !== undefined) return `${webUrl}/merge_requests/${mr.replace('!', '')}`;
  if (t.pipeline !== undefined) return `${webUrl}/pipelines/${t.pipeline}`;
  const branch = t.branch ?? defaultBranch ?? 'master';
  if (path === undefined) return t.branch ? `${webUrl}/tree/${encodeURI(branch)}` : webUrl;
  const m = /^(.*?)(?::(\d+))?$/.exec(path)!;
  const file = m[1]!.replace(/^\/+/, '');
  return `${webUrl}/blob/${encodeURI(branch)}/${file.split('/').map(encodeURIComponent).join('/')}${m[2] ? `#L${m[2]}` : ''}`;
}

/** Registers `browse`. */
export function registerBrowse(program: Command, factory: Factory): void {
  const { io } = factory;
  program.command('browse')
    .description('open the web page of the project, an issue, a merge request, a pipeline or a file (or print its URL)')
    .argument('[path]', 'a file (path/to/file or path/to/file:line), an issue (12 or #12) or a merge request (!3)')
    .option('-R, --repo <project>', 'the project (default: the project of the clone you are in)')
    .option('-b, --branch <branch>', 'the branch files are shown on (default: the default branch)')
    .option('--issue <number>', 'an issue')
    .option('--mr <number>', 'a merge request')
    .option('--pipeline <id>', 'a pipeline')
    .option('-s, --settings', 'the project settings page')
    .option('-n, --no-browser', 'print the URL instead of opening it')
    .addHelpText('after', `
The URL is printed when --no-browser is given or stdout is not a terminal; otherwise it is opened with the browser
setting (\`gantry config set browser firefox\`), GANTRY_BROWSER, BROWSER, else xdg-open (open on macOS).

Examples:
  gantry browse                       # the project of this clone
  gantry browse src/app.ts:42 -b dev
  gantry browse '!3' -R root/my-app
  gantry browse --pipeline 17 -n`)
    .action(async (path: string | undefined, o: BrowseTarget & { repo?: string; browser: boolean }, cmd: Command) => {
      const api = factory.client(connectionFlags(cmd));
      const { resolveProject } = await import('../current-project.js');
      const { project } = await resolveProject(io, api.connection.url, o.repo);
      const p = await api.get<{ web_url: string; default_branch: string | null }>(`/projects/${idOrPath(project)}`);
      const url = browseUrl(p.web_url, p.default_branch, path, o);
      if (!o.browser || !io.stdoutIsTTY) return void io.out(`${url}\n`);
      const { openBrowser } = await import('../open-browser.js');
      const failed = await openBrowser(io, url);
      if (failed) throw new CliError(`cannot open the browser: ${failed}`, `open ${url} yourself, or set one: \`gantry config set browser <program>\``);
      io.err(`Opening ${url} in your browser.\n`);
    });
}
