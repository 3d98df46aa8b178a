/**
 * Per-profile settings (`gantry config`) and command aliases (`gantry alias`), kept in the CLI config file next to
 * the profiles. Settings reach the commands through the environment variables they already read (an environment
 * variable set by the person wins, as with gh), or as option defaults (`output`, `color`).
 */
import type { Command } from 'commander';
import type { IO } from './io.js';
import { loadConfig, type CliConfig } from './profiles.js';

/** The settings `gantry config` knows: what each does and the values it takes. */
export const SETTINGS: Record<string, { description: string; values?: string[]; env?: string }> = {
  editor: { description: 'editor for descriptions and comments (a command line, like "code --wait")', env: 'GANTRY_EDITOR' },
  pager: { description: 'pager for long output such as `mr diff` ("cat" for none)', env: 'GANTRY_PAGER' },
  browser: { description: 'program `gantry browse` opens URLs with (default: xdg-open / open)', env: 'GANTRY_BROWSER' },
  color: { description: 'colour in diffs: auto (on a terminal), always or never', values: ['auto', 'always', 'never'] },
  output: { description: 'default output of commands that have --json: table or json', values: ['table', 'json'] },
};

/** The profile settings apply to: --profile in argv, GANTRY_PROFILE, else the active one. */
export function settingsProfile(config: CliConfig, env: NodeJS.ProcessEnv, flag?: string): string | null {
  return flag ?? env.GANTRY_PROFILE ?? config.active;
}

/** The effective value of a setting and where it comes from. */
export function settingValue(config: CliConfig, profile: string | null, key: string): { value: string | null; source: string } {
  const own = profile ? config.profiles[profile]?.settings?.[key] : undefined;
  if (own !== undefined) return { value: own, source: `profile ${profile}` };
  const global = config.settings?.[key];
  if (global !== undefined) return { value: global, source: 'global' };
  return { value: null, source: 'default' };
}

/** The value of `--profile <name>` / `--profile=<name>` in argv, if given. */
function profileFlag(argv: string[]): string | undefined {
  const i = argv.indexOf('--profile');
  if (i >= 0) return argv[i + 1];
  return argv.find((a) => a.startsWith('--profile='))?.slice('--profile='.length);
}

/**
 * Put the settings into effect for one run: env-backed ones into io.env when the person did not set the variable,
 * option defaults (`output`, `color`) through a preAction hook. Reads the config file once; nothing when it is absent.
 */
export function applySettings(io: IO, program: Command, argv: string[]): void {
  let config: CliConfig;
  try {
    config = loadConfig(io.env);
  } catch {
    return; // a broken config file is reported by the command that needs it
  }
  const profile = settingsProfile(config, io.env, profileFlag(argv));
  const value = (key: string) => settingValue(config, profile, key).value;
  for (const [key, s] of Object.entries(SETTINGS)) {
    const v = value(key);
    if (s.env && v !== null && io.env[s.env] === undefined) io.env = { ...io.env, [s.env]: v };
  }
  const output = value('output');
  const color = value('color');
  if (output !== 'json' && color === null) return;
  program.hook('preAction', (_root, action) => {
    if (output === 'json' && action.options.some((o) => o.long === '--json') && action.getOptionValue('json') === undefined) action.setOptionValueWithSource('json', true, 'config');
    if (color !== null && action.options.some((o) => o.long === '--color') && action.getOptionValueSource('color') === 'default') action.setOptionValueWithSource('color', color, 'config');
  });
}

/** Split an alias's text into words: spaces separate, single and double quotes group. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const m of text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) words.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3]!));
  return words;
}

/**
 * argv with an alias expanded: the alias word replaced by its words, `$1`, `$2`... by the words after it (those are
 * then used up), the rest appended. Returns argv unchanged when `word` (at `index`) is not an alias.
 */
export function expandAlias(argv: string[], index: number, aliases: Record<string, string>): string[] {
  const expansion = aliases[argv[index]!];
  if (expansion === undefined) return argv;
  const rest = argv.slice(index + 1);
  const used = new Set<number>();
  const words = splitWords(expansion).map((w) => w.replace(/\$(\d+)/g, (m, n: string) => {
    const i = Number(n) - 1;
    if (rest[i] === undefined) return m;
    used.add(i);
    return rest[i]!;
  }));
  return [...argv.slice(0, index), ...words, ...rest.filter((_, i) => !used.has(i))];
}
