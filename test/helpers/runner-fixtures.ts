/**
 * Runner API fixtures: /ci/api/v1 calls through app.inject, and pipelines/builds written straight to the database
 * through the data layer (either engine).
 */
import type { InjectOptions } from 'fastify';
import { now } from '../../daemon/context.js';
import { getSettings } from '../../daemon/services/instance/settings.js';
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
export const registrationToken = async (s: TestServer): Promise<string> => s.ctx.secrets.open((await getSettings(s.ctx)).runnersRegistrationToken);

/** A project's runners token (derived from the server secret and the project's salt). */
export async function projectRunnersToken(s: TestServer, projectId: number): Promise<string> {
  const row = (await s.ctx.data.get<{ salt: string }>('SELECT runners_token_salt AS salt FROM projects WHERE id = ?', [projectId]))!;
  return s.ctx.secrets.derive('runners', row.salt);
}

/** Register a runner through the API; returns {id, token}. */
export async function registerRunner(s: TestServer, params: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const r = await ci(s, 'POST', '/runners/register', { token: await registrationToken(s), ...params });
  if (r.status !== 201) throw new Error(`runner register failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Insert a pipeline row; returns its id. */
export async function insertPipeline(s: TestServer, projectId: number, opts: { ref?: string; sha?: string; beforeSha?: string | null; userId?: number | null; status?: string } = {}): Promise<number> {
  const t = now();
  const r = await s.ctx.data.get<{ id: number }>(
    'INSERT INTO pipelines (project_id, ref, sha, before_sha, status, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
    [projectId, opts.ref ?? 'master', opts.sha ?? SHA, opts.beforeSha ?? null, opts.status ?? 'pending', opts.userId ?? null, t, t]);
  return r!.id;
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
export async function insertBuild(s: TestServer, projectId: number, pipelineId: number, b: BuildFixture = {}): Promise<number> {
  const t = now();
  const r = await s.ctx.data.get<{ id: number }>(
    `INSERT INTO commit_statuses (type, project_id, pipeline_id, name, stage, stage_idx, ref, status, "when", user_id, commands, options,
       yaml_variables, tag_list, queued_at, created_at, updated_at)
     VALUES ('build', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    [
      projectId, pipelineId, b.name ?? 'rspec', b.stage ?? 'test', b.stageIdx ?? 0, b.ref ?? 'master', b.status ?? 'pending', b.when ?? 'on_success',
      b.userId ?? null, b.commands ?? 'echo hello', JSON.stringify(b.options ?? {}), JSON.stringify(b.variables ?? []), JSON.stringify(b.tags ?? []),
      t, t, t,
    ]);
  return r!.id;
}

/** A build row (snake_case columns; times as ISO text, sizes as numbers on either engine). */
export interface BuildRowFacts {
  status: string;
  runner_id: number | null;
  trace_size: number;
  artifacts_file: string | null;
  artifacts_size: number | null;
  artifacts_expire_at: string | null;
  token_hash: string | null;
  token_sealed: string | null;
  [column: string]: unknown;
}

/** A build row's status, runner, trace size, artifacts and token columns. */
export async function buildRow(s: TestServer, id: number): Promise<BuildRowFacts> {
  return (await s.ctx.data.get<BuildRowFacts>('SELECT * FROM commit_statuses WHERE id = ?', [id]))!;
}

/** Put every pending build out of the queue (so a test starts from an empty queue). */
export async function clearQueue(s: TestServer): Promise<void> {
  await s.ctx.data.run("UPDATE commit_statuses SET status = 'canceled' WHERE status IN ('pending', 'running')");
}

/** Claim a build for a runner: the register payload (throws unless 201). */
export async function claim(s: TestServer, runnerToken: string): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await ci(s, 'POST', '/builds/register.json', { token: runnerToken });
  if (r.status !== 201) throw new Error(`claim failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const FLAGS = ['active', 'is_shared', 'locked', 'run_untagged', 'tag', 'allow_failure', 'builds_enabled', 'shared_runners_enabled'];

/** A raw row with its boolean columns as 0/1 whatever the engine (PostgreSQL answers true/false), to compare with SQLite's. */
export function flags01<T extends Record<string, unknown> | undefined>(row: T): T {
  if (!row) return row;
  const out: Record<string, unknown> = { ...row };
  for (const k of FLAGS) if (typeof out[k] === 'boolean') out[k] = out[k] ? 1 : 0;
  return out as T;
}

/** A raw `runners` row (snake_case, flags 0/1), or undefined. */
export async function runnerRow(s: TestServer, id: number): Promise<Record<string, unknown> | undefined> {
  return flags01(await s.ctx.data.get('SELECT * FROM runners WHERE id = ?', [id]));
}

/** Link a runner to a project directly (as a second project would be enabled). */
export async function linkRunner(s: TestServer, runnerId: number, projectId: number): Promise<void> {
  await s.ctx.data.run('INSERT INTO runner_projects (runner_id, project_id, created_at) VALUES (?, ?, ?)', [runnerId, projectId, now()]);
}

/** The ids of the projects a runner is linked to, ascending. */
export async function runnerProjectIds(s: TestServer, runnerId: number): Promise<number[]> {
  return (await s.ctx.data.all<{ id: number }>('SELECT project_id AS id FROM runner_projects WHERE runner_id = ? ORDER BY project_id', [runnerId])).map((r) => r.id);
}

/** Run one statement through the data layer (a fixture's direct write; booleans bound as JS booleans). */
export async function exec(s: TestServer, sql: string, args: unknown[] = []): Promise<void> {
  await s.ctx.data.run(sql, args);
}
