/**
 * gantry auth status: which server, which user, which kind of token, and whether the server answers; auth setup-git and
 * auth git-credential (git's credentials from the logins: ./git-credential.ts).
 */
import type { Command } from 'commander';
import { ApiError, type Factory } from '../client.js';
import { CliError } from '../errors.js';
import { printJson, renderRecord } from '../output.js';
import { loadConfig, tokenKind } from '../profiles.js';
import { connectionFlags } from './common.js';
import { registerGitCredential } from './git-credential.js';

const KIND_TEXT: Record<string, string> = {
  private: 'private token (the account\'s own; changes only when reset)',
  personal: 'personal access token',
  oauth: 'OAuth access token (`gantry login --web`)',
  unknown: 'token of an unknown kind',
};

/** Adds the verbs of the `auth` noun. */
export function registerAuth(noun: Command, factory: Factory): void {
  const { io } = factory;
  registerGitCredential(noun, factory);
  noun.command('status')
    .description('show the server, the user and the kind of token in use, and whether the server answers')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExit code 1 when not logged in, when the server does not answer or refuses the token.')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const flags = connectionFlags(cmd);
      const connection = factory.connection(flags);
      const config = loadConfig(io.env);
      const profile = connection.profile ? config.profiles[connection.profile] : undefined;
      const source = flags.token ? '--token' : io.env.GANTRY_TOKEN ? 'GANTRY_TOKEN' : `profile ${connection.profile}`;
      const kind = tokenKind(connection.token, flags.token || io.env.GANTRY_TOKEN ? undefined : profile?.tokenKind);
      const api = factory.client(flags);
      const started = Date.now();
      let user: { username: string; name?: string; is_admin?: boolean } | null = null;
      let problem: CliError | null = null;
      try {
        user = await api.get('/user');
      } catch (e) {
        // An OAuth connection has tried a refresh already and says to sign in again with the browser.
        problem = e instanceof ApiError && e.status === 401 && !connection.oauth
          ? new CliError(`${connection.url} refused the token`, `log in again: \`gantry login --url ${connection.url}\``)
          : e instanceof CliError ? e : new CliError(String(e));
      }
      const ms = Date.now() - started;
      let expires: string | null = null;
      if (user && kind === 'personal') {
        // The API never shows a token's secret: when the user has one active personal token, it is this one.
        const tokens = await api.get<Array<{ expires_at: string | null }>>('/user/personal_access_tokens', { state: 'active', per_page: 2 }).catch(() => []);
        if (tokens.length === 1) expires = tokens[0]!.expires_at ?? 'never';
      }
      if (kind === 'oauth') {
        // Read after the request: an expired access token has just been refreshed (and saved) by it.
        const oauth = api.connection.oauth;
        expires = oauth?.expiresAt ? new Date(oauth.expiresAt).toISOString() : oauth?.refreshToken ? 'never' : 'unknown (see `gantry api /oauth/token/info`)';
      }
      const status = {
        server: connection.url,
        answers: problem === null || problem instanceof ApiError,
        response_ms: ms,
        profile: connection.profile,
        token_source: source,
        token_kind: kind,
        token_expires: expires,
        user: user?.username ?? null,
        admin: user?.is_admin ?? null,
        error: problem?.message ?? null,
      };
      if (o.json) printJson(io, status);
      else {
        io.out(renderRecord([
          ['server', `${status.server} (${status.answers ? `answers, ${ms} ms` : 'does not answer'})`],
          ['user', user ? `${user.username}${user.is_admin ? ' (administrator)' : ''}` : 'none'],
          ['token', `${KIND_TEXT[kind]}, from ${source}`],
          ...(kind === 'personal' ? [['expires', expires ?? 'see `gantry api user/personal_access_tokens`'] as [string, unknown]] : []),
          ...(kind === 'oauth' ? [['expires', `${expires} (refreshed by itself with the refresh token)`] as [string, unknown]] : []),
          ...(connection.profile ? [['profile', connection.profile] as [string, unknown]] : []),
        ]));
      }
      if (problem) throw problem;
    });
}
