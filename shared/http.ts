/** A small JSON HTTP client on undici, shared by the CLI and the runner agent. */
import type { Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';

type Undici = typeof import('undici');
let undici: Promise<Undici> | null = null;
/** undici is loaded on the first request: commands that make none (help, usage errors, local ones) never pay for it. */
const loadUndici = (): Promise<Undici> =>
  // In the bundle a CommonJS module imported dynamically arrives as its `default` export.
  (undici ??= import('undici').then((m) => ((m as { Agent?: unknown }).Agent ? m : (m as unknown as { default: Undici }).default)));

/** Query string values; undefined and null values are left out, arrays repeat the key with `[]`. */
export type Query = Record<string, string | number | boolean | undefined | null | Array<string | number>>;

/** One HTTP response: status, lower-cased headers and the parsed body (JSON when it is JSON, else text, null when empty). */
export interface HttpResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  data: T;
}

/** The server answered with a status of 400 or more. `body` is the parsed body (the API sends `{"message": ...}`). */
export class HttpError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${method} ${url}: HTTP ${status}${errorText(body) ? `: ${errorText(body)}` : ''}`);
  }

  /** The API's error message as one line (`{"message": "..."}`, a validation hash, or `{"error": ...}`). */
  get apiMessage(): string | null {
    return errorText(this.body);
  }
}

/** The server could not be reached (refused, unknown host, timeout, reset). */
export class ConnectionError extends Error {
  constructor(
    readonly url: string,
    readonly code: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${url}: ${reason}`);
  }
}

/** Render an API error body as one line: strings as is, validation hashes as `field: error, error; field2: ...`. */
export function errorText(body: unknown): string | null {
  if (body === null || body === undefined || body === '') return null;
  if (typeof body === 'string') return body.trim() || null;
  if (typeof body !== 'object') return String(body);
  const o = body as Record<string, unknown>;
  const value = 'message' in o ? o.message : 'error' in o ? o.error : body;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(String).join('; ');
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
      .join('; ');
  }
  return String(value);
}

/** Options of a client: the base URL every path is appended to, headers sent on every request, a timeout. */
export interface HttpClientOptions {
  baseUrl: string;
  headers?: Record<string, string>;
  /** Milliseconds to wait for response headers and between body chunks (default 30 s). */
  timeoutMs?: number;
}

/** Per-request options: query string, JSON body, extra headers, and whether an error status should throw. */
export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** Return responses with status >= 400 instead of throwing HttpError. */
  allowErrors?: boolean;
  /** Abandon the request when this aborts (it rejects with a connection error). */
  signal?: AbortSignal;
}

/** Build `?a=1&b[]=x&b[]=y` from a Query (empty string when nothing is set). */
export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) params.append(`${key}[]`, String(v));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Options of HttpClient.send: query string, extra headers and a raw body. */
export interface RawRequestOptions {
  query?: Query;
  headers?: Record<string, string>;
  body?: string | Buffer | Readable;
}

/** A response of HttpClient.send: the body is a readable stream (with text()/arrayBuffer() helpers) still to be consumed. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Dispatcher.ResponseData['body'];
}

/** A JSON client bound to one base URL with its own connection pool (close it when done). */
export class HttpClient {
  readonly baseUrl: string;
  private agent: Agent | null = null;
  private readonly timeout: number;
  private readonly headers: Record<string, string>;

  constructor(options: HttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.headers = { 'user-agent': 'gantry', accept: 'application/json', ...options.headers };
    this.timeout = options.timeoutMs ?? 30_000;
  }

  /** undici's request function and this client's connection pool, made on first use. */
  private async transport(): Promise<{ request: Undici['request']; agent: Agent }> {
    const u = await loadUndici();
    const timeout = this.timeout;
    this.agent ??= new u.Agent({ headersTimeout: timeout, bodyTimeout: timeout, connectTimeout: Math.min(timeout, 10_000) });
    return { request: u.request, agent: this.agent };
  }

  /** Send one request; the body, when given, is sent as JSON. Throws HttpError for status >= 400 (unless allowErrors). */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const url = `${this.baseUrl}${path}${queryString(options.query)}`;
    const headers: Record<string, string> = { ...this.headers, ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const { request, agent } = await this.transport();
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, { method: method as 'GET', headers, body, dispatcher: agent, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (e) {
      throw connectionError(this.baseUrl, e);
    }
    const text = await res.body.text();
    const responseHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined) responseHeaders[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    let data: unknown = text === '' ? null : text;
    if (text !== '' && /\bjson\b/.test(responseHeaders['content-type'] ?? '')) {
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
    }
    if (res.statusCode >= 400 && !options.allowErrors) throw new HttpError(method, url, res.statusCode, data);
    return { status: res.statusCode, headers: responseHeaders, data: data as T };
  }

  /**
   * Send one request with a raw body (string, Buffer or stream; set content-type in headers) and return the
   * response with its body unread, whatever the status (for binary downloads, streamed uploads, text PATCHes).
   */
  async send(method: string, path: string, options: RawRequestOptions = {}): Promise<RawResponse> {
    const url = `${this.baseUrl}${path}${queryString(options.query)}`;
    const { request, agent } = await this.transport();
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, { method: method as 'GET', headers: { ...this.headers, ...options.headers }, body: options.body, dispatcher: agent });
    } catch (e) {
      throw connectionError(this.baseUrl, e);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    return { status: res.statusCode, headers, body: res.body };
  }

  /** Release the connection pool (lets the process exit right away). */
  async close(): Promise<void> {
    await this.agent?.close();
  }
}

/** Map a low-level network failure to a ConnectionError with a readable reason. */
function connectionError(baseUrl: string, e: unknown): ConnectionError {
  const err = e as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = err.code ?? err.cause?.code ?? 'UNKNOWN';
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'unknown host',
    EAI_AGAIN: 'host name lookup failed',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'connection timed out',
    UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
    UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
    UND_ERR_BODY_TIMEOUT: 'the answer stalled',
    UND_ERR_SOCKET: 'the connection was closed',
    UND_ERR_INVALID_ARG: 'invalid URL',
    ERR_INVALID_URL: 'invalid URL',
  };
  return new ConnectionError(baseUrl, code, reasons[code] ?? err.message);
}
