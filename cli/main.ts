/** gantry: the command-line client. One file per noun under commands/; a factory hands them IO and API clients. */
import { Command, CommanderError } from 'commander';
import { Factory } from './client.js';
import { inferProjectArguments, subcommandTerm } from './current-project.js';
import { CliError, EXIT } from './errors.js';
import { connectionFlags } from './commands/common.js';
import { processIO, type IO } from './io.js';
import { packageVersion } from './paths.js';
import { registerLogin } from './commands/login.js';
import { registerDaemon } from './commands/daemon.js';
import { registerProjects } from './commands/projects.js';
import { registerGroups } from './commands/groups.js';
import { registerUsers } from './commands/users.js';
import { registerSettings } from './commands/settings.js';
import { registerRepo } from './commands/repo.js';
import { registerFile } from './commands/file.js';
import { registerCommit } from './commands/commit.js';
import { registerBranch } from './commands/branch.js';
import { registerStatus } from './commands/status.js';
import { registerPipelines } from './commands/pipelines.js';
import { registerBuilds } from './commands/builds.js';
import { registerRunners } from './commands/runners.js';
import { registerHooks } from './commands/hooks.js';
import { registerVariables } from './commands/variables.js';
import { registerApi } from './commands/api.js';
import { registerCompletion } from './commands/completion.js';
import { registerBrowse } from './commands/browse.js';
import { applySettings, expandAlias } from './settings-file.js';
import { loadConfig } from './profiles.js';

/** A noun whose module is imported only when the command line names it: start-up pays only for what it runs. */
interface LazyNoun {
  name: string;
  alias?: string;
  description: string;
  /** The module's function that adds the noun's verbs. */
  load(): Promise<(noun: Command, factory: Factory) => void>;
}

const LAZY_NOUNS: LazyNoun[] = [
  { name: 'issue', alias: 'issues', description: 'list, show, file, change, close, move and comment on issues', load: async () => (await import('./commands/issues.js')).registerIssues },
  { name: 'label', alias: 'labels', description: 'list, create, change and delete a project\'s labels', load: async () => (await import('./commands/labels.js')).registerLabels },
  { name: 'milestone', alias: 'milestones', description: 'list, show, create, close and activate a project\'s milestones', load: async () => (await import('./commands/milestones.js')).registerMilestones },
  { name: 'todo', alias: 'todos', description: 'list your todos and mark them done', load: async () => (await import('./commands/todos.js')).registerTodos },
  { name: 'auth', description: 'show which server, user and token the CLI uses (`auth status`); let git use your logins (`auth setup-git`)', load: async () => (await import('./commands/auth.js')).registerAuth },
  { name: 'config', description: 'get and set per-profile settings: editor, pager, browser, color, output', load: async () => (await import('./commands/config.js')).registerConfig },
  { name: 'alias', alias: 'aliases', description: 'make words stand for command lines (`gantry alias set co "mr checkout"`)', load: async () => (await import('./commands/config.js')).registerAlias },
  { name: 'oauth-app', alias: 'oauth-apps', description: 'register, list and delete OAuth applications', load: async () => (await import('./commands/oauth-apps.js')).registerOAuthApps },
  { name: 'mr', alias: 'merge-request', description: 'list, show, create, merge, diff, check out and comment on merge requests', load: async () => (await import('./commands/merge-requests.js')).registerMergeRequests },
  { name: 'ssh-key', alias: 'ssh-keys', description: 'list, add and remove your SSH keys (for git over SSH)', load: async () => (await import('./commands/ssh-keys.js')).registerSshKeys },
  { name: 'member', alias: 'members', description: 'list, add, change and remove the members of a project or group, by name and role', load: async () => (await import('./commands/members.js')).registerMembers },
  { name: 'snippet', alias: 'snippets', description: 'list, create, show, edit and delete a project\'s snippets', load: async () => (await import('./commands/snippets.js')).registerSnippets },
  { name: 'trigger', alias: 'triggers', description: 'list, create and remove a project\'s build triggers, and start pipelines with them', load: async () => (await import('./commands/triggers.js')).registerTriggers },
  { name: 'deploy-key', alias: 'deploy-keys', description: 'list, add, enable and remove a project\'s read-only deploy keys', load: async () => (await import('./commands/deploy-keys.js')).registerDeployKeys },
  { name: 'environment', alias: 'environments', description: 'list, create and delete a project\'s environments', load: async () => (await import('./commands/environments.js')).registerEnvironments },
  { name: 'access-request', alias: 'access-requests', description: 'list, approve and deny requests to join a project or group, or ask to join', load: async () => (await import('./commands/access-requests.js')).registerAccessRequests },
  { name: 'board', alias: 'boards', description: "list the lists of a project's issue board", load: async () => (await import('./commands/boards.js')).registerBoards },
  { name: 'deployment', alias: 'deployments', description: 'list the deployments a project\'s builds recorded', load: async () => (await import('./commands/environments.js')).registerDeployments },
  { name: 'system-hook', alias: 'system-hooks', description: 'list, add, test and remove the system hooks (administrators)', load: async () => (await import('./commands/system-hooks.js')).registerSystemHooks },
  { name: 'service', alias: 'services', description: 'show, set up and remove a project\'s services (Slack notifications)', load: async () => (await import('./commands/services.js')).registerServices },
  { name: 'template', alias: 'templates', description: 'list and print the server\'s .gitignore, .gitlab-ci.yml and license templates', load: async () => (await import('./commands/templates.js')).registerTemplates },
];

