/** gantry config get|set|unset|list (per-profile settings) and gantry alias set|list|delete. */
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, renderTable } from '../output.js';
import { configFile, loadConfig, saveConfig, type CliConfig } from '../profiles.js';
import { SETTINGS, settingsProfile, settingValue, splitWords } from '../settings-file.js';

/** The known setting named `key`, or a usage error listing them. */
function known(key: string): (typeof SETTINGS)[string] {
  const s = SETTINGS[key];
  if (!s) throw new UsageError(`no setting "${key}"`, `the settings are ${Object.keys(SETTINGS).join(', ')} (see \`gantry config list\`)`);
  return s;
}

/** Where a change goes: the profile (--profile or the active one) unless --global, or global when there is none. */
function scope(config: CliConfig, env: NodeJS.ProcessEnv, cmd: Command, global?: boolean): string | null {
  if (global) return null;
  const name = settingsProfile(config, env, cmd.optsWithGlobals<{ profile?: string }>().profile);
  if (name && !config.profiles[name]) throw new CliError(`no profile named "${name}"`, 'see `gantry profile list`, or pass --global');
  return name;
}

/** Adds the verbs of the `config` noun. */
export function registerConfig(noun: Command, factory: Factory): void {
  const { io } = factory;
  noun.addHelpText('after', `
Settings: ${Object.entries(SETTINGS).map(([k, s]) => `\n  ${k.padEnd(8)} ${s.description}`).join('')}

They belong to the active profile (or --profile), or with --global to every profile that does not set them.
Environment variables (GANTRY_EDITOR, GANTRY_PAGER, GANTRY_BROWSER) win over them.

Examples:
  gantry config set editor "code --wait"
  gantry config set output json --global
  gantry config get pager`);

  noun.command('get').description('print the value of a setting (nothing when unset)')
    .argument('<key>', Object.keys(SETTINGS).join(', '))
    .action((key: string, _o: unknown, cmd: Command) => {
      known(key);
      const config = loadConfig(io.env);
      const { value } = settingValue(config, settingsProfile(config, io.env, cmd.optsWithGlobals<{ profile?: string }>().profile), key);
      if (value !== null) io.out(`${value}\n`);
    });

  noun.command('set').description('change a setting of the active profile (or --profile, or --global)')
    .argument('<key>', Object.keys(SETTINGS).join(', '))
    .argument('<value>', 'the new value')
    .option('--global', 'for every profile that does not set it')
    .action((key: string, value: string, o: { global?: boolean }, cmd: Command) => {
      const s = known(key);
      if (s.values && !s.values.includes(value)) throw new UsageError(`${key} must be ${s.values.join(', ')}, not "${value}"`);
      const config = loadConfig(io.env);
      const where = scope(config, io.env, cmd, o.global);
      if (where) config.profiles[where]!.settings = { ...config.profiles[where]!.settings, [key]: value };
      else config.settings = { ...config.settings, [key]: value };
      saveConfig(io.env, config);
      io.err(`Set ${key} to "${value}" (${where ? `profile ${where}` : 'global'}).\n`);
    });

  noun.command('unset').description('remove a setting from the active profile (or --profile, or --global)')
    .argument('<key>', Object.keys(SETTINGS).join(', '))
    .option('--global', 'the global value')
    .action((key: string, o: { global?: boolean }, cmd: Command) => {
      known(key);
      const config = loadConfig(io.env);
      const where = scope(config, io.env, cmd, o.global);
      if (where) delete config.profiles[where]!.settings?.[key];
      else delete config.settings?.[key];
      saveConfig(io.env, config);
    });

  noun.command('list').alias('ls').description('list every setting, its value and where it comes from')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }, cmd: Command) => {
      const config = loadConfig(io.env);
      const profile = settingsProfile(config, io.env, cmd.optsWithGlobals<{ profile?: string }>().profile);
      const rows = Object.keys(SETTINGS).map((key) => ({ key, ...settingValue(config, profile, key) }));
      if (o.json) return printJson(io, rows);
      io.out(renderTable(rows, [{ header: 'key', value: (r) => r.key }, { header: 'value', value: (r) => r.value ?? '' }, { header: 'from', value: (r) => r.source }]));
      io.err(`(${configFile(io.env)})\n`);
    });
}

/** Adds the verbs of the `alias` noun (names are checked against the program's commands). */
export function registerAlias(noun: Command, factory: Factory): void {
  const { io } = factory;
  const program = noun.parent!;
  const builtin = (name: string) => program.commands.some((c) => c.name() === name || c.aliases().includes(name)) || name === 'help';

  noun.command('set').description('make a word stand for a command line: `gantry co 3` for `gantry mr checkout 3`')
    .argument('<name>', 'the new word')
    .argument('<expansion>', 'what it stands for (quoted); $1, $2... take the words after the alias, the rest are appended')
    .option('--clobber', 'replace an alias of that name')
    .addHelpText('after', `
Examples:
  gantry alias set co 'mr checkout'
  gantry alias set mine 'issue list --state opened --assignee $1'
  gantry co 3        # runs gantry mr checkout 3`)
    .action((name: string, expansion: string, o: { clobber?: boolean }) => {
      if (!/^[\w][\w-]*$/.test(name)) throw new UsageError(`an alias is one word of letters, digits, - and _, not "${name}"`);
      if (builtin(name)) throw new UsageError(`"${name}" is a gantry command`, 'choose another name');
      const first = splitWords(expansion)[0];
      if (!first || !builtin(first)) throw new UsageError(`"${expansion}" does not start with a gantry command`, 'like `gantry alias set co "mr checkout"` (see `gantry --help`)');
      const config = loadConfig(io.env);
      if (config.aliases?.[name] !== undefined && !o.clobber) throw new CliError(`the alias "${name}" exists already (${config.aliases[name]})`, 'pass --clobber to replace it');
      config.aliases = { ...config.aliases, [name]: expansion };
      saveConfig(io.env, config);
      io.err(`Added alias ${name}: gantry ${expansion}\n`);
    });

  noun.command('list').alias('ls').description('list the aliases')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => {
      const aliases = loadConfig(io.env).aliases ?? {};
      if (o.json) return printJson(io, aliases);
      const rows = Object.entries(aliases).map(([name, expansion]) => ({ name, expansion }));
      if (rows.length === 0) return void io.err('No aliases; add one with `gantry alias set <name> <expansion>`.\n');
      io.out(renderTable(rows, [{ header: 'name', value: (r) => r.name }, { header: 'expansion', value: (r) => r.expansion }]));
    });

  noun.command('delete').alias('rm').description('remove an alias')
    .argument('<name>', 'the alias')
    .action((name: string) => {
      const config = loadConfig(io.env);
      if (config.aliases?.[name] === undefined) throw new CliError(`no alias "${name}"`, 'see `gantry alias list`');
      delete config.aliases[name];
      saveConfig(io.env, config);
      io.err(`Removed alias ${name}.\n`);
    });
}
