/** The runner API v1 client (what GitLab Runner 1.x sends on the wire), on the shared undici HTTP client. */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConnectionError, errorText, HttpClient, type RawResponse } from '../shared/http.js';
import { packageVersion } from '../cli/paths.js';
import { ciApiBase } from './config.js';
import { parseRangeLength } from './trace.js';
import type { BuildPayload, BuildState } from './types.js';

/** The agent's version (the package version). */
export const VERSION = packageVersion();

/** The User-Agent of every request. */
export const USER_AGENT = `gantry-runner ${VERSION} (${platform()}/${arch()}; node ${process.versions.node})`;

/** The `info` object sent with runner requests (name, version, platform, executor, features). */
export function runnerInfo(executor?: string): Record<string, unknown> {
  return {
    name: 'gantry-runner',
    version: VERSION,
    revision: '',
    platform: platform(),
    architecture: arch(),
    ...(executor ? { executor } : {}),
    features: { variables: true, image: false, services: false, artifacts: true, cache: false },
  };
}

/** The answer to a build request. */
export type BuildRequestResult =
  | { kind: 'build'; build: BuildPayload; lastUpdate: string | null }
  | { kind: 'none'; lastUpdate: string | null }
  | { kind: 'forbidden' }
  | { kind: 'error'; message: string };

/** The answer to a PATCH of the trace. */
export type PatchResult =
  | { kind: 'accepted'; buildStatus: string | null }
  | { kind: 'range'; serverLength: number | null }
  | { kind: 'abort'; reason: string }
  | { kind: 'unsupported' }
  | { kind: 'failed'; message: string };

/** The answer to a PUT of the build state: ok, abort (the server no longer wants this build), failed (retry). */
export type UpdateResult = { kind: 'ok' } | { kind: 'abort'; reason: string } | { kind: 'failed'; message: string };

/** Outcome of an upload or a download: ok, or a message and whether retrying may help. */
export type TransferResult = { ok: true; status: number } | { ok: false; status: number | null; message: string; retry: boolean };

/** A runner API client bound to one server URL. */
export class CiClient {
  private readonly http: HttpClient;

  constructor(readonly url: string, timeoutMs = 60_000) {
    this.http = new HttpClient({ baseUrl: ciApiBase(url), headers: { 'user-agent': USER_AGENT }, timeoutMs });
  }

  /** POST /runners/register: 201 {id, token}; throws an Error with a readable message otherwise. */
  async registerRunner(params: { token: string; description?: string; tagList: string[]; runUntagged: boolean; locked: boolean }): Promise<{ id: number | null; token: string }> {
    const body: Record<string, unknown> = { info: runnerInfo(), token: params.token, run_untagged: params.runUntagged, locked: params.locked };
    if (params.description) body.description = params.description;
    if (params.tagList.length > 0) body.tag_list = params.tagList.join(',');
    const res = await this.http.request<{ id?: number; token?: string }>('POST', '/runners/register.json', { body, allowErrors: true });
    if (res.status === 201 && res.data && typeof res.data.token === 'string') return { id: typeof res.data.id === 'number' ? res.data.id : null, token: res.data.token };
    if (res.status === 403) throw new Error('forbidden: the registration token was not accepted (check it in the admin settings or the project\'s CI settings)');
    throw new Error(`registration failed: HTTP ${res.status}${errorText(res.data) ? `: ${errorText(res.data)}` : ''}`);
  }

  /** DELETE /runners/delete with the runner token in a JSON body; returns the status (200 ok, 403 unknown token). */
  async deleteRunner(token: string): Promise<number> {
    const res = await this.http.request('DELETE', '/runners/delete', { body: { token }, allowErrors: true });
    return res.status;
  }

  /**
   * POST /builds/register: a build (201), nothing to do (204/404), forbidden (403: the token is gone) or an error.
   * `holdSeconds` asks a Gantry server to hold the request that long while no build is pending (X-Gantry-Long-Poll:
   * long-polling; 0 = answer at once); other servers ignore the header. `signal` abandons the request (a stop).
   */
  async requestBuild(token: string, lastUpdate: string | null, holdSeconds = 0, signal?: AbortSignal): Promise<BuildRequestResult> {
    const body: Record<string, unknown> = { info: runnerInfo('shell'), token };
    if (lastUpdate) body.last_update = lastUpdate;
    let res;
    try {
      res = await this.http.request<BuildPayload>('POST', '/builds/register.json', {
        body, allowErrors: true, headers: { 'x-gantry-long-poll': String(holdSeconds) }, ...(signal ? { signal } : {}),
      });
    } catch (e) {
      return { kind: 'error', message: (e as Error).message };
    }
    const nextUpdate = res.headers['x-gitlab-last-update'] ?? lastUpdate;
    if (res.status === 201) {
      const b = res.data;
      if (!b || typeof b !== 'object' || typeof b.id !== 'number' || typeof b.token !== 'string' || typeof b.repo_url !== 'string' || typeof b.sha !== 'string') {
        return { kind: 'error', message: 'the server sent a build the runner cannot read (missing id, token, repo_url or sha)' };
      }
      return { kind: 'build', build: b, lastUpdate: nextUpdate };
    }
    if (res.status === 204 || res.status === 404) return { kind: 'none', lastUpdate: nextUpdate };
    if (res.status === 403) return { kind: 'forbidden' };
    return { kind: 'error', message: `HTTP ${res.status}${errorText(res.data) ? `: ${errorText(res.data)}` : ''}` };
  }

