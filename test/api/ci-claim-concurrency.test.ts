/** 16 runners claim 2,000 pending builds in parallel over HTTP: every build is handed out exactly once. */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { now } from '../../daemon/context.js';
import { settleBuildWork } from '../../daemon/services/ci/builds.js';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { SHA, projectRunnersToken, registerRunner } from '../helpers/runner-fixtures.js';

const BUILDS = 2000;
const PIPELINES = 200;

let s: TestServer;
let base: string;
let runners: { id: number; token: string }[];
let buildIds: number[];

beforeAll(async () => {
  s = await startTestServer(); // (no per-commit fsync, as every test server: exactly-once claims, not disk speed)
  const owner = await s.user('cowner', { projects_limit: 10 });
  const a = (await makeProject(s, owner, 'alpha')).id;
  const b = (await makeProject(s, owner, 'beta')).id;
  // 12 shared runners and 4 specific runners of project alpha
  runners = [];
  for (let i = 0; i < 12; i++) runners.push(await registerRunner(s, { description: `shared-${i}` }));
  for (let i = 0; i < 4; i++) runners.push(await registerRunner(s, { token: await projectRunnersToken(s, a), description: `alpha-${i}` }));
  // 2,000 pending builds in 200 pipelines, written straight to the database
  buildIds = await insertQueue(s, a, b);
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}/ci/api/v1`;
}, 60_000);

afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s.close();
});

/** 2,000 pending builds in 200 pipelines alternating between projects `a` and `b`, in one transaction; their ids. */
async function insertQueue(s: TestServer, a: number, b: number): Promise<number[]> {
  const t = now();
  return s.ctx.data.transaction(async (tx) => {
    const ids: number[] = [];
    for (let p = 0; p < PIPELINES; p++) {
      const project = p % 2 === 0 ? a : b;
      const pipeline = (await tx.get<{ id: number }>(
        `INSERT INTO pipelines (project_id, ref, sha, status, created_at, updated_at) VALUES (?, 'master', ?, 'pending', ?, ?) RETURNING id`, [project, SHA, t, t]))!.id;
      for (let j = 0; j < BUILDS / PIPELINES; j++) {
        ids.push((await tx.get<{ id: number }>(
          `INSERT INTO commit_statuses (type, project_id, pipeline_id, name, stage, stage_idx, ref, status, commands, options, yaml_variables, tag_list, queued_at, created_at, updated_at)
           VALUES ('build', ?, ?, ?, 'test', 0, 'master', 'pending', 'true', '{}', '[]', '[]', ?, ?, ?) RETURNING id`, [project, pipeline, `job-${j}`, t, t, t]))!.id);
      }
    }
    return ids;
  });
}

/** One runner's loop: claim until the server says there is nothing left; returns the ids it got. */
async function drain(runner: { id: number; token: string }): Promise<{ id: number; runner: number; token: string }[]> {
  const got: { id: number; runner: number; token: string }[] = [];
  for (;;) {
    const res = await fetch(`${base}/builds/register.json`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: runner.token }),
    });
    if (res.status === 204) return got;
    if (res.status !== 201) throw new Error(`claim answered ${res.status}: ${await res.text()}`);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as { id: number; token: string; status: string };
    expect(body.status).toBe('running');
    got.push({ id: body.id, runner: runner.id, token: body.token });
  }
}

describe('concurrent build claims', () => {
  it('hands every one of 2,000 builds to exactly one of 16 runners', async () => {
    const results = (await Promise.all(runners.map(drain))).flat();
    const ids = results.map((r) => r.id);
    expect(ids.length).toBe(BUILDS);
    expect(new Set(ids).size).toBe(BUILDS);
    expect([...ids].sort((x, y) => x - y)).toEqual(buildIds);
    expect(new Set(results.map((r) => r.token)).size).toBe(BUILDS);
    // the database agrees: every build runs on the runner that received it
    const rows = (await s.ctx.data.all(`SELECT id, status, runner_id FROM commit_statuses WHERE type = 'build'`)) as { id: number; status: string; runner_id: number }[];
    const owner = new Map(results.map((r) => [r.id, r.runner]));
    for (const row of rows) {
      expect(row.status).toBe('running');
      expect(row.runner_id).toBe(owner.get(row.id));
    }
    // more than one runner did work, and specific runners only got builds of their project
    expect(new Set(results.map((r) => r.runner)).size).toBeGreaterThan(1);
    const specificIds = new Set(runners.slice(12).map((r) => r.id));
    const alpha = (await s.ctx.data.get(`SELECT id FROM projects WHERE path = 'alpha'`)) as { id: number };
    const projectOf = new Map(((await s.ctx.data.all(`SELECT id, project_id FROM commit_statuses`)) as { id: number; project_id: number }[]).map((r) => [r.id, r.project_id]));
    for (const r of results) if (specificIds.has(r.runner)) expect(projectOf.get(r.id)).toBe(alpha.id);
  }, 120_000);
});
