/**
 * Hook delivery through a real HTTP receiver: push and tag push payloads and headers after real git pushes, the event switches, retries with backoff, giving up, network errors
 * and timeouts, SSL verification, claims that never send a delivery twice, leases after a crash, the outbox for any
 * event, and stopping mid-send; the outbox and the worker on either engine.
 */
import { DaemonState } from '../../daemon/context.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { onPostgres, startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { commitFiles, git, gitOk, repoUrl, tempDir } from '../helpers/git.js';
import { makeProject } from '../helpers/fixtures.js';
import { sleep, startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';
import {
  HOOK_EVENTS, HOOK_EVENT_HEADER, queueHookDeliveries, retryDelay, startHookDeliveryWorker, type HookDeliveryWorker,
  type HookEvent,
} from '../../daemon/services/hooks/deliveries.js';

const BASE = 40;
const MAX_ATTEMPTS = 4;
const TIMEOUT = 2000;
const ZERO = '0000000000000000000000000000000000000000';

let s: TestServer;
let alice: TestUser;
let project: { id: number; path_with_namespace: string };
let recv: HookReceiver;
let worker: HookDeliveryWorker;
let work: string;
const dirs: string[] = [];

interface DeliveryRow {
  id: number; hook_id: number; event: string; payload: string; status: string; attempts: number; next_attempt_at: string;
  locked_at: string | null; last_status_code: number | null; last_error: string | null; created_at: string; delivered_at: string | null;
}
const deliveries = (hookId: number) => s.ctx.data.all<DeliveryRow>('SELECT * FROM hook_deliveries WHERE hook_id = ? ORDER BY id', [hookId]);
const settled = (hookId: number, n = 1) => async () => {
  const rows = await deliveries(hookId);
  return rows.length >= n && rows.every((r) => r.status !== 'pending');
};
/** Queue deliveries in one transaction of the data layer, as a ported room does; the number queued. */
const queue = (...items: [HookEvent, unknown][]) =>
  s.ctx.data.transaction(async (tx) => {
    let n = 0;
    for (const [event, payload] of items) n += await queueHookDeliveries(tx, project.id, event, payload);
    return n;
  });

async function addHook(path: string, extra: Record<string, unknown> = {}, base = recv.url): Promise<number> {
  const r = await s.api('POST', `/projects/${project.id}/hooks`, alice, { url: `${base}${path}`, ...extra });
  expect(r.status).toBe(201);
  return r.body.id;
}
async function push(args: string[]) {
  const r = await git(work, ['push', 'origin', ...args]);
  expect(r.code, r.stderr).toBe(0);
}

beforeAll(async () => {
  s = await startTestServer();
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  alice = await s.user('alice');
  project = await makeProject(s, alice, 'Hooked');
  recv = await startReceiver();
  worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, maxAttempts: MAX_ATTEMPTS, timeoutMs: TIMEOUT, concurrency: 3, log: () => undefined });
});

/** A clone of the project to push from (git over HTTP: SQLite only for now). */
async function cloneOnce(): Promise<void> {
  if (work) return;
  const addr = s.app.server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const d = tempDir();
  dirs.push(d);
  await gitOk(d, ['clone', '-q', repoUrl(base, project.path_with_namespace, { username: alice.username, password: alice.token }), 'w']);
  work = join(d, 'w');
}

afterEach(async () => {
  // Hooks of one test do not see the next test's events (their deliveries go with them: ON DELETE CASCADE).
  for (const h of (await s.api('GET', `/projects/${project.id}/hooks?per_page=100`, alice)).body) {
    await s.api('DELETE', `/projects/${project.id}/hooks/${h.id}`, alice);
  }
});

