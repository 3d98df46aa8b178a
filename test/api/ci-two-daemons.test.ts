/**
 * Two app contexts on one PostgreSQL database and one data directory, as two gantryd behind a load balancer
 * (docs/design/postgres.md, "Several daemons"): runners claiming through both never get the same build, a trace
 * appended through one is followed live through a WebSocket on the other (LISTEN/NOTIFY), two appends at one offset
 * through both are accepted once, the sealed build token masks a trace sent to the daemon that did not hand the build
 * out, the build hooks are queued in the claiming transaction, and one daemon at a time sweeps expired artifacts.
 * Runs when GANTRY_TEST_DATABASE_URL is set.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../../daemon/app.js';
import { DaemonState, type AppContext } from '../../daemon/context.js';
import { now } from '../../daemon/context.js';
import { openPostgres, type OpenedDatabase } from '../../daemon/db/layer/open.js';
import { ARTIFACTS_EXPIRY_LOCK, settleBuildWork, sweepExpiredArtifacts } from '../../daemon/services/ci/builds.js';
import { onPostgres, startTestServer, type TestServer } from '../helpers/app.js';
import { makeProject } from '../helpers/fixtures.js';
import { pushFiles } from '../helpers/ci.js';
import { SHA, buildRow, exec, insertBuild, insertPipeline, projectRunnersToken, registerRunner } from '../helpers/runner-fixtures.js';

const BUILDS = 300;

describe.skipIf(!onPostgres)('two daemons on one PostgreSQL database', () => {
  let s: TestServer;
  let second: OpenedDatabase;
  let ctx2: AppContext;
  let app2: FastifyInstance;
  let projectId: number;
  const bases: string[] = [];
  const ports: number[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    // The second daemon: its own pool on the same database, the same data directory and secret.
    second = await openPostgres(s.ctx.config.databaseUrl!);
    ctx2 = { ...s.ctx, data: second.data, state: new DaemonState() };
    app2 = await buildApp(ctx2);
    await app2.ready();
    for (const app of [s.app, app2]) {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as AddressInfo).port;
      ports.push(port);
      bases.push(`http://127.0.0.1:${port}/ci/api/v1`);
    }
    const owner = await s.user('twoowner', { projects_limit: 10 });
    projectId = (await makeProject(s, owner, 'two-daemons')).id;
  }, 60_000);

  afterAll(async () => {
    await settleBuildWork(s.ctx, ...(ctx2 ? [ctx2] : []));
    await app2?.close();
    await second?.close();
    await s?.close();
  });

  const claimAt = async (base: string, token: string) => {
    const res = await fetch(`${base}/builds/register.json`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }),
    });
    if (res.status === 204) return null;
    if (res.status !== 201) throw new Error(`claim answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { id: number; token: string; status: string };
  };

  it('hands every build to exactly one runner, whichever daemon each claim reaches', async () => {
    const runners: { id: number; token: string }[] = [];
    for (let i = 0; i < 6; i++) runners.push(await registerRunner(s, { description: `shared-${i}` }));
    for (let i = 0; i < 2; i++) runners.push(await registerRunner(s, { token: await projectRunnersToken(s, projectId), description: `own-${i}` }));
    const ids: number[] = await s.ctx.data.transaction(async (tx) => {
      const t = now();
      const out: number[] = [];
      for (let p = 0; p < BUILDS / 10; p++) {
        const pipeline = (await tx.get<{ id: number }>(
          `INSERT INTO pipelines (project_id, ref, sha, status, created_at, updated_at) VALUES (?, 'master', ?, 'pending', ?, ?) RETURNING id`, [projectId, SHA, t, t]))!.id;
        for (let j = 0; j < 10; j++) {
          out.push((await tx.get<{ id: number }>(
            `INSERT INTO commit_statuses (type, project_id, pipeline_id, name, stage, stage_idx, ref, status, commands, options, yaml_variables, tag_list, queued_at, created_at, updated_at)
             VALUES ('build', ?, ?, ?, 'test', 0, 'master', 'pending', 'true', '{}', '[]', '[]', ?, ?, ?) RETURNING id`, [projectId, pipeline, `job-${j}`, t, t, t]))!.id);
        }
      }
      return out;
    });
    // Each runner alternates between the two daemons, claim after claim, until both say there is nothing left.
    const got: { id: number; runner: number; token: string; daemon: number }[] = [];
    await Promise.all(runners.map(async (r, i) => {
      for (let n = i; ; n++) {
        const b = await claimAt(bases[n % 2]!, r.token);
        if (!b) {
          if (await claimAt(bases[(n + 1) % 2]!, r.token)) throw new Error('the other daemon still had a build');
          return;
        }
        expect(b.status).toBe('running');
        got.push({ id: b.id, runner: r.id, token: b.token, daemon: n % 2 });
      }
    }));
    expect(got).toHaveLength(BUILDS);
    expect(new Set(got.map((g) => g.id)).size).toBe(BUILDS);
    expect(got.map((g) => g.id).sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(got.map((g) => g.token)).size).toBe(BUILDS);
    expect(new Set(got.map((g) => g.daemon))).toEqual(new Set([0, 1]));
    const rows = await s.ctx.data.all<{ id: number; status: string; runner_id: number }>(
      `SELECT id, status, runner_id FROM commit_statuses WHERE project_id = ? AND type = 'build'`, [projectId]);
    const runnerOf = new Map(got.map((g) => [g.id, g.runner]));
    for (const row of rows) {
      expect(row.status).toBe('running');
      expect(row.runner_id).toBe(runnerOf.get(row.id));
    }
    await exec(s, "UPDATE commit_statuses SET status = 'canceled' WHERE project_id = ? AND status = 'running'", [projectId]);
  }, 120_000);

  /** A running build claimed through daemon `via` (0 or 1). */
  async function running(via: number): Promise<{ id: number; token: string; runnerToken: string }> {
    const runner = await registerRunner(s, { token: await projectRunnersToken(s, projectId) });
    await insertBuild(s, projectId, await insertPipeline(s, projectId));
    const b = await claimAt(bases[via]!, runner.token);
    if (!b) throw new Error('nothing to claim');
    return { id: b.id, token: b.token, runnerToken: runner.token };
  }

  const patchAt = (via: number, b: { id: number; token: string }, start: number, text: string) =>
    fetch(`${bases[via]}/builds/${b.id}/trace.txt`, {
      method: 'PATCH', body: text,
      headers: { 'content-type': 'text/plain', 'build-token': b.token, 'content-range': `${start}-${start + Buffer.byteLength(text)}` },
    });

  it('a trace appended through one daemon reaches a WebSocket follower on the other at once, then its end', async () => {
    const b = await running(0);
    expect((await patchAt(0, b, 0, 'first line\n')).status).toBe(202);
    const ws = new WebSocket(`ws://127.0.0.1:${ports[1]}/-/live/builds/${b.id}/trace?private_token=${s.root.token}`);
    const bytes: Buffer[] = [];
    const messages: Record<string, unknown>[] = [];
    let closed: number | null = null;
    ws.on('message', (data: Buffer, binary: boolean) => (binary ? bytes.push(data) : messages.push(JSON.parse(data.toString()))));
    ws.on('close', (code) => (closed = code));
    const until = async (pred: () => boolean, what: string, ms: number) => {
      const end = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(messages)} / ${JSON.stringify(Buffer.concat(bytes).toString())}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const text = () => Buffer.concat(bytes).toString();
    await until(() => text() === 'first line\n', 'the stored trace', 5000);
    expect(messages[0]).toMatchObject({ type: 'status', build_id: b.id, status: 'running', trace_size: 11 });
    // Written through daemon 0, heard on daemon 1 well before its 5 s poll: the NOTIFY of the append's commit.
    const t0 = Date.now();
    expect((await patchAt(0, b, 11, 'second line\n')).status).toBe(202);
    await until(() => text() === 'first line\nsecond line\n', 'the appended part', 2000);
    expect(Date.now() - t0).toBeLessThan(2000);
    // The build finishes through daemon 0: the follower on daemon 1 gets the end and the socket closes.
    const put = await fetch(`${bases[0]}/builds/${b.id}`, {
      method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: b.token, state: 'success' }),
    });
    expect(put.status).toBe(200);
    await until(() => closed !== null, 'the end', 2000);
    expect(messages.at(-1)).toEqual({ type: 'finished', build_id: b.id, status: 'success' });
    expect(closed).toBe(1000);
    expect(text()).toBe('first line\nsecond line\n');
  });

  it('two appends at one offset through both daemons: one is stored, the other answers 416 with the stored length', async () => {
    for (let round = 0; round < 5; round++) {
      const b = await running(round % 2);
      const [x, y] = await Promise.all([patchAt(0, b, 0, 'from daemon zero\n'), patchAt(1, b, 0, 'from daemon one!!\n')]);
      const statuses = [x.status, y.status].sort();
      expect(statuses).toEqual([202, 416]);
      const winner = x.status === 202 ? 'from daemon zero\n' : 'from daemon one!!\n';
      const loser = x.status === 202 ? y : x;
      expect(loser.headers.get('range')).toBe(`0-${winner.length}`);
      const row = await buildRow(s, b.id);
      expect(Number(row.trace_size)).toBe(winner.length);
      const trace = await s.api('GET', `/projects/${projectId}/builds/${b.id}/trace`, s.root);
      expect(trace.text).toBe(winner);
    }
  });

  it('masks the build token in a full trace sent to the daemon that did not hand the build out', async () => {
    const b = await running(0);
    expect((await buildRow(s, b.id)).token_sealed).toMatch(/^v1\./);
    const put = await fetch(`${bases[1]}/builds/${b.id}`, {
      method: 'PUT', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: b.runnerToken, trace: `cloning with ${b.token} ok\n`, state: 'success' }),
    });
    expect(put.status).toBe(200);
    const trace = await s.api('GET', `/projects/${projectId}/builds/${b.id}/trace`, s.root);
    expect(trace.text).toBe(`cloning with ${'x'.repeat(b.token.length)} ok\n`);
    // The sealed copy goes when the build stops running.
    expect((await buildRow(s, b.id)).token_sealed).toBeNull();
  });

  it('queues the Build Hook of a claim in the claiming transaction (the outbox row is there when the claim answers)', async () => {
    const t = now();
    const hook = (await s.ctx.data.get<{ id: number }>(
      `INSERT INTO project_hooks (project_id, url, push_events, build_events, pipeline_events, created_at)
       VALUES (?, 'http://127.0.0.1:9/hook', FALSE, TRUE, TRUE, ?) RETURNING id`, [projectId, t]))!.id;
    try {
      const b = await running(1);
      const rows = await s.ctx.data.all<{ event: string; payload: string }>('SELECT event, payload FROM hook_deliveries WHERE hook_id = ? ORDER BY id', [hook]);
      const builds = rows.filter((r) => r.event === 'build').map((r) => JSON.parse(r.payload));
      expect(builds.map((p) => [p.build_id, p.build_status])).toContainEqual([b.id, 'running']);
      expect(rows.some((r) => r.event === 'pipeline' && JSON.parse(r.payload).object_attributes.status === 'running')).toBe(true);
    } finally {
      await exec(s, 'DELETE FROM project_hooks WHERE id = ?', [hook]);
    }
  });

  it('a commit status posted through both daemons at once makes one pipeline and one status', async () => {
    const sha = await pushFiles(s.ctx, projectId, s.root.id, { 'README.md': 'statuses\n' }, { branch: 'statuses' });
    const post = (app: FastifyInstance, state: string) => app.inject({
      method: 'POST', url: `/api/v3/projects/${projectId}/statuses/${sha}`,
      headers: { 'private-token': s.root.token, 'content-type': 'application/json' },
      payload: JSON.stringify({ state, ref: 'statuses', name: 'external' }),
    });
    const answers = await Promise.all([post(s.app, 'pending'), post(app2, 'pending'), post(s.app, 'running'), post(app2, 'running')]);
    // Each is 201, or the state machine's 400 for a move that the other daemon's post already made impossible.
    for (const a of answers) expect([201, 400]).toContain(a.statusCode);
    const pipelines = await s.ctx.data.all('SELECT id FROM pipelines WHERE project_id = ? AND sha = ?', [projectId, sha]);
    expect(pipelines).toHaveLength(1);
    const statuses = await s.ctx.data.all<{ status: string }>("SELECT status FROM commit_statuses WHERE type = 'generic' AND pipeline_id = ?", [(pipelines[0] as { id: number }).id]);
    expect(statuses).toHaveLength(1);
  });

  it('sweeps expired artifacts in one daemon at a time (the advisory lock), and the sweep removes them', async () => {
    const b = await running(0);
    await exec(s, "UPDATE commit_statuses SET artifacts_file = 'a.zip', artifacts_size = 1, artifacts_expire_at = '2001-01-01T00:00:00.000Z' WHERE id = ?", [b.id]);
    // While daemon 1 holds the lock, daemon 0's sweep skips its turn.
    const held = await ctx2.data.withAdvisoryLock!(ARTIFACTS_EXPIRY_LOCK, () => sweepExpiredArtifacts(s.ctx));
    expect(held).toBeNull();
    expect((await buildRow(s, b.id)).artifacts_file).toBe('a.zip');
    expect(await sweepExpiredArtifacts(s.ctx)).toBeGreaterThanOrEqual(1);
    expect((await buildRow(s, b.id)).artifacts_file).toBeNull();
  });
});
