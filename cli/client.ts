/** The API client factory: which server and token to use, JSON requests, error mapping with hints, pagination. */
import { ConnectionError, HttpClient, HttpError, type Query } from '../shared/http.js';
import { CliError, UsageError } from './errors.js';
import type { IO } from './io.js';
import { loadConfig, normaliseUrl, tokenKind, type CliConfig } from './profiles.js';

/** The global connection flags (`--url`, `--token`, `--profile`). */
export interface ConnectionFlags {
  url?: string;
  token?: string;
  profile?: string;
}

/** Where requests go and with which token. */
export interface Connection {
  url: string;
  token: string;
  /** The profile the URL or token came from, if any. */
  profile: string | null;
  /** Set when the token is an OAuth access token of the profile (`gantry login --web`): sent as a Bearer token. */
  oauth?: OAuthState;
}

/** What an OAuth connection needs to refresh its access token. */
export interface OAuthState {
  refreshToken: string | null;
  /** Expiry of the access token (ms since the epoch); null when the server gave none. */
  expiresAt: number | null;
}

/** An OAuth access token is refreshed this long before it expires (clocks differ, requests take time). */
export const REFRESH_MARGIN_MS = 60_000;

/**
 * Resolve the connection: flags win over GANTRY_URL / GANTRY_TOKEN, which win over the profile (--profile,
 * GANTRY_PROFILE, or the active one). A profile's token is only used for that profile's own URL.
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv, config: CliConfig): Connection {
  const profileName = flags.profile ?? env.GANTRY_PROFILE ?? config.active;
  const profile = profileName ? config.profiles[profileName] : undefined;
  if ((flags.profile || env.GANTRY_PROFILE) && !profile) {
    throw new UsageError(`no profile named "${profileName}"`, 'see `gantry profile list`, or create it with `gantry login --profile <name>`');
  }
  const rawUrl = flags.url ?? env.GANTRY_URL ?? profile?.url;
  if (!rawUrl) throw new CliError('not logged in to any Gantry server', 'run `gantry login --url <url> --username <name>` (or set GANTRY_URL and GANTRY_TOKEN)');
  const url = normaliseUrl(rawUrl);
  const sameServer = profile && normaliseUrl(profile.url) === url;
  const token = flags.token ?? env.GANTRY_TOKEN ?? (sameServer ? profile.token : undefined);
  if (!token) throw new CliError(`no token for ${url}`, `run \`gantry login --url ${url}\` (or pass --token / set GANTRY_TOKEN)`);
  const connection: Connection = { url, token, profile: sameServer ? profileName ?? null : null };
  if (sameServer && token === profile.token && profile.tokenKind === 'oauth') {
    connection.oauth = { refreshToken: profile.refreshToken ?? null, expiresAt: profile.tokenExpiresAt ? Date.parse(profile.tokenExpiresAt) : null };
  } else if (token !== profile?.token && tokenKind(token, undefined) === 'oauth') {
    // An OAuth access token from --token / GANTRY_TOKEN: sent as a Bearer token, never refreshed.
    connection.oauth = { refreshToken: null, expiresAt: null };
  }
  return connection;
}

/** The header a connection authenticates with: `Authorization: Bearer` for OAuth tokens, else `Private-Token`. */
export function authHeaders(connection: Connection): Record<string, string> {
  return connection.oauth ? { authorization: `Bearer ${connection.token}` } : { 'private-token': connection.token };
}

/** Whether an OAuth connection's access token has expired or expires within REFRESH_MARGIN_MS. */
export function needsRefresh(connection: Connection, now = Date.now()): boolean {
  const expiresAt = connection.oauth?.expiresAt;
  return expiresAt !== undefined && expiresAt !== null && expiresAt - REFRESH_MARGIN_MS <= now;
}

const refreshes = new WeakMap<Connection, Promise<void>>();

/** Refresh an OAuth connection's access token (one refresh at a time per connection; oauth.ts is loaded only now). */
export function refreshConnection(env: NodeJS.ProcessEnv, connection: Connection, force = false): Promise<void> {
  let pending = refreshes.get(connection);
  if (!pending) {
    pending = import('./oauth.js').then((m) => m.refreshOAuthToken(env, connection, force)).finally(() => refreshes.delete(connection));
    refreshes.set(connection, pending);
  }
  return pending;
}

/** An API error answer (status >= 400) as a CLI error: the API's message plus a hint on what to do next. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    message: string,
    hint: string | null,
  ) {
    super(message, hint);
  }
}

/** Turn an HTTP or network failure into a CliError with a hint for the person at the keyboard. */
export function toCliError(e: unknown, url: string): unknown {
  if (e instanceof ConnectionError) {
    return new CliError(`cannot reach ${url}: ${e.reason}`, `is gantryd running there? start it with \`gantry daemon start\`, or check --url / the profile`);
  }
  if (!(e instanceof HttpError)) return e;
  const message = e.apiMessage ?? `HTTP ${e.status}`;
  const hints: Record<number, string> = {
    400: 'check the values you passed (`--help` lists them)',
    401: `your token for ${url} is missing, wrong or revoked: run \`gantry login --url ${url}\``,
    403: 'your account is not allowed to do this; ask an administrator or the owner',
    404: 'check the id or path (namespace/name) and that your account can see it',
    409: 'it conflicts with something that exists already; choose another name or path',
    413: 'the request is too large',
  };
  const hint = hints[e.status] ?? (e.status >= 500 ? 'the server failed; its log has the details (`gantry daemon logs`)' : null);
  return new ApiError(e.status, message, hint);
}