afterAll(async () => {
  await worker?.stop();
  await recv?.stop();
  await s?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('push hooks', () => {
  beforeAll(cloneOnce);
  it('posts GitLab push data with the hook headers after a git push; hooks without push_events get nothing', async () => {
    const withToken = await addHook('/push', { token: 's3cret' });
    const off = await addHook('/off', { push_events: false });
    const tagsOnly = await addHook('/tags', { push_events: false, tag_push_events: true });
    await commitFiles(work, { 'README.md': '# Hooked\n' }, 'First commit');
    const sha = await commitFiles(work, { 'src/app.js': 'console.log(1)\n', 'README.md': '# Hooked!\n' }, 'Second commit');
    await push(['master']);

    await waitUntil(settled(withToken), 'the push delivery');
    const [req] = recv.to('/push');
    expect(recv.to('/push')).toHaveLength(1);
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-gitlab-event']).toBe('Push Hook');
    expect(req.headers['x-gitlab-token']).toBe('s3cret');
    expect(req.headers['user-agent']).toBe('Gantry');
    expect(req.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);

    const body = req.json();
    expect(body).toMatchObject({
      object_kind: 'push', event_name: 'push', before: ZERO, after: sha, ref: 'refs/heads/master', checkout_sha: sha,
      user_id: alice.id, user_name: 'alice', user_email: 'alice@example.com', project_id: project.id, total_commits_count: 2,
    });
    expect(Object.keys(body.project).sort()).toEqual([
      'avatar_url', 'default_branch', 'description', 'git_http_url', 'git_ssh_url', 'homepage', 'http_url', 'name', 'namespace',
      'path_with_namespace', 'ssh_url', 'url', 'visibility_level', 'web_url',
    ]);
    expect(body.project).toMatchObject({
      name: 'Hooked', namespace: 'alice', path_with_namespace: 'alice/hooked', default_branch: 'master', visibility_level: 0,
      web_url: 'http://gantry.test/alice/hooked', git_http_url: 'http://gantry.test/alice/hooked.git', git_ssh_url: 'git@gantry.test:alice/hooked.git',
    });
    expect(Object.keys(body.repository).sort()).toEqual(['description', 'git_http_url', 'git_ssh_url', 'homepage', 'name', 'url', 'visibility_level']);
    expect(body.commits.map((c: { message: string }) => c.message)).toEqual(['First commit\n', 'Second commit\n']);
    expect(body.commits[1]).toMatchObject({
      id: sha, url: `http://gantry.test/alice/hooked/commit/${sha}`, author: { name: 'Test User', email: 'test@example.com' },
      added: ['src/app.js'], modified: ['README.md'], removed: [],
    });
    expect(typeof body.user_avatar === 'string' || body.user_avatar === null).toBe(true);
    // The same data as the push event records.
    const events = await s.api('GET', `/projects/${project.id}/events`, alice);
    expect(body).toEqual(events.body.find((e: { data: { after?: string } | null }) => e.data?.after === sha).data);

    const [row] = await deliveries(withToken);
    expect(row).toMatchObject({ event: 'push', status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, locked_at: null });
    expect(row.delivered_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await deliveries(off)).toEqual([]);
    expect(await deliveries(tagsOnly)).toEqual([]);
    expect(recv.to('/off')).toEqual([]);
    expect(recv.to('/tags')).toEqual([]);
  });

  it('sends one delivery per ref of a push, and one for a deleted branch', async () => {
    const hook = await addHook('/refs');
    await gitOk(work, ['branch', 'feature-a']);
    await gitOk(work, ['branch', 'feature-b']);
    await push(['feature-a', 'feature-b']);
    await waitUntil(settled(hook, 2), 'two deliveries');
    expect(recv.to('/refs').map((r) => r.json().ref).sort()).toEqual(['refs/heads/feature-a', 'refs/heads/feature-b']);
    await push([':feature-b']);
    await waitUntil(settled(hook, 3), 'the delete delivery');
    const del = recv.to('/refs')[2].json();
    expect(del).toMatchObject({ object_kind: 'push', ref: 'refs/heads/feature-b', after: ZERO, checkout_sha: null, commits: [], total_commits_count: 0 });
  });

  it('posts a Tag Push Hook for a tag push, only to hooks with tag_push_events, without a token header when unset', async () => {
    const pushOnly = await addHook('/push-only');
    const tags = await addHook('/tags', { push_events: false, tag_push_events: true });
    const head = await gitOk(work, ['rev-parse', 'HEAD']);
    await gitOk(work, ['tag', '-a', 'v1.0', '-m', 'Release 1.0']);
    await push(['v1.0']);
    await waitUntil(settled(tags), 'the tag push delivery');
    const [req] = recv.to('/tags');
    expect(req.headers['x-gitlab-event']).toBe('Tag Push Hook');
    expect(req.headers['x-gitlab-token']).toBeUndefined();
    expect(req.json()).toMatchObject({
      object_kind: 'tag_push', event_name: 'tag_push', ref: 'refs/tags/v1.0', before: ZERO, checkout_sha: head, message: 'Release 1.0',
      project_id: project.id, total_commits_count: 1,
    });
    expect((await deliveries(tags))[0]).toMatchObject({ event: 'tag_push', status: 'delivered' });
    await sleep(100);
    expect(await deliveries(pushOnly)).toEqual([]);
    expect(recv.to('/push-only')).toEqual([]);
  });

  it('never holds up the push while a receiver hangs; the attempt times out and is retried', async () => {
    const hook = await addHook('/hang');
    recv.on('/hang', () => 'hang');
    await commitFiles(work, { 'slow.txt': 'x\n' }, 'Slow');
    await push(['master']);
    // the push answered while the receiver still hangs: its attempt has not timed out yet (no wall-clock bound here)
    expect((await deliveries(hook))[0]).toMatchObject({ status: 'pending', last_error: null });
    await waitUntil(async () => (await deliveries(hook))[0].last_error !== null, 'a timed out attempt');
    expect((await deliveries(hook))[0]).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, last_error: `timed out after ${TIMEOUT} ms` });
  });
});

