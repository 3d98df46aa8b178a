/** Runner API fixtures: /ci/api/v1 calls through app.inject, and pipelines/builds written straight to the database. */
import type { InjectOptions } from 'fastify';
import { now } from '../../daemon/context.js';
import { runnersRegistrationToken } from '../../daemon/services/settings.js';
import type { TestServer } from './app.js';

export const SHA = 'a'.repeat(40);

/** A /ci/api/v1 response. */
export interface CiResponse {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, string | string[] | number | undefined>;
  raw: Buffer;
}

/** Call /ci/api/v1<path> (a JSON payload object is sent as JSON). */
export async function ci(
  s: TestServer, method: InjectOptions['method'], path: string, payload?: unknown, headers: Record<string, string> = {},
): Promise<CiResponse> {
  const json = payload !== undefined && !Buffer.isBuffer(payload) && typeof payload === 'object';
  const res = await s.app.inject({
    method,
    url: `/ci/api/v1${path}`,
    headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(payload !== undefined ? { payload: (json ? JSON.stringify(payload) : payload) as InjectOptions['payload'] } : {}),
  });
  let body: unknown;
  try {
    body = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    body = res.body;
  }
  return { status: res.statusCode, body, headers: res.headers as CiResponse['headers'], raw: res.rawPayload };
}

/** The instance registration token. */
export const registrationToken = (s: TestServer) => runnersRegistrationToken(s.ctx);

/** A project's runners token (derived from the server secret and the project's salt). */
export function projectRunnersToken(s: TestServer, projectId: number): string {
  const row = s.ctx.db.$client.prepare(`SELECT runners_token_salt AS salt FROM projects WHERE id = ?`).get(projectId) as { salt: string };
  return s.ctx.secrets.derive('runners', row.salt);
}

/** Register a runner through the API; returns {id, token}. */
export async function registerRunner(s: TestServer, params: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const r = await ci(s, 'POST', '/runners/register', { token: registrationToken(s), ...params });
  if (r.status !== 201) throw new Error(`runner register failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Insert a pipeline row; returns its id. */
export function insertPipeline(s: TestServer, projectId: number, opts: { ref?: string; sha?: string; beforeSha?: string | null; userId?: number | null; status?: string } = {}): number {
  const t = now();
  const r = s.ctx.db.$client
    .prepare(`INSERT INTO pipelines (project_id, ref, sha, before_sha, status, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(projectId, opts.ref ?? 'master', opts.sha ?? SHA, opts.beforeSha ?? null, opts.status ?? 'pending', opts.userId ?? null, t, t);
  return Number(r.lastInsertRowid);
}

/** What insertBuild accepts. */
export interface BuildFixture {
  name?: string;
  stage?: string;
  stageIdx?: number;
  status?: string;
  tags?: string[];
  commands?: string;
  options?: unknown;
  variables?: { key: string; value: string; public: boolean }[];
  ref?: string;
  userId?: number | null;
  when?: string;
}

/** Insert a build row (pending by default); returns its id. */
export function insertBuild(s: TestServer, projectId: number, pipelineId: number, b: BuildFixture = {}): number {
  const t = now();
  const r = s.ctx.db.$client
    .prepare(
      `INSERT INTO commit_statuses (type, project_id, pipeline_id, name, stage, stage_idx, ref, status, "when", user_id, commands, options,
         yaml_variables, tag_list, queued_at, created_at, updated_at)
       VALUES ('build', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      projectId, pipelineId, b.name ?? 'rspec', b.stage ?? 'test', b.stageIdx ?? 0, b.ref ?? 'master', b.status ?? 'pending', b.when ?? 'on_success',
      b.userId ?? null, b.commands ?? 'echo hello', JSON.stringify(b.options ?? {}), JSON.stringify(b.variables ?? []), JSON.stringify(b.tags ?? []),
      t, t, t,
    );
  return Number(r.lastInsertRowid);
}

/** A build row's status and runner. */
export function buildRow(s: TestServer, id: number): { status: string; runner_id: number | null; trace_size: number; artifacts_file: string | null; artifacts_size: number | null; artifacts_expire_at: string | null; token_hash: string | null } {
  return s.ctx.db.$client.prepare(`SELECT * FROM commit_statuses WHERE id = ?`).get(id) as ReturnType<typeof buildRow>;
}

/** Put every pending build out of the queue (so a test starts from an empty queue). */
export function clearQueue(s: TestServer): void {
  s.ctx.db.$client.prepare(`UPDATE commit_statuses SET status = 'canceled' WHERE status IN ('pending', 'running')`).run();
}

/** Claim a build for a runner: the register payload (throws unless 201). */
export async function claim(s: TestServer, runnerToken: string): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await ci(s, 'POST', '/builds/register.json', { token: runnerToken });
  if (r.status !== 201) throw new Error(`claim failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
