/**
 * git's credentials from the CLI's logins, as `gh auth setup-git` does: `gantry auth git-credential` is a git
 * credential helper (git-credential(1): it reads `protocol=`/`host=` lines and answers `username=`/`password=` for the
 * saved login of that server, an OAuth token refreshed first), and `gantry auth setup-git` registers it in git's global
 * configuration for every logged-in server. `gantry repo clone` registers it in the clone it makes, so the first
 * `git push` goes through without a password prompt.
 */
import { resolve } from 'node:path';
import { isSea } from 'node:sea';
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { CliError } from '../errors.js';
import type { IO } from '../io.js';
import { gitOrFail } from '../local-git.js';
import { loadConfig, normaliseUrl } from '../profiles.js';

/** A word quoted for the shell git runs `!` helpers with. */
const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** The helper as git's configuration names it: this very program, however it was started. */
export function credentialHelper(): string {
  const script = process.argv[1];
  // A single-file executable runs itself; `node bin/gantry.js` runs node with the script, and so does the `gantry`
  // that `npm install -g` links into <prefix>/bin (a script without a .js ending).
  const program = script && !isSea() ? [process.execPath, resolve(script)] : [process.execPath];
  return `!${program.map(shellQuote).join(' ')} auth git-credential`;
}

/** The scheme, host and port of a URL: what git's `credential.<url>` keys and its `protocol=`/`host=` lines name. */
export function serverOrigin(url: string): string {
  const u = new URL(normaliseUrl(url));
  return `${u.protocol}//${u.host}`;
}

/** Register the helper for `origin` in a git config scope (`--global`, or `--local` inside a clone). */
export async function registerCredentialHelper(io: IO, origin: string, scope: string[]): Promise<void> {
  const key = `credential.${origin}.helper`;
  // An empty first value resets the helpers git would otherwise also ask (a store holding an old password), as gh does.
  await gitOrFail(io, ['config', ...scope, '--replace-all', key, '']);
  await gitOrFail(io, ['config', ...scope, '--add', key, credentialHelper()]);
}

/** The `key=value` lines git sends a helper. */
export function parseCredentialRequest(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1).replace(/\r$/, '');
  }
  return out;
}

async function readStdin(io: IO): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The login for a server: GANTRY_URL/GANTRY_TOKEN or the active profile when they name it, else a saved profile of
 * that server; its token refreshed first when it is an expired OAuth one. Null when none names the server.
 */
async function connectionFor(factory: Factory, origin: string): Promise<{ username: string; token: string } | null> {
  const config = loadConfig(factory.io.env);
  const sameServer = (url: string) => {
    try {
      return serverOrigin(url) === origin;
    } catch {
      return false;
    }
  };
  let flags: { profile?: string } | null = null;
  try {
    if (sameServer(factory.connection({}).url)) flags = {};
  } catch {
    // not logged in by default: a saved profile may still name the server
  }
  flags ??= (() => {
    const name = Object.keys(config.profiles).find((n) => sameServer(config.profiles[n]!.url));
    return name ? { profile: name } : null;
  })();
  if (!flags) return null;
  const connection = await factory.freshConnection(flags);
  const profile = connection.profile ? config.profiles[connection.profile] : undefined;
  return { username: connection.oauth ? 'oauth2' : profile?.username ?? 'gantry', token: connection.token };
}

/** Adds `auth git-credential` and `auth setup-git` to the `auth` noun. */
export function registerGitCredential(noun: Command, factory: Factory): void {
  const { io } = factory;
  noun.command('git-credential')
    .description('git credential helper: hands git the token of the saved login for the server it asks about')
    .argument('<operation>', 'get, store or erase (git passes it)')
    .addHelpText('after', '\nRegistered by `gantry auth setup-git` and in clones made by `gantry repo clone`; git runs it, not you.')
    .action(async (operation: string) => {
      const request = parseCredentialRequest(await readStdin(io));
      // store and erase: the login is the CLI's to keep; git's copy is never saved.
      if (operation !== 'get' || !request.protocol || !request.host) return;
      const origin = `${request.protocol}://${request.host}`;
      const connection = await connectionFor(factory, origin);
      // No login for this server: say nothing, so git asks its other helpers or the user.
      if (!connection) return;
      io.out(`protocol=${request.protocol}\nhost=${request.host}\nusername=${connection.username}\npassword=${connection.token}\n`);
    });

  noun.command('setup-git')
    .description('make git use your Gantry logins for pushes and fetches over HTTP (a credential helper, as `gh auth setup-git`)')
    .option('--hostname <url>', 'only this server (default: every server you are logged in to)')
    .addHelpText('after', '\nWrites credential.<server>.helper to your global git config; `git config --global --get-regexp credential` shows it.')
    .action(async (o: { hostname?: string }) => {
      const config = loadConfig(io.env);
      const urls = o.hostname ? [o.hostname] : [...new Set(Object.values(config.profiles).map((p) => p.url))];
      if (!urls.length) throw new CliError('not logged in to any Gantry server', 'run `gantry login --url <url>` first');
      for (const url of urls) {
        let origin: string;
        try {
          origin = serverOrigin(url);
        } catch {
          throw new CliError(`not a server URL: ${url}`, 'give it as http(s)://host[:port]');
        }
        await registerCredentialHelper(io, origin, ['--global']);
        io.err(`git now takes its credentials for ${origin} from gantry\n`);
      }
    });
}