describe('retries', () => {
  it('retries a failing receiver with backoff: 500, 500, 200 -> one delivered row, three attempts, never sent again', async () => {
    recv.on('/flaky', (n) => (n <= 2 ? 500 : 200));
    const hook = await addHook('/flaky');
    expect(await queue(['push', { object_kind: 'push', n: 'flaky' }])).toBe(1);
    await waitUntil(settled(hook), 'the flaky delivery');
    const rows = await deliveries(hook);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200, last_error: null });
    const got = recv.to('/flaky');
    expect(got).toHaveLength(3);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(retryDelay(1, BASE) - 5);
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(retryDelay(2, BASE) - 5);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    // every attempt of the delivery carries the same Idempotency-Key, so a receiver can drop a resend it already took
    expect(got[0].headers['idempotency-key']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(got.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    // several backoff periods later: still three requests
    await sleep(retryDelay(3, BASE) * 2);
    expect(recv.to('/flaky')).toHaveLength(3);
    expect((await deliveries(hook))[0].attempts).toBe(3);
  });

  it('gives up after the last attempt (failed) and records the status code', async () => {
    recv.on('/down', () => 503);
    const hook = await addHook('/down');
    await queue(['push', { object_kind: 'push', n: 'down' }]);
    await waitUntil(settled(hook), 'the failed delivery');
    expect((await deliveries(hook))[0]).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, last_status_code: 503, last_error: 'HTTP 503', delivered_at: null });
    await sleep(retryDelay(3, BASE) * 2);
    expect(recv.to('/down')).toHaveLength(MAX_ATTEMPTS);
  });

  it('records network errors (connection refused) and retries them', async () => {
    const closed = await startReceiver({ listen: false });
    const hook = await addHook('/refused', {}, closed.url);
    await queue(['push', { object_kind: 'push', n: 'refused' }]);
    await waitUntil(settled(hook), 'the refused delivery');
    expect((await deliveries(hook))[0]).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, last_status_code: null });
    expect((await deliveries(hook))[0].last_error).toMatch(/ECONNREFUSED/);
  });
});

describe('SSL verification', () => {
  it('refuses a self-signed certificate unless enable_ssl_verification is false', async () => {
    const tls = await startReceiver({ https: true });
    try {
      const verified = await addHook('/verified', {}, tls.url);
      const unverified = await addHook('/unverified', { enable_ssl_verification: false }, tls.url);
      await queue(['push', { object_kind: 'push', n: 'tls' }]);
      await waitUntil(settled(unverified), 'the unverified delivery');
      expect((await deliveries(unverified))[0]).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
      expect(tls.to('/unverified')).toHaveLength(1);
      await waitUntil(async () => (await deliveries(verified))[0].last_error !== null, 'the verified attempt');
      expect((await deliveries(verified))[0].last_error).toMatch(/self[- ]signed|certificate/i);
      expect(tls.to('/verified')).toEqual([]);
    } finally {
      await tls.stop();
    }
  });
});

