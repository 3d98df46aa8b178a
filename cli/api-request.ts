/**
 * `gantry api`: build one request from the command line (endpoint placeholders, typed fields, headers, a raw body),
 * send it with the saved token, follow X-Next-Page when asked, and print the answer for a person or a pipe.
 */
import { STATUS_CODES } from 'node:http';
import { HttpClient } from '../shared/http.js';
import type { ApiCommandOptions } from './commands/api.js';
import { authHeaders, toCliError, type Connection } from './client.js';
import { CliError, UsageError } from './errors.js';
import type { IO } from './io.js';

/** Paths outside /api/v3 that are sent as they are. */
const ROOT_PREFIXES = ['/ci/', '/oauth/', '/api/'];

/** A field value: string, number, boolean, null, or a list of them (`key[]=`). */
type FieldValue = string | number | boolean | null;

/** The value of a typed field (-F): true/false/null/numbers as JSON, @file as the file's text (@- for stdin). */
export async function typedValue(io: IO, text: string): Promise<FieldValue> {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(text)) return Number(text);
  if (text.startsWith('@')) {
    const { readTextFile } = await import('./editor.js');
    return readTextFile(io, text.slice(1));
  }
  return text;
}

/** Fields from -f (strings) and -F (typed), in order; `key[]=v` collects a list. */
export async function parseFields(io: IO, raw: string[] = [], typed: string[] = []): Promise<Record<string, FieldValue | FieldValue[]>> {
  const fields: Record<string, FieldValue | FieldValue[]> = {};
  const entries = [...raw.map((f) => ({ f, typed: false })), ...typed.map((f) => ({ f, typed: true }))];
  for (const { f, typed: isTyped } of entries) {
    const eq = f.indexOf('=');
    if (eq < 1) throw new UsageError(`a field is key=value, not "${f}"`, 'like -f title="Flaky test" or -F confidential=true');
    const key = f.slice(0, eq);
    const value = isTyped ? await typedValue(io, f.slice(eq + 1)) : f.slice(eq + 1);
    if (key.endsWith('[]')) {
      const name = key.slice(0, -2);
      const list = Array.isArray(fields[name]) ? (fields[name] as FieldValue[]) : [];
      fields[name] = [...list, value];
    } else fields[key] = value;
  }
  return fields;
}

/** Headers from `-H key:value`. */
export function parseHeaders(list: string[] = []): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of list) {
    const colon = h.indexOf(':');
    if (colon < 1) throw new UsageError(`a header is key:value, not "${h}"`, 'like -H "Accept: text/plain"');
    headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  }
  return headers;
}

/** The values placeholders stand for (from -R or the clone), looked up only when the endpoint uses one. */
async function placeholders(io: IO, connection: Connection, endpoint: string, repo: string | undefined): Promise<Record<string, string>> {
  const used = new Set([...endpoint.matchAll(/:(id|fullpath|namespace|repo|branch)\b/g)].map((m) => m[1]!));
  if (used.size === 0) return {};
  const values: Record<string, string> = {};
  if (used.has('branch')) {
    const { currentBranch } = await import('./local-git.js');
    const branch = await currentBranch(io).catch(() => null);
    if (!branch) throw new UsageError(':branch needs a checked-out branch', 'run it inside a clone on a branch, or write the branch name');
    values.branch = encodeURIComponent(branch);
  }
  if (['id', 'fullpath', 'namespace', 'repo'].some((p) => used.has(p))) {
    const { resolveProject } = await import('./current-project.js');
    const { project } = await resolveProject(io, connection.url, repo);
    const slash = project.lastIndexOf('/');
    values.id = encodeURIComponent(project);
    values.fullpath = project;
    values.namespace = slash > 0 ? project.slice(0, slash) : '';
    values.repo = slash > 0 ? project.slice(slash + 1) : project;
  }
  return values;
}

/** The request path (from the server root) and query of an endpoint: placeholders filled, /api/v3 added. */
export function requestTarget(endpoint: string, values: Record<string, string>, serverUrl: string): { path: string; query: URLSearchParams } {
  let e = endpoint.trim();
  if (/^https?:\/\//.test(e)) {
    if (!e.startsWith(`${serverUrl}/`)) throw new UsageError(`${e} is not on ${serverUrl}`, 'give a path such as projects/:id, or --url for another server');
    e = e.slice(serverUrl.length);
  }
  e = e.replace(/:(id|fullpath|namespace|repo|branch)\b/g, (m, name: string) => values[name] ?? m);
  const [pathPart, queryPart = ''] = e.split(/\?(.*)/s, 2) as [string, string?];
  const path = pathPart.startsWith('/') ? pathPart : `/${pathPart}`;
  return { path: ROOT_PREFIXES.some((p) => path.startsWith(p)) ? path : `/api/v3${path}`, query: new URLSearchParams(queryPart) };
}

/** The query string of the endpoint's own query plus GET fields (lists as key[]=v). */
function withFields(query: URLSearchParams, fields: Record<string, FieldValue | FieldValue[]>): URLSearchParams {
  const q = new URLSearchParams(query);
  for (const [k, v] of Object.entries(fields)) {
    if (Array.isArray(v)) for (const item of v) q.append(`${k}[]`, String(item));
    else q.set(k, v === null ? '' : String(v));
  }
  return q;
}

