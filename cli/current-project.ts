/**
 * The project a command acts on when none is named, as `gh` takes the repository from the clone: `-R/--repo`, else the
 * project the clone's remote points at on the server in use. One rule for every command whose first argument is
 * `project`: main.ts applies `inferProjectArgument` to each of them, so no noun carries a copy.
 */
import type { Command } from 'commander';
import { UsageError } from './errors.js';
import type { IO } from './io.js';
import { serverRemotes, type ServerRemote } from './local-git.js';

/** Options that name another scope than a project (`issue list --group g`): when one is given nothing is inferred. */
const OTHER_SCOPES = ['group'];

/** The usage error for a command that needs a project and got none (outside a clone of one on this server). */
export function noProjectError(serverUrl: string): UsageError {
  return new UsageError(
    'no project given, and this directory is not a clone of a project on this server',
    `name the project (namespace/path) or pass -R <namespace/path>, or run it inside a clone whose remote points at ${serverUrl}`,
  );
}

/** The best remote of the clone in io.cwd that points at a project on `serverUrl`, or null (no clone, no such remote). */
export async function cloneProject(io: IO, serverUrl: string): Promise<ServerRemote | null> {
  try {
    return (await serverRemotes(io, serverUrl))[0] ?? null;
  } catch {
    return null; // no git installed: nothing to infer from
  }
}

/** The project a command acts on: the one named, else the clone's (a usage error when there is none). */
export async function resolveProject(io: IO, serverUrl: string, given: string | undefined): Promise<{ project: string; remote: ServerRemote | null }> {
  if (given !== undefined && given.trim() !== '') return { project: given, remote: null };
  const remote = await cloneProject(io, serverUrl);
  if (!remote) throw noProjectError(serverUrl);
  return { project: remote.project, remote };
}

/** The arguments as help shows them, for commands whose project became optional: `[project] <issue>`. */
const shownArguments = new WeakMap<Command, string>();

/** commander's subcommand term (`show|view [options] <project> <issue>`), with the shown arguments of inferred projects. */
export function subcommandTerm(cmd: Command): string {
  const args = shownArguments.get(cmd)
    ?? cmd.registeredArguments.map((a) => `${a.required ? '<' : '['}${a.name()}${a.variadic ? '...' : ''}${a.required ? '>' : ']'}`).join(' ');
  return `${cmd.name()}${cmd.aliases()[0] ? `|${cmd.aliases()[0]}` : ''}${cmd.options.length ? ' [options]' : ''}${args ? ` ${args}` : ''}`;
}

/** Where the project arguments of one command line went: the values for the declared arguments, project first. */
export function placeProjectArguments(
  given: unknown[],
  count: { declared: number; requiredAfter: number },
  repo: string | undefined,
): { values: unknown[]; projectGiven: boolean } {
  const operands = given.filter((v) => v !== undefined);
  // With -R, every word is one of the later arguments; without it, a word more than the later ones need is the project.
  const projectGiven = repo === undefined && operands.length > count.requiredAfter;
  if (repo !== undefined && operands.length >= count.declared) {
    throw new UsageError('the project is given twice: as an argument and with -R/--repo', 'give it once');
  }
  const values = projectGiven ? [...operands] : [repo, ...operands];
  while (values.length < count.declared) values.push(undefined);
  return { values, projectGiven };
}

/**
 * Make the leading `project` argument of `cmd` optional and add `-R, --repo <project>`: when the project is left out
 * (fewer words than the command needs with it), it comes from -R, else from the clone in io.cwd. An optional
 * `[project]` stays unset outside a clone (`issue list` then lists your own issues).
 */
export function inferProjectArgument(cmd: Command, io: IO, serverUrl: (cmd: Command) => string): void {
  const args = cmd.registeredArguments;
  if (args[0]?.name() !== 'project' || cmd.options.some((o) => o.long === '--repo')) return;
  const projectRequired = args[0].required;
  const required = args.map((a) => a.required);
  const usage = cmd.usage().replace('<project>', '[project]');
  cmd.usage(usage);
  shownArguments.set(cmd, args.map((a, i) => (i === 0 || !a.required ? `[${a.name()}]` : `<${a.name()}>`)).join(' '));
  for (const a of args) a.required = false;
  cmd.option('-R, --repo <project>', 'the project (id or namespace/path); default: the project of the clone you are in');
  cmd.hook('preAction', async (_root, action) => {
    if (action !== cmd) return;
    const o = cmd.opts<{ repo?: string } & Record<string, unknown>>();
    const count = { declared: args.length, requiredAfter: required.slice(1).filter(Boolean).length };
    const { values, projectGiven } = placeProjectArguments(cmd.args, count, o.repo);
    if (values.length > args.length) throw new UsageError(`too many arguments: usage: ${cmd.name()} ${usage}`);
    for (let i = 1; i < args.length; i++) {
      if (required[i] && values[i] === undefined) {
        const what = args[i]!.description ? ` (${args[i]!.description})` : '';
        throw new UsageError(`missing <${args[i]!.name()}>${what}`, `usage: gantry ${cmd.parent?.name() ?? ''} ${cmd.name()} ${usage} (see --help)`);
      }
    }
    if (!projectGiven && values[0] === undefined && !OTHER_SCOPES.some((s) => o[s] !== undefined)) {
      const url = serverUrl(cmd);
      const remote = await cloneProject(io, url);
      if (remote) values[0] = remote.project;
      else if (projectRequired) throw noProjectError(url);
    }
    cmd.processedArgs = values;
  });
}

/** Apply `inferProjectArgument` to every command below `root` whose first argument is `project`. */
export function inferProjectArguments(root: Command, io: IO, serverUrl: (cmd: Command) => string): void {
  for (const cmd of root.commands) {
    inferProjectArgument(cmd, io, serverUrl);
    inferProjectArguments(cmd, io, serverUrl);
  }
}
