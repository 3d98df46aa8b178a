/**
 * Hook delivery through a real HTTP receiver: push and tag push payloads and headers after real git pushes, the
 * event switches, retries with backoff, giving up, network errors and timeouts, SSL verification, claims that never
 * send a delivery twice, leases after a crash, the generic queue for other events, and stopping mid-send.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer, type TestUser } from '../helpers/app.js';
import { commitFiles, git, gitOk, repoUrl, tempDir } from '../helpers/git.js';
import { makeProject } from '../helpers/fixtures.js';
import { sleep, startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';
import {
  HOOK_EVENTS, HOOK_EVENT_HEADER, queueHookDeliveries, retryDelay, startHookDeliveryWorker, type HookDeliveryWorker,
} from '../../daemon/services/hook-deliveries.js';

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
const deliveries = (hookId: number) =>
  s.ctx.db.$client.prepare('SELECT * FROM hook_deliveries WHERE hook_id = ? ORDER BY id').all(hookId) as DeliveryRow[];
const settled = (hookId: number, n = 1) => () => {
  const rows = deliveries(hookId);
  return rows.length >= n && rows.every((r) => r.status !== 'pending');
};

async function addHook(path: string, extra: Record<string, unknown> = {}, base = recv.url): Promise<number> {
  const r = await s.api('POST', `/projects/${project.id}/hooks`, alice, { url: `${base}${path}`, ...extra });
  expect(r.status).toBe(201);
  return r.body.id;
}
const inTx = (fn: Parameters<TestServer['ctx']['db']['transaction']>[0]) => s.ctx.db.transaction(fn);
async function push(args: string[]) {
  const r = await git(work, ['push', 'origin', ...args]);
  expect(r.code, r.stderr).toBe(0);
}

beforeAll(async () => {
  s = await startTestServer();
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = s.app.server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  alice = await s.user('alice');
  project = await makeProject(s, alice, 'Hooked');
  recv = await startReceiver();
  worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, maxAttempts: MAX_ATTEMPTS, timeoutMs: TIMEOUT, concurrency: 3, log: () => undefined });
  const d = tempDir();
  dirs.push(d);
  await gitOk(d, ['clone', '-q', repoUrl(base, project.path_with_namespace, { username: alice.username, password: alice.token }), 'w']);
  work = join(d, 'w');
});

afterEach(async () => {
  // Hooks of one test do not see the next test's events (their deliveries go with them: ON DELETE CASCADE).
  for (const h of (await s.api('GET', `/projects/${project.id}/hooks?per_page=100`, alice)).body) {
    await s.api('DELETE', `/projects/${project.id}/hooks/${h.id}`, alice);
  }
});

afterAll(async () => {
  worker?.stop();
  await recv?.stop();
  await s?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('push hooks', () => {
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

    const [row] = deliveries(withToken);
    expect(row).toMatchObject({ event: 'push', status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, locked_at: null });
    expect(row.delivered_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(deliveries(off)).toEqual([]);
    expect(deliveries(tagsOnly)).toEqual([]);
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
    expect(deliveries(tags)[0]).toMatchObject({ event: 'tag_push', status: 'delivered' });
    await sleep(100);
    expect(deliveries(pushOnly)).toEqual([]);
    expect(recv.to('/push-only')).toEqual([]);
  });

  it('never holds up the push while a receiver hangs; the attempt times out and is retried', async () => {
    const hook = await addHook('/hang');
    recv.on('/hang', () => 'hang');
    await commitFiles(work, { 'slow.txt': 'x\n' }, 'Slow');
    const started = Date.now();
    await push(['master']);
    expect(Date.now() - started).toBeLessThan(TIMEOUT);
    expect(deliveries(hook)[0]).toMatchObject({ status: 'pending', last_error: null });
    await waitUntil(() => deliveries(hook)[0].last_error !== null, 'a timed out attempt');
    expect(deliveries(hook)[0]).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, last_error: `timed out after ${TIMEOUT} ms` });
  });
});

describe('retries', () => {
  it('retries a failing receiver with backoff: 500, 500, 200 -> one delivered row, three attempts, never sent again', async () => {
    recv.on('/flaky', (n) => (n <= 2 ? 500 : 200));
    const hook = await addHook('/flaky');
    await commitFiles(work, { 'flaky.txt': '1\n' }, 'Flaky');
    await push(['master']);
    await waitUntil(settled(hook), 'the flaky delivery');
    const rows = deliveries(hook);
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
    expect(deliveries(hook)[0].attempts).toBe(3);
  });

  it('gives up after the last attempt (failed) and records the status code', async () => {
    recv.on('/down', () => 503);
    const hook = await addHook('/down');
    await commitFiles(work, { 'down.txt': '1\n' }, 'Down');
    await push(['master']);
    await waitUntil(settled(hook), 'the failed delivery');
    expect(deliveries(hook)[0]).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, last_status_code: 503, last_error: 'HTTP 503', delivered_at: null });
    await sleep(retryDelay(3, BASE) * 2);
    expect(recv.to('/down')).toHaveLength(MAX_ATTEMPTS);
  });

  it('records network errors (connection refused) and retries them', async () => {
    const closed = await startReceiver({ listen: false });
    const hook = await addHook('/refused', {}, closed.url);
    await commitFiles(work, { 'refused.txt': '1\n' }, 'Refused');
    await push(['master']);
    await waitUntil(settled(hook), 'the refused delivery');
    expect(deliveries(hook)[0]).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, last_status_code: null });
    expect(deliveries(hook)[0].last_error).toMatch(/ECONNREFUSED/);
  });
});

describe('SSL verification', () => {
  it('refuses a self-signed certificate unless enable_ssl_verification is false', async () => {
    const tls = await startReceiver({ https: true });
    try {
      const verified = await addHook('/verified', {}, tls.url);
      const unverified = await addHook('/unverified', { enable_ssl_verification: false }, tls.url);
      await commitFiles(work, { 'tls.txt': '1\n' }, 'TLS');
      await push(['master']);
      await waitUntil(settled(unverified), 'the unverified delivery');
      expect(deliveries(unverified)[0]).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
      expect(tls.to('/unverified')).toHaveLength(1);
      await waitUntil(() => deliveries(verified)[0].last_error !== null, 'the verified attempt');
      expect(deliveries(verified)[0].last_error).toMatch(/self[- ]signed|certificate/i);
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
    let queued = 0;
    inTx((tx) => {
      for (const event of HOOK_EVENTS) queued += queueHookDeliveries(tx, project.id, event, { object_kind: event, marker: `m-${event}` });
    });
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
    expect(deliveries(none)).toEqual([]);
  });

  it('queues nothing when the transaction rolls back', async () => {
    const hook = await addHook('/rollback', { issues_events: true });
    expect(() => inTx((tx) => {
      queueHookDeliveries(tx, project.id, 'issue', { object_kind: 'issue' });
      throw new Error('boom');
    })).toThrow('boom');
    await sleep(100);
    expect(deliveries(hook)).toEqual([]);
    expect(recv.to('/rollback')).toEqual([]);
  });

  it('sends each delivery once with two workers on the same database, a few at a time', async () => {
    recv.on('/many', () => sleep(60).then(() => 200));
    const hook = await addHook('/many', { push_events: false, pipeline_events: true });
    const second = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, concurrency: 3, log: () => undefined });
    try {
      inTx((tx) => {
        for (let i = 0; i < 15; i++) queueHookDeliveries(tx, project.id, 'pipeline', { object_kind: 'pipeline', n: i });
      });
      await waitUntil(settled(hook, 15), 'fifteen deliveries');
      const ns = recv.to('/many').map((r) => r.json().n).sort((a, b) => a - b);
      expect(ns).toEqual([...Array(15).keys()]);
      // distinct deliveries have distinct keys
      expect(new Set(recv.to('/many').map((r) => r.headers['idempotency-key'])).size).toBe(15);
      expect(deliveries(hook).every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true);
      expect(recv.maxActive).toBeGreaterThan(1);
      expect(recv.maxActive).toBeLessThanOrEqual(6);
    } finally {
      second.stop();
    }
  });

  it('resends a row whose sender died after its lease; never a delivered row, never a row under a live lease', async () => {
    const hook = await addHook('/lease', { push_events: false, note_events: true });
    inTx((tx) => { queueHookDeliveries(tx, project.id, 'note', { object_kind: 'note', n: 'first' }); });
    await waitUntil(settled(hook), 'the first delivery');
    const db = s.ctx.db.$client;
    const past = new Date(Date.now() - 60_000).toISOString();
    // A delivered row that looks due is left alone.
    db.prepare('UPDATE hook_deliveries SET next_attempt_at = ? WHERE hook_id = ?').run(past, hook);
    // A crashed sender's row (lease over) and a live sender's row (lease running).
    const insert = db.prepare(`INSERT INTO hook_deliveries (hook_id, event, payload, status, attempts, next_attempt_at, locked_at, created_at)
      VALUES (?, 'note', ?, 'pending', 1, ?, ?, ?)`);
    insert.run(hook, JSON.stringify({ n: 'crashed' }), new Date(Date.now() - 1).toISOString(), past, past);
    insert.run(hook, JSON.stringify({ n: 'leased' }), new Date(Date.now() + 3600_000).toISOString(), new Date().toISOString(), past);
    worker.wake();
    await waitUntil(() => recv.to('/lease').length === 2, 'the crashed row');
    await sleep(200);
    expect(recv.to('/lease').map((r) => r.json().n)).toEqual(['first', 'crashed']);
    const rows = deliveries(hook);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([['delivered', 1], ['delivered', 2], ['pending', 1]]);
  });

  it('deleting a hook deletes its deliveries', async () => {
    const hook = await addHook('/gone', { push_events: false, build_events: true });
    recv.on('/gone', () => 500);
    inTx((tx) => { queueHookDeliveries(tx, project.id, 'build', { object_kind: 'build' }); });
    await waitUntil(() => deliveries(hook).length === 1 && deliveries(hook)[0].attempts >= 1, 'an attempt');
    expect((await s.api('DELETE', `/projects/${project.id}/hooks/${hook}`, alice)).status).toBe(200);
    expect(deliveries(hook)).toEqual([]);
  });
});

describe('stopping', () => {
  it('hands a delivery in flight back on stop (pending, due, attempt not counted); the next worker sends it', async () => {
    worker.stop();
    const hook = await addHook('/stop', { push_events: false, merge_requests_events: true });
    recv.on('/stop', (n) => (n === 1 ? 'hang' : 200));
    const first = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, timeoutMs: 10_000, log: () => undefined });
    inTx((tx) => { queueHookDeliveries(tx, project.id, 'merge_request', { object_kind: 'merge_request' }); });
    await waitUntil(() => recv.to('/stop').length === 1, 'the hanging attempt');
    expect(deliveries(hook)[0]).toMatchObject({ status: 'pending', attempts: 1 });
    expect(deliveries(hook)[0].locked_at).not.toBeNull();
    first.stop();
    const [row] = deliveries(hook);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, locked_at: null });
    expect(Date.parse(row.next_attempt_at)).toBeLessThanOrEqual(Date.now());
    worker = startHookDeliveryWorker(s.ctx, { retryBaseMs: BASE, maxAttempts: MAX_ATTEMPTS, timeoutMs: TIMEOUT, log: () => undefined });
    await waitUntil(settled(hook), 'the handed back delivery');
    expect(deliveries(hook)[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(recv.to('/stop')).toHaveLength(2);
  });
});
