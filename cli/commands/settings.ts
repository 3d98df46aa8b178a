/** gantry settings get [key] | set key=value...: instance application settings (administrators). */
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { UsageError } from '../errors.js';
import { cellText, printJson, renderTable } from '../output.js';

/** A setting value as text: true/false, null, lists comma-separated (the forms `set` accepts). */
export function settingText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return String(value);
  return cellText(value);
}
import { connectionFlags } from './common.js';

type Settings = Record<string, unknown>;

/** Settings the API accepts but never shows. */
const WRITE_ONLY = new Set(['enabled_git_access_protocol']);

/** Convert `value` to the type the setting has now (number, boolean, list, null); text stays text. */
export function settingValue(key: string, text: string, current: unknown): unknown {
  if (text === 'null' || (text === '' && current === null)) return null;
  const bool = (): boolean => {
    if (/^(true|yes|on|1)$/i.test(text)) return true;
    if (/^(false|no|off|0)$/i.test(text)) return false;
    throw new UsageError(`${key} takes true or false, not "${text}"`);
  };
  if (typeof current === 'boolean') return bool();
  if (typeof current === 'number') {
    if (!/^-?\d+$/.test(text)) throw new UsageError(`${key} takes a whole number, not "${text}"`);
    return Number(text);
  }
  if (Array.isArray(current) || key === 'restricted_visibility_levels' || key === 'domain_whitelist' || key === 'domain_blacklist') {
    const items = text.split(/[\s,]+/).filter(Boolean);
    return key === 'restricted_visibility_levels' ? items.map((i) => (/^\d+$/.test(i) ? Number(i) : i)) : items;
  }
  return text;
}

/** Registers the `settings` noun. */
export function registerSettings(program: Command, factory: Factory): void {
  const { io } = factory;
  const settings = program.command('settings').description('read and change instance settings (administrators)');
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  settings
    .command('get')
    .description('show every setting, or the value of one')
    .argument('[key]', 'setting name, e.g. signup_enabled')
    .option('--json', 'print the raw API JSON')
    .action(async (key: string | undefined, o: { json?: boolean }, cmd: Command) => {
      const all = await client(cmd).get<Settings>('/application/settings');
      if (key !== undefined) {
        if (!(key in all)) throw new UsageError(`no setting named "${key}"`, 'run `gantry settings get` to list them');
        if (o.json) return printJson(io, all[key]);
        io.out(`${settingText(all[key])}\n`);
        return;
      }
      if (o.json) return printJson(io, all);
      io.out(renderTable(Object.entries(all), [
        { header: 'setting', value: ([k]) => k },
        { header: 'value', value: ([, v]) => settingText(v) },
      ]));
    });

  settings
    .command('set')
    .description('change settings: key=value pairs (lists comma-separated, null clears)')
    .argument('<key=value...>', 'settings to change')
    .option('--json', 'print all settings afterwards as JSON')
    .addHelpText('after', '\nExamples:\n  gantry settings set signup_enabled=false default_projects_limit=20\n  gantry settings set restricted_visibility_levels=20 domain_whitelist=example.com,example.org')
    .action(async (pairs: string[], o: { json?: boolean }, cmd: Command) => {
      const api = client(cmd);
      const current = await api.get<Settings>('/application/settings');
      const body: Settings = {};
      for (const pair of pairs) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new UsageError(`"${pair}" is not key=value`);
        const key = pair.slice(0, eq).trim();
        if (!(key in current) && !WRITE_ONLY.has(key)) throw new UsageError(`no setting named "${key}"`, 'run `gantry settings get` to list them');
        body[key] = settingValue(key, pair.slice(eq + 1), current[key]);
      }
      const updated = await api.put<Settings>('/application/settings', body);
      if (o.json) return printJson(io, updated);
      for (const key of Object.keys(body)) io.err(`Set ${key} = ${settingText(key in updated ? updated[key] : body[key])}\n`);
    });
}