describe('the outbox', () => {
  it('queues any event for the hooks subscribed to it, with its X-Gitlab-Event header', async () => {
    const all = await addHook('/all', {
      push_events: true, tag_push_events: true, issues_events: true, merge_requests_events: true, note_events: true, build_events: true, pipeline_events: true,
    });
    const issuesOnly = await addHook('/issues', { push_events: false, issues_events: true });
    const none = await addHook('/none', { push_events: false });
    const queued = await queue(...HOOK_EVENTS.map((event): [HookEvent, unknown] => [event, { object_kind: event, marker: `m-${event}` }]));
    expect(queued).toBe(HOOK_EVENTS.length + 1);
    await waitUntil(settled(all, HOOK_EVENTS.length), 'every event');
    await waitUntil(settled(issuesOnly), 'the issue event');
    const got = new Map(recv.to('/all').map((r) => [r.json().object_kind, r]));
    for (const event of HOOK_EVENTS) {
      expect(got.get(event)?.headers['x-gitlab-event']).toBe(HOOK_EVENT_HEADER[event]);
      expect(got.get(event)?.json()).toEqual({ object_kind: event, marker: `m-${event}` });
    }
    expect(HOOK_EVENT_HEADER).toEqual({
      push: 'Push Hook', tag_push: 'Tag Push Hook', issue: 'Issue Hook', merge_request: 'Merge Request Hook', note: 'Note Hook',
      build: 'Build Hook', pipeline: 'Pipeline Hook',
    });
    expect(recv.to('/issues').map((r) => r.headers['x-gitlab-event'])).toEqual(['Issue Hook']);
    expect(await deliveries(none)).toEqual([]);
  });

  it('queues nothing when the transaction rolls back', async () => {
    const hook = await addHook('/rollback', { issues_events: true });
    await expect(s.ctx.data.transaction(async (tx) => {
      await queueHookDeliveries(tx, project.id, 'issue', { object_kind: 'issue' });
      throw new Error('boom');
    })).rejects.toThrow('boom');
    await sleep(100);
    expect(await deliveries(hook)).toEqual([]);
    expect(recv.to('/rollback')).toEqual([]);
  });

  it('sends each delivery once with two workers on the same database, a few at a time', async () => {
    recv.on('/many', () => sleep(60).then(() => 200));
    const hook = await addHook('/many', { push_events: false, pipeline_events: true });
    const second = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, concurrency: 3, log: () => undefined });
    try {
      await queue(...Array.from({ length: 15 }, (_, i): [HookEvent, unknown] => ['pipeline', { object_kind: 'pipeline', n: i }]));
      await waitUntil(settled(hook, 15), 'fifteen deliveries');
      const ns = recv.to('/many').map((r) => r.json().n).sort((a, b) => a - b);
      expect(ns).toEqual([...Array(15).keys()]);
      // distinct deliveries have distinct keys
      expect(new Set(recv.to('/many').map((r) => r.headers['idempotency-key'])).size).toBe(15);
      expect((await deliveries(hook)).every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true);
      expect(recv.maxActiveOn('/many')).toBeGreaterThan(1);
      expect(recv.maxActiveOn('/many')).toBeLessThanOrEqual(6);
    } finally {
      await second.stop();
    }
  });

  it('resends a row whose sender died after its lease; never a delivered row, never a row under a live lease', async () => {
    const hook = await addHook('/lease', { push_events: false, note_events: true });
    await queue(['note', { object_kind: 'note', n: 'first' }]);
    await waitUntil(settled(hook), 'the first delivery');
    const past = new Date(Date.now() - 60_000).toISOString();
    // A delivered row that looks due is left alone.
    await s.ctx.data.run('UPDATE hook_deliveries SET next_attempt_at = ? WHERE hook_id = ?', [past, hook]);
    // A crashed sender's row (lease over) and a live sender's row (lease running).
    const insert = (n: string, next: string, locked: string) => s.ctx.data.run(
      `INSERT INTO hook_deliveries (hook_id, event, payload, status, attempts, next_attempt_at, locked_at, created_at)
       VALUES (?, 'note', ?, 'pending', 1, ?, ?, ?)`, [hook, JSON.stringify({ n }), next, locked, past]);
    await insert('crashed', new Date(Date.now() - 1).toISOString(), past);
    await insert('leased', new Date(Date.now() + 3600_000).toISOString(), new Date().toISOString());
    worker.wake();
    await waitUntil(() => recv.to('/lease').length === 2, 'the crashed row');
    await sleep(200);
    expect(recv.to('/lease').map((r) => r.json().n)).toEqual(['first', 'crashed']);
    await waitUntil(async () => (await deliveries(hook))[1].status === 'delivered', 'the resend recorded');
    const rows = await deliveries(hook);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([['delivered', 1], ['delivered', 2], ['pending', 1]]);
  });

  it('deleting a hook deletes its deliveries', async () => {
    const hook = await addHook('/gone', { push_events: false, build_events: true });
    recv.on('/gone', () => 500);
    await queue(['build', { object_kind: 'build' }]);
    await waitUntil(async () => {
      const rows = await deliveries(hook);
      return rows.length === 1 && rows[0].attempts >= 1;
    }, 'an attempt');
    expect((await s.api('DELETE', `/projects/${project.id}/hooks/${hook}`, alice)).status).toBe(200);
    expect(await deliveries(hook)).toEqual([]);
  });
});

