/**
 * Stuck builds (8.13 StuckCiBuildsWorker): a build still pending or running whose row has not changed for a day is
 * dropped (failed) with its pipeline processed and its Build Hook queued, once even when sweeps run at once (two
 * daemons); a fresh build, a recently traced one and a finished one are left alone. This is what frees a build whose
 * claim answer was lost when the daemon that handed it out died.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropStuckBuilds, settleBuildWork, STUCK_BUILD_TIMEOUT_MS } from '../../daemon/services/ci/builds.js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { buildRow, exec, insertBuild, insertPipeline } from '../helpers/runner-fixtures.js';

let s: TestServer;
let alice: TestUser;
let projectId: number;

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.user('alice', { projects_limit: 10 });
  projectId = (await makeProject(s, alice, 'stuck')).id;
  const hook = await s.api('POST', `/projects/${projectId}/hooks`, alice, { url: 'http://127.0.0.1:9/builds', push_events: false, build_events: true });
  expect(hook.status).toBe(201);
});

afterAll(async () => {
  await settleBuildWork(s.ctx);
  await s?.close();
});

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
/** A build in `status` whose row last changed `ageMs` ago. */
async function buildAged(pipelineId: number, name: string, status: string, ageMs: number): Promise<number> {
  const id = await insertBuild(s, projectId, pipelineId, { name, status });
  await exec(s, 'UPDATE commit_statuses SET updated_at = ? WHERE id = ?', [ago(ageMs), id]);
  return id;
}
const hooksOf = async (buildId: number) => (await s.ctx.data.all<{ payload: string }>(
  `SELECT payload FROM hook_deliveries WHERE event = 'build' ORDER BY id`,
)).map((r) => JSON.parse(r.payload) as { build_id: number; build_status: string }).filter((p) => p.build_id === buildId);

describe('dropping stuck builds', () => {
  it('fails builds pending or running unchanged for a day, processes their pipeline, queues their hook; leaves the others', async () => {
    const stuckPipeline = await insertPipeline(s, projectId, { status: 'running' });
    const running = await buildAged(stuckPipeline, 'lost', 'running', STUCK_BUILD_TIMEOUT_MS + 60_000);
    const pending = await buildAged(stuckPipeline, 'never-taken', 'pending', STUCK_BUILD_TIMEOUT_MS + 60_000);
    const livePipeline = await insertPipeline(s, projectId, { status: 'running' });
    const traced = await buildAged(livePipeline, 'traced', 'running', STUCK_BUILD_TIMEOUT_MS - 60_000);
    const fresh = await buildAged(livePipeline, 'fresh', 'pending', 1_000);
    const finished = await buildAged(livePipeline, 'old-success', 'success', 3 * STUCK_BUILD_TIMEOUT_MS);

    expect(await dropStuckBuilds(s.ctx)).toBe(2);
    expect((await buildRow(s, running)).status).toBe('failed');
    expect((await buildRow(s, pending)).status).toBe('failed');
    for (const [id, status] of [[traced, 'running'], [fresh, 'pending'], [finished, 'success']] as const) expect((await buildRow(s, id)).status).toBe(status);
    // the API shows it, the pipeline of the dropped builds is failed, the other still runs
    const shown = await s.api('GET', `/projects/${projectId}/builds/${running}`, alice);
    expect(shown.body).toMatchObject({ id: running, status: 'failed' });
    expect((await s.api('GET', `/projects/${projectId}/pipelines/${stuckPipeline}`, alice)).body.status).toBe('failed');
    expect((await s.api('GET', `/projects/${projectId}/pipelines/${livePipeline}`, alice)).body.status).toBe('running');
    // a Build Hook for each drop
    expect((await hooksOf(running)).map((p) => p.build_status)).toEqual(['failed']);
    expect((await hooksOf(pending)).map((p) => p.build_status)).toEqual(['failed']);
    // nothing is left to drop
    expect(await dropStuckBuilds(s.ctx)).toBe(0);
  });

  it('sweeps at once (as two daemons run them) drop each stuck build once', async () => {
    const pipeline = await insertPipeline(s, projectId, { status: 'running' });
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await buildAged(pipeline, `lost-${i}`, i % 2 ? 'running' : 'pending', STUCK_BUILD_TIMEOUT_MS + 1_000));
    const counts = await Promise.all([dropStuckBuilds(s.ctx), dropStuckBuilds(s.ctx), dropStuckBuilds(s.ctx)]);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(6);
    for (const id of ids) {
      expect((await buildRow(s, id)).status).toBe('failed');
      expect(await hooksOf(id)).toHaveLength(1);
    }
  });
});