/** Global options that take a value (their value is not the noun). */
const VALUE_OPTIONS = new Set(['--url', '--token', '--profile']);

/** The words naming the command: the first two words of argv (node-style) that are not options or their values. */
export function commandWords(argv: string[]): string[] {
  const words: string[] = [];
  const args = argv.slice(2);
  for (let i = 0; i < args.length && words.length < 2; i++) {
    const a = args[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) words.push(a);
  }
  return words;
}

/**
 * Build the command tree for one run. Lazy nouns get their verbs (and their module is imported) only when argv names
 * them, directly or after `help`; otherwise they are listed by name and description only.
 */
export async function buildProgram(factory: Factory, argv: string[] = []): Promise<Command> {
  const program = buildEagerProgram(factory);
  const words = commandWords(argv);
  const named = words[0] === 'help' || words[0] === '__complete' ? words[1] : words[0];
  for (const lazy of LAZY_NOUNS) {
    const noun = program.command(lazy.name).description(lazy.description);
    if (lazy.alias) noun.alias(lazy.alias);
    if (named === lazy.name || named === lazy.alias) (await lazy.load())(noun, factory);
  }
  inferProjectArguments(program, factory.io, (cmd) => factory.connection(connectionFlags(cmd)).url);
  return program;
}

/** The nouns loaded with the program. */
function buildEagerProgram(factory: Factory): Command {
  const { io } = factory;
  const program = new Command('gantry')
    .description('Command-line client for Gantry (GitLab API v3 compatible code hosting and CI)')
    .version(packageVersion(), '-V, --version')
    .option('--url <url>', 'server URL (GANTRY_URL; default: the active profile)')
    .option('--token <token>', 'private, personal access or OAuth access token (GANTRY_TOKEN; default: the active profile)')
    .option('--profile <name>', 'saved login to use (GANTRY_PROFILE; default: the active one)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .configureHelp({ showGlobalOptions: true, subcommandTerm })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', '\nExit codes: 0 success, 1 error, 2 wrong usage, 3 `daemon status` found the daemon stopped.\n');
  registerLogin(program, factory);
  registerDaemon(program, factory);
  registerProjects(program, factory);
  registerGroups(program, factory);
  registerUsers(program, factory);
  registerSettings(program, factory);
  registerRepo(program, factory);
  registerFile(program, factory);
  registerCommit(program, factory);
  registerBranch(program, factory);
  registerStatus(program, factory);
  registerPipelines(program, factory);
  registerBuilds(program, factory);
  registerRunners(program, factory);
  registerHooks(program, factory);
  registerVariables(program, factory);
  registerApi(program, factory);
  registerCompletion(program, factory);
  registerBrowse(program, factory);
  return program;
}

/** Report an error on stderr (one line, a hint, no stack trace unless GANTRY_DEBUG is set); return the exit code. */
function report(io: IO, e: unknown): number {
  if (e instanceof CommanderError) {
    // commander has already written its message (or the help text).
    return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (e instanceof CliError) {
    if (e.message) io.err(`gantry: ${e.message}\n`);
    if (e.hint) io.err(`hint: ${e.hint}\n`);
    return e.exitCode;
  }
  io.err(`gantry: ${(e as Error)?.message ?? String(e)}\n`);
  if (io.env.GANTRY_DEBUG) io.err(`${(e as Error)?.stack ?? ''}\n`);
  return EXIT.error;
}

/** argv with a user alias expanded when its first command word is no command of the program (else argv itself). */
function expandAliases(program: Command, io: IO, argv: string[]): string[] {
  const [word] = commandWords(argv);
  if (word === undefined || word === 'help' || program.commands.some((c) => c.name() === word || c.aliases().includes(word))) return argv;
  let aliases: Record<string, string>;
  try {
    aliases = loadConfig(io.env).aliases ?? {};
  } catch {
    return argv;
  }
  const index = argv.indexOf(word, 2);
  return aliases[word] === undefined ? argv : expandAlias(argv, index, aliases);
}

/** Run the CLI with argv (node-style: [node, script, ...args]) and return its exit code. Never throws. */
export async function run(argv: string[], io: IO = processIO()): Promise<number> {
  const factory = new Factory(io);
  try {
    let program = await buildProgram(factory, argv);
    const expanded = expandAliases(program, io, argv);
    if (expanded !== argv) program = await buildProgram(factory, (argv = expanded));
    applySettings(io, program, argv);
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (e) {
    return report(io, e);
  } finally {
    await factory.close().catch(() => undefined);
  }
}

/** Entry point used by bin/gantry.js: run and set the process exit code. */
export async function main(argv: string[]): Promise<void> {
  process.exitCode = await run(argv);
}