describe('stopping', () => {
  it('hands a delivery in flight back on stop (pending, due, attempt not counted); the next worker sends it', async () => {
    await worker.stop();
    const hook = await addHook('/stop', { push_events: false, merge_requests_events: true });
    recv.on('/stop', (n) => (n === 1 ? 'hang' : 200));
    const first = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, timeoutMs: 10_000, log: () => undefined });
    await queue(['merge_request', { object_kind: 'merge_request' }]);
    await waitUntil(() => recv.to('/stop').length === 1, 'the hanging attempt');
    expect((await deliveries(hook))[0]).toMatchObject({ status: 'pending', attempts: 1 });
    expect((await deliveries(hook))[0].locked_at).not.toBeNull();
    await first.stop();
    const [row] = await deliveries(hook);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, locked_at: null });
    expect(Date.parse(row.next_attempt_at)).toBeLessThanOrEqual(Date.now());
    worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, maxAttempts: MAX_ATTEMPTS, timeoutMs: TIMEOUT, log: () => undefined });
    await waitUntil(settled(hook), 'the handed back delivery');
    expect((await deliveries(hook))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(recv.to('/stop')).toHaveLength(2);
  });
});

describe.runIf(onPostgres)('several daemons on one PostgreSQL database', () => {
  it('two workers on two contexts (two pools, as two daemons) post each of N deliveries once, woken by NOTIFY from the other', async () => {
    await worker.stop();
    const { postgresDatabase } = await import('../../daemon/db/layer/postgres.js');
    const otherData = await postgresDatabase(s.ctx.config.databaseUrl!);
    // Another daemon: its own pool and listening connection, the same database and data directory (secrets).
    const other = { ...s.ctx, data: otherData, state: new DaemonState() };
    const N = 40;
    recv.on('/fleet', () => sleep(40).then(() => 200));
    const hook = await addHook('/fleet', { push_events: false, pipeline_events: true });
    // A poll this long never fires during the test: the workers find the rows through the notification only.
    const opts = { retryBaseMs: BASE, concurrency: 3, pollMs: 600_000, log: () => undefined };
    const one = startHookDeliveryWorker(s.ctx, opts);
    const two = startHookDeliveryWorker(other, opts);
    try {
      await sleep(300); // both listening, their first (empty) look done
      // queued through the second daemon's transaction: the first is woken only by NOTIFY gantry_hooks at the commit
      await otherData.transaction(async (tx) => {
        for (let i = 0; i < N; i++) await queueHookDeliveries(tx, project.id, 'pipeline', { object_kind: 'pipeline', n: i });
      });
      await waitUntil(settled(hook, N), `${N} deliveries`, 20_000);
      const got = recv.to('/fleet');
      expect(got.map((r) => r.json().n).sort((a, b) => a - b)).toEqual([...Array(N).keys()]);
      // each delivery exactly once, each under its own Idempotency-Key: the one derived from its row
      const keys = recv.countsByKey('/fleet');
      expect(keys.size).toBe(N);
      expect([...keys.values()].every((n) => n === 1)).toBe(true);
      const rows = await deliveries(hook);
      expect(rows.every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true);
      expect(new Set(keys.keys())).toEqual(new Set(rows.map((r) => s.ctx.secrets.uuid('hook-delivery', String(r.id)))));
      // both took part: more requests at once than one worker's concurrency
      expect(recv.maxActiveOn('/fleet')).toBeGreaterThan(opts.concurrency);
      expect(recv.maxActiveOn('/fleet')).toBeLessThanOrEqual(2 * opts.concurrency);

      // and the other way round, with the first daemon's worker alone: woken by a commit on the second's pool
      await two.stop();
      await otherData.transaction((tx) => queueHookDeliveries(tx, project.id, 'pipeline', { object_kind: 'pipeline', n: N }));
      await waitUntil(settled(hook, N + 1), 'the last delivery', 5_000);
      expect(recv.countsByKey('/fleet').size).toBe(N + 1);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
      await otherData.close();
      worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, maxAttempts: MAX_ATTEMPTS, timeoutMs: TIMEOUT, concurrency: 3, log: () => undefined });
    }
  });
});
