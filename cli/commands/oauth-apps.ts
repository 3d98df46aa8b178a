/** gantry oauth-app create|list|delete: OAuth applications registered on the server (/api/v3/applications). */
import type { Command } from 'commander';
import { noteMorePages, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, printList, renderRecord, type Column } from '../output.js';
import { confirm } from '../prompt.js';
import { connectionFlags, listFlags, listOptions, positiveInt } from './common.js';

/** An application as the API lists it (the secret only in the answer to its creation). */
export interface OAuthApplication {
  id: number;
  application_id: string;
  application_name: string;
  callback_url: string;
  secret?: string;
}

const COLUMNS: Column<OAuthApplication>[] = [
  { header: 'id', value: (a) => a.id },
  { header: 'application id (client_id)', value: (a) => a.application_id },
  { header: 'name', value: (a) => a.application_name },
  { header: 'redirect uris', value: (a) => a.callback_url, max: 60 },
];

/** commander collector for a repeatable option. */
const repeat = (value: string, previous: string[] = []) => [...previous, value];

/** Scopes as the API takes them: one space-separated string (commas accepted on the command line). */
export function scopesParam(values: string[]): string {
  return values.flatMap((v) => v.split(/[\s,]+/)).filter(Boolean).join(' ');
}

/** Adds the verbs of the `oauth-app` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerOAuthApps(noun: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  noun
    .command('create')
    .description('register an OAuth application; prints its application id and, this once, its secret')
    .requiredOption('--name <name>', 'the name people see on the consent page')
    .requiredOption('--redirect-uri <uri>', 'where the browser is sent back with the code (absolute, no #fragment; repeatable; urn:ietf:wg:oauth:2.0:oob shows the code instead)', repeat)
    .option('--scopes <scopes>', 'scopes the application may ask for, space or comma separated (default: the server\'s, api)', repeat)
    .option('--json', 'print the raw API JSON (with the secret)')
    .addHelpText('after', `
Administrators may always register applications; other users when the server's user_oauth_applications setting
is on. The secret is shown only in this answer: the server keeps a hash of it.

Example:
  gantry oauth-app create --name "Review bot" --redirect-uri https://bot.example.com/oauth/callback`)
    .action(async (o: { name: string; redirectUri: string[]; scopes?: string[]; json?: boolean }, cmd: Command) => {
      const body: Record<string, string> = { name: o.name, redirect_uri: o.redirectUri.join('\n') };
      if (o.scopes) body.scopes = scopesParam(o.scopes);
      const app = await client(cmd).post<OAuthApplication>('/applications', body);
      if (o.json) printJson(io, app);
      else {
        io.out(renderRecord([
          ['id', app.id],
          ['application id', app.application_id],
          ['secret', app.secret ?? ''],
          ['name', app.application_name],
          ['redirect uris', app.callback_url],
        ]));
      }
      io.err(`Registered OAuth application "${app.application_name}" (id ${app.id}).\n`
        + 'The secret is shown only now: store it where the application can read it; it cannot be shown again '
        + '(delete the application and register it anew if it is lost).\n');
    });

  listFlags(noun.command('list').alias('ls').description('list your OAuth applications (every one for an administrator); secrets are never shown'))
    .action(async (o: { json?: boolean; all?: boolean; page?: number; perPage?: number }, cmd: Command) => {
      const page = await client(cmd).list<OAuthApplication>('/applications', {}, listOptions(o));
      printList(io, page.items, COLUMNS, { json: Boolean(o.json), noun: 'OAuth applications' });
      noteMorePages(io, page);
    });

  noun
    .command('delete')
    .alias('rm')
    .description('delete an OAuth application: its tokens and codes stop working at once')
    .argument('<id>', 'the application\'s id (the number `list` shows, not its application id)', positiveInt)
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (id: number, o: { yes?: boolean }, cmd: Command) => {
      if (!o.yes) {
        if (!io.stdinIsTTY) throw new UsageError('deleting needs confirmation', 'add --yes');
        if (!(await confirm(io, `Delete OAuth application ${id}? Every token it was given stops working.`))) throw new CliError('not deleted');
      }
      await client(cmd).delete(`/applications/${id}`);
      io.err(`Deleted OAuth application ${id}; its tokens are revoked.\n`);
    });
}