  /** PUT /builds/:id with the RUNNER token, the state and (optionally) the full trace. */
  async updateBuild(id: number, runnerToken: string, state: BuildState, trace?: string): Promise<UpdateResult> {
    const body: Record<string, unknown> = { info: runnerInfo('shell'), token: runnerToken, state };
    if (trace !== undefined) body.trace = trace;
    try {
      const res = await this.http.request('PUT', `/builds/${id}.json`, { body, allowErrors: true });
      if (res.status === 200) return { kind: 'ok' };
      if (res.status === 404) return { kind: 'abort', reason: 'the build is no longer running on the server (404)' };
      if (res.status === 403) return { kind: 'abort', reason: 'the server refused the update (403)' };
      return { kind: 'failed', message: `HTTP ${res.status}` };
    } catch (e) {
      return { kind: 'failed', message: (e as Error).message };
    }
  }

  /** PATCH /builds/:id/trace.txt with `Content-Range: <range>` and the raw bytes, authenticated by the build token. */
  async patchTrace(id: number, buildToken: string, range: string, body: Buffer): Promise<PatchResult> {
    let res: RawResponse;
    try {
      res = await this.http.send('PATCH', `/builds/${id}/trace.txt`, {
        headers: { 'content-type': 'text/plain', 'build-token': buildToken, 'content-range': range },
        body,
      });
      await res.body.dump();
    } catch (e) {
      return { kind: 'failed', message: (e as Error).message };
    }
    const buildStatus = res.headers['build-status'] ?? null;
    if (buildStatus === 'canceled' || buildStatus === 'failed') return { kind: 'abort', reason: `the build was ${buildStatus} on the server` };
    if (res.status === 202) return { kind: 'accepted', buildStatus };
    if (res.status === 403) return { kind: 'abort', reason: 'the server refused the trace (403)' };
    if (res.status === 404) return { kind: 'unsupported' };
    if (res.status === 416) return { kind: 'range', serverLength: parseRangeLength(res.headers.range) };
    return { kind: 'failed', message: `HTTP ${res.status}` };
  }

  /**
   * POST /builds/:id/artifacts: a multipart body with one part `file` (the archive), expire_in as a query parameter,
   * authenticated by the build token. 201 is success; 403 and 413 are final, anything else may be retried.
   */
  async uploadArtifacts(id: number, buildToken: string, file: string, filename: string, expireIn?: string): Promise<TransferResult> {
    const boundary = `gantry-${randomBytes(12).toString('hex')}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${basename(filename).replace(/["\r\n]/g, '_')}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const size = statSync(file).size;
    const body = Readable.from((async function* () {
      yield head;
      for await (const chunk of createReadStream(file)) yield chunk as Buffer;
      yield tail;
    })());
    let res: RawResponse;
    try {
      res = await this.http.send('POST', `/builds/${id}/artifacts`, {
        query: { expire_in: expireIn || undefined },
        headers: {
          'build-token': buildToken,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + size + tail.length),
        },
        body,
      });
    } catch (e) {
      return { ok: false, status: null, message: (e as Error).message, retry: e instanceof ConnectionError };
    }
    const text = await res.body.text().catch(() => '');
    if (res.status === 201) return { ok: true, status: 201 };
    const message = messageOf(text) ?? `HTTP ${res.status}`;
    if (res.status === 403) return { ok: false, status: 403, message: `forbidden: ${message}`, retry: false };
    if (res.status === 413) return { ok: false, status: 413, message: 'too large: the archive is over the server\'s maximum artifacts size', retry: false };
    return { ok: false, status: res.status, message, retry: true };
  }

  /** GET /builds/:id/artifacts with that build's token, saved to `dest`. 403 and 404 are final. */
  async downloadArtifacts(id: number, buildToken: string, dest: string): Promise<TransferResult> {
    let res: RawResponse;
    try {
      res = await this.http.send('GET', `/builds/${id}/artifacts`, { headers: { 'build-token': buildToken, accept: '*/*' } });
    } catch (e) {
      return { ok: false, status: null, message: (e as Error).message, retry: true };
    }
    if (res.status !== 200) {
      const message = messageOf(await res.body.text().catch(() => '')) ?? `HTTP ${res.status}`;
      return { ok: false, status: res.status, message, retry: res.status !== 403 && res.status !== 404 };
    }
    try {
      await pipeline(res.body, createWriteStream(dest));
    } catch (e) {
      return { ok: false, status: 200, message: (e as Error).message, retry: true };
    }
    return { ok: true, status: 200 };
  }

  /** Close the connection pool. */
  async close(): Promise<void> {
    await this.http.close();
  }
}

/** The message of a JSON error body, if it is one. */
function messageOf(text: string): string | null {
  if (!text) return null;
  try {
    return errorText(JSON.parse(text));
  } catch {
    return text.slice(0, 200);
  }
}
