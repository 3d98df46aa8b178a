/** gantry login / logout / profile: saved logins (server URL + token) in the config dir. */
import type { Command } from 'commander';
import { HttpClient } from '../../shared/http.js';
import { ApiError, toCliError, type Factory } from '../client.js';
import { CliError, UsageError } from '../errors.js';
import { printJson, renderTable } from '../output.js';
import { positiveInt } from './common.js';
import { configFile, keptOnLogin, loadConfig, normaliseUrl, saveConfig, tokenKind } from '../profiles.js';
import { ask, promptSecret, readStdinLine } from '../prompt.js';

const DEFAULT_URL = 'http://127.0.0.1:3080';

interface LoginOptions {
  url?: string;
  token?: string;
  profile?: string;
  username?: string;
  password?: string;
  passwordStdin?: boolean;
  tokenStdin?: boolean;
  web?: boolean;
  host?: string;
  browser: boolean;
  timeout: number;
}

interface UserAnswer {
  username: string;
  private_token?: string;
}

/** Registers `login`, `logout` and `profile list|use`. */
export function registerLogin(program: Command, factory: Factory): void {
  const { io } = factory;

  program
    .command('login')
    .description('log in to a Gantry server and save the token in a profile (--web: sign in with the browser)')
    .option('--web', 'sign in with the browser (OAuth with PKCE): no password passes through the CLI')
    .option('--host <url>', 'server URL (the same as --url)')
    .option('--no-browser', 'with --web: print the sign-in URL instead of opening a browser')
    .option('--timeout <seconds>', 'with --web: how long to wait for the browser sign-in', positiveInt, 300)
    .option('--username <name>', 'user name or email; the token comes from POST /session')
    .option('--password <password>', 'password (prompted without echo when omitted on a terminal)')
    .option('--password-stdin', 'read the password from stdin')
    .option('--token-stdin', 'read a private, personal access or OAuth access token from stdin')
    .addHelpText('after', `
Give --web to sign in with the browser, --token (or --token-stdin) to save an existing token, or --username to log
in with a password; on a terminal, \`gantry login\` with none of them asks for the server URL and the method.
With --web, gantry listens on 127.0.0.1 for the browser's redirect and opens the server's sign-in page (the browser
setting, BROWSER, else xdg-open / open); with --no-browser, or when stdout is not a terminal, it prints the URL to
open. The OAuth access token is refreshed by itself when it expires.
The URL defaults to GANTRY_URL, then the profile's URL, then ${DEFAULT_URL}. The profile defaults to
the active one ("default" at first) and becomes the active profile.

Examples:
  gantry login --web --url https://gantry.example.com
  gantry login --url http://127.0.0.1:3080 --username root
  gantry login --url https://gantry.example.com --token-stdin < token.txt --profile work`)
    .action(async (_opts: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<LoginOptions>();
      const config = loadConfig(io.env);
      const profileName = o.profile ?? io.env.GANTRY_PROFILE ?? config.active ?? 'default';
      if (o.host !== undefined && o.url !== undefined && normaliseUrl(o.host) !== normaliseUrl(o.url)) throw new UsageError('--host and --url name different servers', 'give one of them');
      let url = normaliseUrl(o.host ?? o.url ?? io.env.GANTRY_URL ?? config.profiles[profileName]?.url ?? DEFAULT_URL);
      const nothingGiven = !o.web && !o.token && !o.tokenStdin && !o.username && !o.passwordStdin && o.password === undefined;
      if (nothingGiven && io.stdinIsTTY && io.stderrIsTTY) {
        // As `gh auth login`: ask for the server and the method.
        url = normaliseUrl(await ask(io, 'Gantry server URL', url));
        const method = (await ask(io, 'Log in with (1) user name and password, (2) a token, or (3) the browser', '1')).toLowerCase();
        if (method === '2' || method.startsWith('t')) o.token = (await promptSecret(io, 'Token (private or personal access token): ')).trim();
        else if (method === '3' || method.startsWith('b') || method.startsWith('w')) o.web = true;
        else o.username = await ask(io, 'User name or email');
      }
      if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`invalid URL "${url}"`, 'give the server address, e.g. --url http://127.0.0.1:3080');
      if (o.web) {
        if (o.token || o.tokenStdin || o.username || o.password !== undefined || o.passwordStdin) {
          throw new UsageError('--web signs in with the browser: leave out --token, --username and --password');
        }
        const { webLogin } = await import('../login-web.js');
        return webLogin(io, { url, profile: profileName, browser: o.browser, timeoutMs: o.timeout * 1000 });
      }
      let token = o.token ?? (o.tokenStdin ? (await readStdinLine(io)).trim() : undefined);
      const http = new HttpClient({ baseUrl: `${url}/api/v3` });
      try {
        let username: string;
        if (token) {
          if (o.username) throw new UsageError('give either a token or --username, not both');
          try {
            username = (await callApi(http, url, 'GET', '/user', undefined, token)).username;
          } catch (e) {
            if (e instanceof ApiError && e.status === 401) throw new CliError(`${url} refused this token`, 'check it, or log in with --username');
            throw e;
          }
        } else {
          if (!o.username) {
            throw new UsageError('nothing to log in with', 'give --username <name> (and --password or a terminal to type it), or --token <token>; on a terminal, `gantry login` alone asks');
          }
          let password = o.password ?? (o.passwordStdin ? await readStdinLine(io) : undefined);
          if (password === undefined) {
            if (!io.stdinIsTTY) throw new UsageError('no password given', 'pass --password, or pipe it with --password-stdin');
            password = await promptSecret(io, `Password for ${o.username} at ${url}: `);
          }
          let user: UserAnswer;
          try {
            user = await callApi(http, url, 'POST', '/session', { login: o.username, password });
          } catch (e) {
            if (e instanceof ApiError && e.status === 401) {
              throw new CliError('wrong user name or password', 'on first start the root password is printed once and kept in <data-dir>/initial_root_password');
            }
            throw e;
          }
          if (!user.private_token) throw new CliError('the server did not return a private token');
          token = user.private_token;
          username = user.username;
        }
        config.profiles[profileName] = { ...keptOnLogin(config.profiles[profileName]), url, token, username, tokenKind: o.username ? 'private' : tokenKind(token, undefined) };
        config.active = profileName;
        saveConfig(io.env, config);
        io.err(`Logged in to ${url} as ${username} (profile "${profileName}", saved in ${configFile(io.env)}).\n`);
      } finally {
        await http.close();
      }
    });

  program
    .command('logout')
    .description('forget the token of a profile (the active one unless --profile is given); a --web sign-in is revoked on the server')
    .action(async (_opts: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ profile?: string }>();
      const config = loadConfig(io.env);
      const name = o.profile ?? io.env.GANTRY_PROFILE ?? config.active;
      if (!name || !config.profiles[name]) throw new CliError(name ? `no profile named "${name}"` : 'not logged in', 'see `gantry profile list`');
      const { url } = config.profiles[name];
      if (config.profiles[name].tokenKind === 'oauth') {
        // A browser sign-in's tokens are revoked on the server, so a copy of the config file stops working too.
        const { revokeProfileTokens } = await import('../oauth.js');
        if (await revokeProfileTokens(config.profiles[name])) io.err(`Revoked the OAuth token on ${url}.\n`);
        else io.err(`Could not revoke the OAuth token on ${url} (no answer); the access token expires by itself and the refresh token is no longer kept here.\n`);
      }
      delete config.profiles[name];
      if (config.active === name) config.active = Object.keys(config.profiles)[0] ?? null;
      saveConfig(io.env, config);
      io.err(`Logged out of ${url} (removed profile "${name}").\n`);
    });

  const profile = program.command('profile').description('list saved logins or choose the active one');
  profile
    .command('list')
    .description('list profiles (tokens are never shown)')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => {
      const config = loadConfig(io.env);
      const rows = Object.entries(config.profiles).map(([name, p]) => ({ name, url: p.url, username: p.username ?? null, active: name === config.active }));
      if (o.json) return printJson(io, rows);
      if (rows.length === 0) return void io.err('No profiles; log in with `gantry login`.\n');
      io.out(renderTable(rows, [
        { header: '', value: (r) => (r.active ? '*' : '') },
        { header: 'name', value: (r) => r.name },
        { header: 'url', value: (r) => r.url },
        { header: 'user', value: (r) => r.username },
      ]));
    });
  profile
    .command('use')
    .description('make a profile the active one')
    .argument('<name>', 'profile name')
    .action((name: string) => {
      const config = loadConfig(io.env);
      if (!config.profiles[name]) throw new CliError(`no profile named "${name}"`, 'see `gantry profile list`');
      config.active = name;
      saveConfig(io.env, config);
      io.err(`Now using profile "${name}" (${config.profiles[name].url}).\n`);
    });
}

/** One API call outside a saved connection (login checks a token or asks for one). */
async function callApi(http: HttpClient, url: string, method: string, path: string, body?: unknown, token?: string): Promise<UserAnswer> {
  try {
    const auth: Record<string, string> = !token ? {} : tokenKind(token, undefined) === 'oauth' ? { authorization: `Bearer ${token}` } : { 'private-token': token };
    const res = await http.request<UserAnswer>(method, path, { body, headers: auth });
    return res.data;
  } catch (e) {
    throw toCliError(e, url);
  }
}