/** Parse a body as JSON when it is JSON, else null. */
function jsonOf(text: string, contentType: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (!text || !/\bjson\b/.test(contentType ?? '')) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** One response as received. */
interface Answer {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  text: string;
}

/** Run `gantry api`. */
export async function runApi(io: IO, connection: Connection, endpoint: string, o: ApiCommandOptions): Promise<void> {
  const fields = await parseFields(io, o.rawField, o.field);
  const headers = parseHeaders(o.header);
  if (o.input !== undefined && Object.keys(fields).length > 0 && (o.method ?? 'POST').toUpperCase() !== 'GET') {
    throw new UsageError('give fields or --input, not both', 'with --input, put the fields in the file');
  }
  const method = (o.method ?? (!o.paginate && (Object.keys(fields).length > 0 || o.input !== undefined) ? 'POST' : 'GET')).toUpperCase();
  if (!/^[A-Z]+$/.test(method)) throw new UsageError(`not an HTTP method: "${o.method}"`, 'use GET, POST, PUT, PATCH, DELETE or HEAD');
  if (o.paginate && method !== 'GET') throw new UsageError('--paginate follows pages of a GET', 'leave out -X, or --paginate');
  const target = requestTarget(endpoint, await placeholders(io, connection, endpoint, o.repo), connection.url);
  let body: string | Buffer | undefined;
  let query = target.query;
  if (o.input !== undefined) {
    body = o.input === '-' ? await readAll(io) : await (await import('node:fs/promises')).readFile(o.input).catch((e: Error) => {
      throw new CliError(`cannot read ${o.input}: ${e.message}`);
    });
    headers['content-type'] ??= 'application/json';
  }
  if (method === 'GET' || method === 'HEAD') query = withFields(query, fields);
  else if (body === undefined && Object.keys(fields).length > 0) {
    body = JSON.stringify(fields);
    headers['content-type'] ??= 'application/json';
  }

  const http = new HttpClient({ baseUrl: connection.url, headers: authHeaders(connection) });
  try {
    const send = async (q: URLSearchParams): Promise<Answer> => {
      try {
        const res = await http.send(method, `${target.path}${q.size ? `?${q}` : ''}`, { headers, body });
        return { status: res.status, statusText: STATUS_CODES[res.status] ?? '', headers: res.headers, text: await res.body.text() };
      } catch (e) {
        throw toCliError(e, connection.url);
      }
    };
    let answer = await send(query);
    const pages: Answer[] = [answer];
    while (o.paginate && answer.status < 400) {
      const next = Number(answer.headers['x-next-page']);
      if (!Number.isInteger(next) || next < 1) break;
      const q = new URLSearchParams(query);
      q.set('page', String(next));
      answer = await send(q);
      pages.push(answer);
    }
    await printAnswer(io, pages, o);
  } finally {
    await http.close();
  }
}

/** Print the pages (one unless --paginate): status and headers with -i, then the body; a failure exits 1. */
async function printAnswer(io: IO, pages: Answer[], o: ApiCommandOptions): Promise<void> {
  const last = pages[pages.length - 1]!;
  if (o.include) {
    for (const p of pages) {
      io.out(`HTTP/1.1 ${p.status} ${p.statusText}\n`);
      for (const [k, v] of Object.entries(p.headers)) io.out(`${k.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase())}: ${v}\n`);
      io.out('\n');
    }
  }
  if (last.status >= 400) {
    if (last.text) io.err(last.text.endsWith('\n') ? last.text : `${last.text}\n`);
    const json = jsonOf(last.text, last.headers['content-type']);
    const message = json.ok && json.value && typeof json.value === 'object' && 'message' in json.value ? JSON.stringify((json.value as { message: unknown }).message) : '';
    const hints: Record<number, string> = {
      401: 'the token is missing, wrong or revoked: check `gantry auth status`',
      403: 'your account is not allowed to do this',
      404: 'check the path (see the API docs at <server>/api/v3/docs) and that your account can see it',
    };
    throw new CliError(`HTTP ${last.status}${message ? ` ${message}` : ''}`, hints[last.status] ?? (last.status >= 500 ? 'the server failed; its log has the details (`gantry daemon logs`)' : 'check the fields you sent'));
  }
  if (o.silent) return;
  const parsed = pages.map((p) => jsonOf(p.text, p.headers['content-type']));
  const allJson = parsed.every((p) => p.ok);
  let data: unknown;
  if (pages.length > 1 && allJson && parsed.every((p) => p.ok && Array.isArray(p.value))) {
    data = parsed.flatMap((p) => (p.ok ? (p.value as unknown[]) : []));
  } else if (pages.length === 1 && allJson) data = (parsed[0] as { value: unknown }).value;
  if (o.jq !== undefined) {
    if (data === undefined) throw new CliError('the answer is not JSON: --jq has nothing to filter', 'leave out --jq');
    const { runJq } = await import('./jq.js');
    try {
      io.out(await runJq(o.jq, data, io.stdoutIsTTY));
    } catch (e) {
      // what jq printed before its error, as jq itself leaves it on stdout
      const printed = (e as { output?: string }).output;
      if (printed) io.out(printed);
      throw e;
    }
    return;
  }
  if (data !== undefined && (io.stdoutIsTTY || pages.length > 1)) {
    io.out(`${JSON.stringify(data, null, io.stdoutIsTTY ? 2 : undefined)}\n`);
    return;
  }
  for (const p of pages) io.out(p.text);
  // A JSON answer ends with a newline in a pipe too (as jq and gh print it); raw bytes (a file) stay exact there.
  const tail = pages[pages.length - 1]!.text;
  if ((io.stdoutIsTTY || data !== undefined) && tail && !tail.endsWith('\n')) io.out('\n');
}

/** All of stdin as bytes (for --input -). */
async function readAll(io: IO): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}