/** One page of a list and where the next one is. */
export interface Page<T> {
  items: T[];
  total: number | null;
  nextPage: number | null;
}

/** Listing options shared by every `list` command. */
export interface ListOptions {
  all?: boolean;
  page?: number;
  perPage?: number;
}

/** The Gantry API v3 client used by commands. */
export class ApiClient {
  private readonly http: HttpClient;

  /** `env` locates the config file an OAuth profile's refreshed tokens are saved to. */
  constructor(readonly connection: Connection, private readonly env: NodeJS.ProcessEnv = {}) {
    this.http = new HttpClient({ baseUrl: `${connection.url}/api/v3` });
  }

  /** The connection, its OAuth access token refreshed first when it has expired or is about to. */
  async fresh(): Promise<Connection> {
    if (needsRefresh(this.connection)) await refreshConnection(this.env, this.connection);
    return this.connection;
  }

  /**
   * Send a request and return status + data; errors become ApiError / CliError. 304 is returned, not thrown. With an
   * OAuth token, a 401 refreshes the token once and sends the request again.
   */
  async request<T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<{ status: number; data: T; headers: Record<string, string> }> {
    const send = async () => this.http.request<T>(method, path, { ...opts, headers: authHeaders(await this.fresh()) });
    try {
      return await send();
    } catch (e) {
      if (!(e instanceof HttpError && e.status === 401 && this.connection.oauth)) throw toCliError(e, this.connection.url);
    }
    await refreshConnection(this.env, this.connection, true);
    try {
      return await send();
    } catch (e) {
      if (e instanceof HttpError && e.status === 401) throw (await import('./oauth.js')).signInAgain(this.connection.url, 'was refused');
      throw toCliError(e, this.connection.url);
    }
  }

  /** GET and return the data. */
  async get<T>(path: string, query?: Query): Promise<T> {
    return (await this.request<T>('GET', path, { query })).data;
  }

  /** POST a JSON body and return the data. */
  async post<T>(path: string, body: unknown = {}): Promise<T> {
    return (await this.request<T>('POST', path, { body })).data;
  }

  /** PUT a JSON body and return the data. */
  async put<T>(path: string, body: unknown = {}): Promise<T> {
    return (await this.request<T>('PUT', path, { body })).data;
  }

  /** DELETE and return the data. */
  async delete<T>(path: string): Promise<T> {
    return (await this.request<T>('DELETE', path)).data;
  }

  /** List a paginated resource: one page (page/perPage), or every page following X-Next-Page when `all` is set. */
  async list<T>(path: string, query: Query = {}, opts: ListOptions = {}): Promise<Page<T>> {
    const perPage = opts.perPage ?? (opts.all ? 100 : 20);
    let page: number | null = opts.page ?? 1;
    const items: T[] = [];
    let total: number | null = null;
    let nextPage: number | null = null;
    while (page !== null) {
      const res: { data: T[]; headers: Record<string, string> } = await this.request<T[]>('GET', path, { query: { ...query, page, per_page: perPage } });
      if (!Array.isArray(res.data)) throw new CliError(`unexpected answer from ${path}: not a list`);
      items.push(...res.data);
      total = res.headers['x-total'] ? Number(res.headers['x-total']) : null;
      const next: number = Number(res.headers['x-next-page']);
      nextPage = Number.isInteger(next) && next > page ? next : null;
      page = opts.all ? nextPage : null;
    }
    return { items, total, nextPage };
  }

  /** Release connections. */
  async close(): Promise<void> {
    await this.http.close();
  }
}

/** Hands commands their IO and (lazily) an API client; closes what it opened. */
export class Factory {
  private clients: ApiClient[] = [];

  constructor(readonly io: IO) {}

  /** The server and token these flags resolve to (no client made). */
  connection(flags: ConnectionFlags): Connection {
    return resolveConnection(flags, this.io.env, loadConfig(this.io.env));
  }

  /** The connection of these flags, an OAuth token refreshed first when it has expired or is about to. */
  async freshConnection(flags: ConnectionFlags): Promise<Connection> {
    const connection = this.connection(flags);
    if (needsRefresh(connection)) await refreshConnection(this.io.env, connection);
    return connection;
  }

  /** An API client for the resolved connection of these flags. */
  client(flags: ConnectionFlags): ApiClient {
    const client = new ApiClient(this.connection(flags), this.io.env);
    this.clients.push(client);
    return client;
  }

  /** Close every client handed out. */
  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.close()));
    this.clients = [];
  }
}

/** Tell the user on stderr that the list has more pages than were shown. */
export function noteMorePages(io: IO, page: Page<unknown>): void {
  if (page.nextPage === null) return;
  const of = page.total !== null ? ` of ${page.total}` : '';
  io.err(`Showing ${page.items.length}${of}; use --all for every page, or --page ${page.nextPage}.\n`);
}
